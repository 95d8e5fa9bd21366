package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// The local stack's endpoint store, as localstack/init/ready.d/provision.py
// makes it: template.yaml's StoreTable (with its tenant index) and
// EndpointKey.
const (
	demoStoreTable  = "herald-store"
	demoEndpointKey = "alias/herald-endpoints"
)

// demoEndpoint is one endpoint the demo registers for its tenant.
type demoEndpoint struct {
	name   string // the demo's label
	kind   endpoint.Kind
	path   string // on its receiver
	filter []string
	ep     endpoint.Endpoint // as registered
}

// demoEvent is one event the demo sends for its tenant.
type demoEvent struct {
	typ      string
	id       string
	expected []string // the names of the endpoints it reaches; none: no_subscribers
}

// endpointsDemo is the demo's registered endpoints part: a tenant of its
// own (new each run, so that no endpoint of an earlier run is reached) with
// two webhook endpoints and a Slack one, and the events sent for it.
type endpointsDemo struct {
	tenant    string
	endpoints []*demoEndpoint
	events    []*demoEvent
}

// newEndpointsDemo describes the part of the run started at: invoice.paid
// reaches two endpoints (billing's invoice.* and ops' exact
// invoice.paid), order.created one, customer.deleted none.
func newEndpointsDemo(started time.Time) *endpointsDemo {
	run := strconv.FormatInt(started.UnixNano(), 36)
	d := &endpointsDemo{
		tenant: "acme-" + run,
		endpoints: []*demoEndpoint{
			{name: "billing", kind: endpoint.KindWebhook, path: "/acme/billing", filter: []string{"invoice.*"}},
			{name: "orders", kind: endpoint.KindWebhook, path: "/acme/orders", filter: []string{"order.created"}},
			{name: "ops", kind: endpoint.KindSlack, path: "/services/T0DEMO/B0DEMO/acme-ops", filter: []string{"invoice.paid"}},
		},
	}
	for i, e := range []struct {
		typ string
		to  []string
	}{
		{"invoice.paid", []string{"billing", "ops"}},
		{"order.created", []string{"orders"}},
		{"customer.deleted", nil},
	} {
		d.events = append(d.events, &demoEvent{typ: e.typ, id: fmt.Sprintf("evt_demo_%s_%d", run, i+1), expected: e.to})
	}
	return d
}

// register creates the demo's endpoints in the local stack's endpoint
// store, webhooks at receiverURL and the Slack one at slackURL.
func (d *endpointsDemo) register(ctx context.Context, awsCfg aws.Config, table, key, receiverURL, slackURL string) (*endpoint.Table, error) {
	t, err := endpoint.NewTable(endpoint.TableConfig{
		Table: table, KeyID: key, DB: dynamodb.NewFromConfig(awsCfg), KMS: kms.NewFromConfig(awsCfg),
		URLRules: endpoint.URLRules{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix(demoAllowCIDR)}, ChatAllowHosts: []string{demoChatHost}},
	})
	if err != nil {
		return nil, err
	}
	for _, e := range d.endpoints {
		base := receiverURL
		if e.kind != endpoint.KindWebhook {
			base = slackURL
		}
		created, err := t.Create(ctx, endpoint.Endpoint{
			Tenant: d.tenant, Kind: e.kind, URL: base + e.path, EventTypes: e.filter,
			Description: "herald demo: " + e.name,
		})
		if err != nil {
			return nil, fmt.Errorf("register the demo's %s endpoint in table %s (is the local stack provisioned? run make local-up): %w", e.name, table, err)
		}
		e.ep = created
	}
	return t, nil
}

// body is the event's message on the event queue.
func (d *endpointsDemo) body(e *demoEvent) string {
	b, _ := json.Marshal(notification.Message{
		Version: notification.Version, ID: e.id, Channel: notification.ChannelEvent,
		Event: &notification.Event{Tenant: d.tenant, Type: e.typ, Payload: json.RawMessage(`{"demo":true,"type":"` + e.typ + `"}`)},
	})
	return string(b)
}

// send puts the events on the event queue.
func (d *endpointsDemo) send(ctx context.Context, c *sqs.Client, queueURL string) error {
	for _, e := range d.events {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(d.body(e))}); err != nil {
			return fmt.Errorf("send event %s: %w", e.typ, err)
		}
	}
	return nil
}

// endpoint returns the demo's endpoint named name.
func (d *endpointsDemo) endpoint(name string) *demoEndpoint {
	for _, e := range d.endpoints {
		if e.name == name {
			return e
		}
	}
	return nil
}

