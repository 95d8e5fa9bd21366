package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/kmstest"
	"github.com/heraldhq/herald/notification"
)

// setupEndpointStore adds the local stack's event queue, its store table
// (with the tenant index) and its endpoint key, as provision.py makes them,
// to the demo's wire fakes.
func setupEndpointStore(t *testing.T, s *localStack) *dynamotest.Server {
	base := s.sqs.URL() + "/123456789012/herald-event"
	s.sqs.AddQueue(base+"-dlq", nil)
	s.sqs.AddQueue(base, map[string]string{"VisibilityTimeout": "30",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:herald-event-dlq","maxReceiveCount":5}`})
	db := dynamotest.New(t)
	db.AddTable(demoStoreTable, store.AttrPK, store.AttrSK)
	db.AddIndex(demoStoreTable, endpoint.TenantIndex, endpoint.AttrGSI1PK, endpoint.AttrGSI1SK, []string{endpoint.AttrEventTypes, endpoint.AttrDisabledAt, endpoint.AttrKind})
	k := kmstest.New(t)
	k.CreateKey(demoEndpointKey)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", db.URL())
	t.Setenv("AWS_ENDPOINT_URL_KMS", k.URL())
	return db
}

// TestRunRegisteredEndpoints: with the event queue and the endpoint store
// there, the demo registers three endpoints of a tenant of its own in the
// store (their secrets sealed), sends three events and reports per event
// its fan-out and per endpoint its delivery's fate: invoice.paid to the
// invoice.* webhook and the Slack endpoint, order.created to the other
// webhook, customer.deleted to none (no_subscribers); each webhook request
// verified with its endpoint's own secret.
func TestRunRegisteredEndpoints(t *testing.T) {
	s := setupStack(t, "5")
	db := setupEndpointStore(t, s)
	out, logPath, err := runDemo(t, casesDir, 10*time.Second)
	require.NoError(t, err, out)
	require.Contains(t, out, "             3 events for 3 registered endpoints → herald-event, fanned out to their queues\n")
	require.Contains(t, out, "Every notification met its expected fate.")
	require.NotContains(t, out, "NO, expected")

	tenant := regexp.MustCompile(`Registered endpoints of tenant (acme-[0-9a-z]+) `).FindStringSubmatch(out)
	require.NotNil(t, tenant, out)
	squeeze := func(l string) string { return strings.Join(strings.Fields(l), " ") }
	var rows []string
	_, table, _ := strings.Cut(out, "\nEVENT ")
	for _, l := range strings.Split(table, "\n")[1:] {
		if l == "" {
			break
		}
		rows = append(rows, squeeze(regexp.MustCompile(`evt_demo_[0-9a-z]+_`).ReplaceAllString(l, "evt_demo_N_")))
	}
	require.Equal(t, []string{
		"invoice.paid evt_demo_N_1 (fan-out) fanned_out, 2 deliveries yes",
		"billing (webhook) delivered on receive 1, verified with its own secret yes",
		"ops (slack) delivered on receive 1 yes",
		"order.created evt_demo_N_2 (fan-out) fanned_out, 1 delivery yes",
		"orders (webhook) delivered on receive 1, verified with its own secret yes",
		"customer.deleted evt_demo_N_3 (fan-out) no_subscribers yes",
	}, rows)
	require.Contains(t, out, "Webhook receiver got 6 requests.", "the 4 inline webhook requests and one per webhook endpoint")

	// The endpoints are the store's: three of the tenant, each secret sealed.
	n := 0
	str := func(it map[string]any, name string) any { a, _ := it[name].(map[string]any); return a["S"] }
	for _, it := range db.Items(demoStoreTable) {
		if str(it, "type") == "endpoint" {
			n++
			require.Equal(t, tenant[1], str(it, "tenant"))
			require.NotContains(t, it, "secrets")
			require.Contains(t, it, "sealed")
		}
	}
	require.Equal(t, 3, n)
	// The deliveries the fan-out made, one per subscribed endpoint, went
	// through the deliver function under their ids DeliveryID(event, endpoint).
	idOf := func(name string) string {
		m := regexp.MustCompile(`\n  ` + name + ` .* (ep_[0-9a-z]{26})\n`).FindStringSubmatch(out)
		require.NotNil(t, m, name)
		return m[1]
	}
	evt := regexp.MustCompile(`evt_demo_[0-9a-z]+_`).FindString(out)
	want := map[string]bool{
		endpoint.DeliveryID(evt+"1", idOf("billing")): true, endpoint.DeliveryID(evt+"1", idOf("ops")): true,
		endpoint.DeliveryID(evt+"2", idOf("orders")): true,
	}
	log, err := readLines(logPath)
	require.NoError(t, err)
	delivered := 0
	for _, l := range log {
		if id, _ := l["id"].(string); want[id] && l["outcome"] == "delivered" {
			delivered++
			require.Contains(t, []any{string(notification.ChannelWebhook), string(notification.ChannelChat)}, l["channel"])
		}
	}
	require.Equal(t, 3, delivered, "one delivery per subscribed endpoint")
}

// TestEndpointsDemoWithoutEventQueue: without the event queue (a stack
// provisioned before events) the demo runs its samples as before and says
// nothing of endpoints.
func TestEndpointsDemoWithoutEventQueue(t *testing.T) {
	setupStack(t, "5")
	out, _, err := runDemo(t, casesDir, 5*time.Second)
	require.NoError(t, err, out)
	require.NotContains(t, out, "registered endpoints")
	require.NotContains(t, out, "Registered endpoints")
}

// readLines reads a JSON lines log.
func readLines(path string) ([]map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out, nil
}
