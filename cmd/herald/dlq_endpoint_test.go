package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/deadletter"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

const (
	dlqEpA = "ep_01jekz5v8n3q4r5s6t7v8w9x0a"
	dlqEpB = "ep_01jekz5v8n3q4r5s6t7v8w9x0b"
)

// putEndpointLetter puts the dead letter herald writes of a delivery of
// id to endpoint ep of tenant, failed at failedAt.
func putEndpointLetter(t *testing.T, w *sqstest.Server, id, tenant, ep string, failedAt time.Time) {
	t.Helper()
	body := fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","tenant":%q,"event_id":"evt_1","webhook":{"endpoint":%q,"event_type":"invoice.paid","payload":{}}}`, id, tenant, ep)
	reason, err := json.Marshal(redrive.Reason{Outcome: "permanent_failure", ErrorClass: "endpoint_disabled", Attempts: 1,
		FailedAt: failedAt.UTC().Format(time.RFC3339Nano), NotificationID: id, Channel: "webhook", SourceMessageID: "src-" + id})
	require.NoError(t, err)
	w.Put(w.URL()+"/dlq", body, failedAt, map[string]sqstest.MessageAttribute{
		redrive.AttrReason:     {DataType: "String", StringValue: aws.String(string(reason))},
		redrive.AttrErrorClass: {DataType: "String", StringValue: aws.String("endpoint_disabled")},
		redrive.AttrTenant:     {DataType: "String", StringValue: aws.String(tenant)},
		redrive.AttrEndpoint:   {DataType: "String", StringValue: aws.String(ep)},
	})
}

// TestDLQEndpointFilters: ls by tenant, by endpoint, by --since (a time,
// inclusive, or an age), with no match; redrive --endpoint --since resends
// only that endpoint's letters since T, without herald's attributes.
func TestDLQEndpointFilters(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q")
	now := time.Unix(1_800_000_000, 0) // heraldCtx's clock
	t0 := now.Add(-3 * time.Hour)
	putEndpointLetter(t, w, "a-early", "acme", dlqEpA, t0.Add(-time.Minute))
	putEndpointLetter(t, w, "a-at", "acme", dlqEpA, t0)
	putEndpointLetter(t, w, "a-late", "acme", dlqEpA, t0.Add(time.Hour))
	putEndpointLetter(t, w, "b-late", "acme", dlqEpB, t0.Add(time.Hour))
	putEndpointLetter(t, w, "g-late", "globex", "ep_01jekz5v8n3q4r5s6t7v8w9x0c", t0.Add(time.Hour))
	w.Put(w.URL()+"/dlq", `{"version":1,"id":"inline","channel":"webhook","webhook":{"url":"https://h.example/x"}}`, t0.Add(time.Hour), nil)

	ls := func(args ...string) []string {
		t.Helper()
		r := heraldCtx(context.Background(), append([]string{"dlq", "ls", "--json", "--dlq-url", w.URL() + "/dlq"}, args...)...)
		require.Equal(t, exitOK, r.code, "%+v", r)
		var letters []deadletter.Letter
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &letters))
		var ids []string
		for _, l := range letters {
			ids = append(ids, l.NotificationID)
		}
		slices.Sort(ids)
		return ids
	}
	require.Equal(t, []string{"a-at", "a-early", "a-late", "b-late"}, ls("--tenant", "acme"))
	require.Equal(t, []string{"g-late"}, ls("--tenant", "globex"))
	require.Equal(t, []string{"b-late"}, ls("--endpoint", dlqEpB))
	require.Equal(t, []string{"a-at", "a-late"}, ls("--endpoint", dlqEpA, "--since", t0.UTC().Format(time.RFC3339)))
	require.Equal(t, []string{"a-late"}, ls("--endpoint", dlqEpA, "--since", t0.Add(time.Second).UTC().Format(time.RFC3339)))
	require.Equal(t, []string{"a-late", "b-late", "g-late", "inline"}, ls("--since", "2h30m"), "an age: since now-2h30m")
	require.Empty(t, ls("--tenant", "initech"))
	require.Empty(t, ls("--tenant", "globex", "--endpoint", dlqEpA))

	// A tenant or endpoint no letter can have is a usage error, not an
	// empty list that reads as "nothing failed" (a tenant id with a space
	// or a slash, pasted from somewhere else; an endpoint id in upper case).
	for _, bad := range [][]string{{"--endpoint", "acme"}, {"--endpoint", "EP_01JEKZ5V8N3Q4R5S6T7V8W9X0Y"}, {"--since", "yesterday"}, {"--since", "-2h"},
		{"--since", "2026-12-04"}, {"--tenant", "acme corp"}, {"--tenant", "acme/eu"}, {"--tenant", strings.Repeat("a", 129)}} {
		r := heraldCtx(context.Background(), append([]string{"dlq", "ls", "--dlq-url", w.URL() + "/dlq"}, bad...)...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", bad, r)
	}

	r := heraldCtx(context.Background(), "dlq", "show", "a-at", "--endpoint", dlqEpA, "--dlq-url", w.URL()+"/dlq")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "tenant:          acme\n")
	require.Contains(t, r.stdout, "endpoint:        "+dlqEpA+"\n")
	r = heraldCtx(context.Background(), "dlq", "show", "a-at", "--endpoint", dlqEpB, "--dlq-url", w.URL()+"/dlq")
	require.Equal(t, exitFailed, r.code, "another endpoint's filter finds no such letter: %+v", r)

	r = heraldCtx(context.Background(), "dlq", "redrive", "--endpoint", dlqEpA, "--since", t0.UTC().Format(time.RFC3339),
		"--dlq-url", w.URL()+"/dlq", "--queue-url", w.URL()+"/q")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "sent 2, skipped 4, failed 0")
	var sent []string
	for _, m := range w.Messages(w.URL() + "/q") {
		var b struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(m.Body), &b))
		sent = append(sent, b.ID)
		for name := range m.MsgAttrs {
			require.False(t, redrive.HeraldAttribute(name), "herald's %s is not sent back", name)
		}
	}
	slices.Sort(sent)
	require.Equal(t, []string{"a-at", "a-late"}, sent)
	require.Equal(t, []string{"a-early", "b-late", "g-late", "inline"}, ls())
}