// allFinal reports whether every event has its fan-out's final line and
// every delivery it was to make its final outcome.
func (d *endpointsDemo) allFinal(f *fates) bool {
	for _, e := range d.events {
		if !fannedOut(f.byID(e.id)) {
			return false
		}
		for _, name := range e.expected {
			h := f.byID(endpoint.DeliveryID(e.id, d.endpoint(name).ep.ID))
			if len(h) == 0 || !final(h[len(h)-1]) {
				return false
			}
		}
	}
	return true
}

// fanoutLine returns the event's last fan-out line, nil when none.
func fanoutLine(h []map[string]any) map[string]any {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i]["msg"] == fanout.LineFanout {
			return h[i]
		}
	}
	return nil
}

func fannedOut(h []map[string]any) bool {
	l := fanoutLine(h)
	return l != nil && (l["fanout"] == fanout.OutcomeFannedOut || l["fanout"] == fanout.OutcomeNoSubscribers)
}

// report prints the endpoints registered, each event's fan-out and each
// delivery's fate per endpoint, with whether each is the expected one; a
// webhook delivery is expected to carry a signature that verifies with its
// endpoint's own secret. It returns false when one is not as expected.
func (d *endpointsDemo) report(w io.Writer, f *fates, requests []localenv.Request) bool {
	fmt.Fprintf(w, "\nRegistered endpoints of tenant %s (the local stack's endpoint store: DynamoDB %s, secrets sealed with KMS %s):\n", d.tenant, demoStoreTable, demoEndpointKey)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ENDPOINT\tKIND\tEVENT TYPES\tID")
	for _, e := range d.endpoints {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", e.name, e.kind, strings.Join(e.filter, ","), e.ep.ID)
	}
	tw.Flush()

	allOK := true
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EVENT\tTO ENDPOINT\tFATE\tAS EXPECTED")
	for _, e := range d.events {
		l := fanoutLine(f.byID(e.id))
		fate, want := "no fan-out yet", fanout.OutcomeNoSubscribers
		if len(e.expected) > 0 {
			want = fmt.Sprintf("%s, %s", fanout.OutcomeFannedOut, deliveries(len(e.expected)))
		}
		if l != nil {
			fate = fmt.Sprint(l["fanout"])
			if l["fanout"] == fanout.OutcomeFannedOut {
				n, _ := l["total"].(float64) // JSON's number
				fate = fmt.Sprintf("%s, %s", l["fanout"], deliveries(int(n)))
			}
		}
		allOK = row(tw, e.typ+" "+e.id, "(fan-out)", fate, fate == want, want) && allOK
		for _, name := range e.expected {
			de := d.endpoint(name)
			id := endpoint.DeliveryID(e.id, de.ep.ID)
			fate, ok := describe(f.byID(id), "delivered")
			want := "delivered"
			if de.kind == endpoint.KindWebhook {
				want = "delivered, signed with the endpoint's own secret"
				if err := verified(requests, id, de.ep); err != nil {
					fate, ok = fate+"; signature: "+err.Error(), false
				} else {
					fate += ", verified with its own secret"
				}
			}
			allOK = row(tw, "", name+" ("+string(de.kind)+")", fate, ok, want) && allOK
		}
	}
	tw.Flush()
	return allOK
}

// row writes one row of the events' table; ok says whether fate is the
// expected one, want.
func row(tw io.Writer, event, to, fate string, ok bool, want string) bool {
	m := "yes"
	if !ok {
		m = "NO, expected: " + want
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", event, to, fate, m)
	return ok
}

// verified checks the request the receiver got for delivery id with the
// endpoint's own secret, as its receiver would (docs/endpoints-guide.md).
func verified(requests []localenv.Request, id string, ep endpoint.Endpoint) error {
	var keys [][]byte
	for _, s := range ep.Secrets {
		keys = append(keys, s.Key)
	}
	for _, r := range requests {
		if r.Header.Get(webhook.HeaderID) != id {
			continue
		}
		ts, err := strconv.ParseInt(r.Header.Get(webhook.HeaderTimestamp), 10, 64)
		if err != nil {
			return fmt.Errorf("webhook-timestamp %q", r.Header.Get(webhook.HeaderTimestamp))
		}
		return webhook.Verify(keys, id, time.Unix(ts, 0), r.Body, r.Header.Get(webhook.HeaderSignature), time.Now(), webhook.DefaultTolerance)
	}
	return fmt.Errorf("no request")
}

// deliveries is "1 delivery", "2 deliveries".
func deliveries(n int) string {
	if n == 1 {
		return "1 delivery"
	}
	return fmt.Sprintf("%d deliveries", n)
}
