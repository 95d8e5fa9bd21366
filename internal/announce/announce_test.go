package announce_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/eventbridgetest"
)

var ctx = context.Background()

func TestNewRequiresAnAPIAndABus(t *testing.T) {
	t.Parallel()
	eb := eventbridgetest.New(t)
	_, err := announce.New(nil, "default")
	require.ErrorContains(t, err, "an API and a bus are required")
	_, err = announce.New(eb.Client(), "")
	require.ErrorContains(t, err, "an API and a bus are required")
	p, err := announce.New(eb.Client(), "default")
	require.NoError(t, err)
	require.NotNil(t, p)
}

// TestPublishPutsOneEntry: one event on the Publisher's bus (by name or by
// ARN), source "herald", the detail type given and the Event as detail,
// members left out when empty.
func TestPublishPutsOneEntry(t *testing.T) {
	t.Parallel()
	eb := eventbridgetest.New(t)
	eb.AddBus("ops")
	disabled := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	e := announce.Event{
		ID:     "0123456789abcdef0123456789abcdef",
		Origin: "https://hooks.example.com:8443", State: "disabled", DisabledBy: "herald",
		ConsecutiveFailures: 7, LastFailureClass: "webhook_http_5xx",
		FailingSince: announce.Time(disabled.Add(-3 * time.Hour)), LastFailure: announce.Time(disabled),
		DisabledAt: announce.Time(disabled), At: announce.Time(disabled),
	}
	for _, bus := range []string{"ops", "arn:aws:events:us-east-1:123456789012:event-bus/ops"} {
		p, err := announce.New(eb.Client(), bus)
		require.NoError(t, err)
		require.NoError(t, p.Publish(ctx, announce.DestinationDisabled, e))
	}
	require.NoError(t, mustNew(t, eb, "default").Publish(ctx, announce.DestinationRecovered, announce.Event{Origin: "https://a.example", State: "closed", At: "2026-12-01T11:00:00Z"}))

	got := eb.Events()
	require.Len(t, got, 3)
	want := map[string]any{
		"id":     "0123456789abcdef0123456789abcdef",
		"origin": "https://hooks.example.com:8443", "state": "disabled", "disabled_by": "herald",
		"consecutive_failures": float64(7), "last_failure_class": "webhook_http_5xx",
		"failing_since": "2026-12-01T07:00:00Z", "last_failure": "2026-12-01T10:00:00Z",
		"disabled_at": "2026-12-01T10:00:00Z", "at": "2026-12-01T10:00:00Z",
	}
	for _, ev := range got[:2] {
		require.Equal(t, eventbridgetest.Event{Bus: "ops", Source: "herald", DetailType: "destination.disabled", Detail: want}, ev)
	}
	require.Regexp(t, `^[0-9a-f]{32}$`, got[2].Detail["id"], "an event not recorded is given an id")
	require.Equal(t, eventbridgetest.Event{Bus: "default", Source: "herald", DetailType: "destination.recovered", Detail: map[string]any{
		"id": got[2].Detail["id"], "origin": "https://a.example", "state": "closed", "consecutive_failures": float64(0), "at": "2026-12-01T11:00:00Z",
	}}, got[2], "empty members left out, but the failure count")
}

func mustNew(t *testing.T, eb *eventbridgetest.Server, bus string) *announce.Publisher {
	t.Helper()
	p, err := announce.New(eb.Client(), bus)
	require.NoError(t, err)
	return p
}

// TestPublishErrors: a failed call and a refused entry are errors naming
// the event and the origin; EventBridge's error code and message come with
// a refusal.
func TestPublishErrors(t *testing.T) {
	t.Parallel()
	eb := eventbridgetest.New(t)
	e := announce.Event{Origin: "https://hooks.example.com", State: "disabled"}

	eb.Fail(1)
	err := mustNew(t, eb, "default").Publish(ctx, announce.DestinationDisabled, e)
	require.ErrorContains(t, err, "publish destination.disabled of https://hooks.example.com: ")
	require.ErrorContains(t, err, "InternalException")

	err = mustNew(t, eb, "no-such-bus").Publish(ctx, announce.DestinationDisabled, e)
	require.EqualError(t, err, "publish destination.disabled of https://hooks.example.com: refused: ResourceNotFoundException: Event bus no-such-bus does not exist.")
	require.Empty(t, eb.Events())
}

// TestPublishRefusedWithoutEntryResults: an answer that counts a failed
// entry but lists none is still a refusal.
func TestPublishRefusedWithoutEntryResults(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_, _ = w.Write([]byte(`{"FailedEntryCount":1,"Entries":[]}`))
	}))
	t.Cleanup(srv.Close)
	p, err := announce.New(eventbridge.NewFromConfig(awstest.Config(srv.URL)), "default")
	require.NoError(t, err)
	err = p.Publish(ctx, announce.DestinationDisabled, announce.Event{Origin: "https://a.example"})
	require.EqualError(t, err, "publish destination.disabled of https://a.example: refused: no entry result")
}

// TestPublishEntrySize: an entry of exactly MaxEntryBytes as EventBridge
// counts it (source, detail type, detail) is put; a byte more is refused
// before any call.
func TestPublishEntrySize(t *testing.T) {
	t.Parallel()
	eb := eventbridgetest.New(t)
	p := mustNew(t, eb, "default")
	const id = "0123456789abcdef0123456789abcdef"
	empty, err := json.Marshal(announce.Event{ID: id, Origin: "https://"})
	require.NoError(t, err)
	fill := announce.MaxEntryBytes - len(announce.Source) - len(announce.DestinationDisabled) - len(empty)
	exact := announce.Event{ID: id, Origin: "https://" + strings.Repeat("a", fill)}
	require.NoError(t, p.Publish(ctx, announce.DestinationDisabled, exact))
	require.Len(t, eb.Events(), 1)

	over := announce.Event{Origin: exact.Origin + "a"}
	err = p.Publish(ctx, announce.DestinationDisabled, over)
	require.ErrorContains(t, err, "entry of 262145 bytes, above 262144")
	require.Len(t, eb.Events(), 1, "no call")
}

// TestTime: RFC 3339 in UTC, to the second; "" for the zero time.
func TestTime(t *testing.T) {
	t.Parallel()
	require.Empty(t, announce.Time(time.Time{}))
	at := time.Date(2026, 12, 1, 12, 30, 15, 999, time.FixedZone("CET", 3600))
	require.Equal(t, "2026-12-01T11:30:15Z", announce.Time(at))
}
