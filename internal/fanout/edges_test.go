package fanout_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/internal/store"
)

// timeLeft is a context whose deadline is always left from now, read
// afresh at each call, and which is never done: an invocation whose time
// left stays where a test puts it, with no timer and no real wait.
type timeLeft struct {
	context.Context
	left time.Duration
}

func (c timeLeft) Deadline() (time.Time, bool) { return time.Now().Add(c.left), true }

// progressItem is the progress item of event id, as the table holds it.
func (b *bundle) progressItem(t *testing.T, id string) map[string]any {
	t.Helper()
	for _, it := range b.db.Items(table) {
		if pk, _ := it[store.AttrPK].(map[string]any); pk["S"] == "event#"+id {
			return it
		}
	}
	t.Fatalf("no progress item of event %s", id)
	return nil
}

// numberAttr is the number attribute name of item, or fails the test.
func numberAttr(t *testing.T, item map[string]any, name string) int64 {
	t.Helper()
	v, ok := item[name].(map[string]any)
	require.True(t, ok, "attribute %s is set: %v", name, item)
	n, err := strconv.ParseInt(v["N"].(string), 10, 64)
	require.NoError(t, err)
	return n
}

// TestDefaultStopBefore: with Config.StopBefore unset, an invocation whose
// time left is 10 s (DefaultStopBefore) hands on after its first batch;
// one with 10 s and a second left does not.
func TestDefaultStopBefore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.endpoints(t, 25, endpoint.KindWebhook)
	require.Zero(t, b.cfg.StopBefore)
	require.NoError(t, b.f.Send(timeLeft{context.Background(), 10 * time.Second}, event("evt_default_stop")))
	require.Len(t, b.deliveries(t), 10, "one batch, then handed on")
	require.Len(t, b.sqs.Messages(b.evtQ), 1, "the event put back")
	require.Equal(t, fanout.OutcomeContinued, b.logs.lines(t)[0]["fanout"])

	require.NoError(t, b.f.Send(timeLeft{context.Background(), 11 * time.Second}, event("evt_default_stop")))
	require.Len(t, b.deliveries(t), 25, "the rest in one invocation")
	require.Len(t, b.sqs.Messages(b.evtQ), 1, "not put back again")
}

// TestStopBeforeAtMost: time left equal to StopBefore is short ("at
// most"): the longest time left a deadline can give (time.Until saturates
// at the largest Duration) with StopBefore that largest Duration hands on.
func TestStopBeforeAtMost(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.endpoints(t, 15, endpoint.KindWebhook)
	b.cfg.StopBefore = time.Duration(math.MaxInt64)
	b.rebuild(t)
	far := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	require.Equal(t, b.cfg.StopBefore, time.Until(far), "the time left saturates")
	ctx, cancel := context.WithDeadline(context.Background(), far)
	defer cancel()
	require.NoError(t, b.f.Send(ctx, event("evt_at_most")))
	require.Len(t, b.deliveries(t), 10, "one batch, then handed on")
	require.Len(t, b.sqs.Messages(b.evtQ), 1)
}

// TestProgressItemWindow: the progress item expires (DynamoDB's time to
// live, Unix seconds) Config.Window after its last write: 24 h by default,
// the window configured otherwise.
func TestProgressItemWindow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.endpoints(t, 1, endpoint.KindWebhook)
	require.NoError(t, b.f.Send(context.Background(), event("evt_window_default")))
	require.Equal(t, b.clock.Now().Add(24*time.Hour).Unix(), numberAttr(t, b.progressItem(t, "evt_window_default"), store.AttrExpiresAt))

	b.cfg.Window = time.Hour
	b.rebuild(t)
	require.NoError(t, b.f.Send(context.Background(), event("evt_window_hour")))
	require.Equal(t, b.clock.Now().Add(time.Hour).Unix(), numberAttr(t, b.progressItem(t, "evt_window_hour"), store.AttrExpiresAt))
}

// TestLeaseGivenUp: a hand-on and a finished fan-out write lease_until 0
// (docs/endpoints.md: "0 once given up"), not the time of the write.
func TestLeaseGivenUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := b.endpoints(t, 15, endpoint.KindWebhook)
	m := event("evt_given_up")
	require.NoError(t, b.f.Send(timeLeft{context.Background(), 0}, m))
	require.Len(t, b.sqs.Messages(b.evtQ), 1, "handed on")
	item := b.progressItem(t, "evt_given_up")
	require.Equal(t, fanout.StateInProgress, item[store.AttrState].(map[string]any)["S"])
	require.Zero(t, numberAttr(t, item, store.AttrLeaseUntil))

	require.NoError(t, b.f.Send(context.Background(), m))
	item = b.progressItem(t, "evt_given_up")
	require.Equal(t, fanout.StateDone, item[store.AttrState].(map[string]any)["S"])
	require.Zero(t, numberAttr(t, item, store.AttrLeaseUntil))
	exactlyOnce(t, b.deliveries(t), "evt_given_up", ids)
}

// TestRetryAfterTheLease: a copy that finds another copy's lease running
// is told to come back when it ends, and the error says in how long.
func TestRetryAfterTheLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.endpoints(t, 15, endpoint.KindWebhook)
	m := event("evt_lease_left")
	// The claim succeeds; the first cursor write fails, and so does the
	// lease's release: the copy dies holding its lease of 60 s.
	b.db.FailAfter("PutItem", 1, 2)
	require.Error(t, b.f.Send(context.Background(), m))
	b.clock.Advance(15 * time.Second)
	err := b.f.Send(context.Background(), m)
	var te *delivery.TransientError
	require.ErrorAs(t, err, &te)
	require.Equal(t, fanout.ClassInProgress, te.Class)
	require.Equal(t, 45*time.Second, te.RetryAfter)
	require.ErrorContains(t, err, "its lease ends in 45000 ms")
}

// failingReader is an endpoint store whose reads fail.
type failingReader struct{ err error }

func (r failingReader) Get(context.Context, string) (endpoint.Endpoint, error) {
	return endpoint.Endpoint{}, r.err
}

// TestOneEndpointReadFails: for an event naming an endpoint, a failing
// read of it is a transient error of the store naming the endpoint; the
// lease is given up, so the retry goes on at once.
func TestOneEndpointReadFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.add(t, "acme", endpoint.KindWebhook, nil, false)
	m := event("evt_read_fails", `"payload"`, `"endpoint":"`+ep+`","payload"`)
	table := b.cfg.Endpoints
	b.cfg.Endpoints = failingReader{errors.New("connection reset")}
	b.rebuild(t)
	err := b.f.Send(context.Background(), m)
	var te *delivery.TransientError
	require.ErrorAs(t, err, &te)
	require.Equal(t, store.ClassUnavailable, te.Class)
	require.ErrorContains(t, err, "read endpoint "+ep)
	require.Empty(t, b.deliveries(t))
	require.Zero(t, numberAttr(t, b.progressItem(t, "evt_read_fails"), store.AttrLeaseUntil), "the lease given up")

	b.cfg.Endpoints = table
	b.rebuild(t)
	require.NoError(t, b.f.Send(context.Background(), m), "no lease to wait for")
	exactlyOnce(t, b.deliveries(t), "evt_read_fails", []string{ep})
}

// TestFIFOChatAndEventQueues: on a FIFO chat queue each chat delivery's
// message group is its endpoint; an event put back on a FIFO event queue
// is a group of its own, the event's id.
func TestFIFOChatAndEventQueues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.ChatQueueURL = b.sqs.AddQueue(b.sqs.URL()+"/123456789012/herald-chat.fifo", map[string]string{"FifoQueue": "true"})
	b.cfg.EventQueueURL = b.sqs.AddQueue(b.sqs.URL()+"/123456789012/herald-event.fifo", map[string]string{"FifoQueue": "true"})
	b.rebuild(t)
	ids := b.endpoints(t, 12, endpoint.KindSlack)
	require.NoError(t, b.f.Send(timeLeft{context.Background(), 0}, event("evt_fifo_chat")))
	require.NoError(t, b.f.Send(context.Background(), event("evt_fifo_chat")))
	msgs := b.sqs.Messages(b.cfg.ChatQueueURL)
	require.Len(t, msgs, 12)
	var groups []string
	for _, m := range msgs {
		groups = append(groups, m.Attributes["MessageGroupId"])
	}
	require.ElementsMatch(t, ids, groups)
	put := b.sqs.Messages(b.cfg.EventQueueURL)
	require.Len(t, put, 1, "put back once")
	require.Equal(t, "evt_fifo_chat", put[0].Attributes["MessageGroupId"])
}

// TestLineNamesEndpointAndDuration: the line of an event naming an endpoint
// names it, a tenant-wide event's line has no endpoint; duration_ms is the
// fan-out's time on the clock, in milliseconds.
func TestLineNamesEndpointAndDuration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.add(t, "acme", endpoint.KindWebhook, nil, false)
	b.reg.onList = func(int) { b.clock.Advance(1500 * time.Millisecond) }
	require.NoError(t, b.f.Send(context.Background(), event("evt_wide")))
	require.NoError(t, b.f.Send(context.Background(), event("evt_named", `"payload"`, `"endpoint":"`+ep+`","payload"`)))
	lines := b.logs.lines(t)
	require.Len(t, lines, 2)
	require.NotContains(t, lines[0], "endpoint")
	require.Equal(t, 1500.0, lines[0]["duration_ms"], "one listing, 1.5 s on the clock")
	require.Equal(t, ep, lines[1]["endpoint"])
	require.Equal(t, 0.0, lines[1]["duration_ms"], "no listing, no time on the clock")
}

// TestResumedPageAllSent: a fan-out handed on after a batch whose
// endpoints after it were then disabled resumes on a page it has all
// sent: it sends nothing more and finishes.
func TestResumedPageAllSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := b.endpoints(t, 15, endpoint.KindWebhook)
	slices.Sort(ids) // the listing's order
	m := event("evt_page_sent")
	require.NoError(t, b.f.Send(timeLeft{context.Background(), 0}, m))
	require.Len(t, b.deliveries(t), 10)
	for _, id := range ids[10:] {
		_, err := b.table.SetDisabled(context.Background(), id, &endpoint.Disabled{Reason: "maintenance", By: "operator"})
		require.NoError(t, err)
	}
	require.NoError(t, b.f.Send(timeLeft{context.Background(), 0}, m))
	exactlyOnce(t, b.deliveries(t), "evt_page_sent", ids[:10])
	lines := b.logs.lines(t)
	require.Len(t, lines, 2)
	require.Equal(t, fanout.OutcomeFannedOut, lines[1]["fanout"])
	require.Equal(t, 0.0, lines[1]["DeliveriesEnqueued"])
	require.Equal(t, 10.0, lines[1]["total"])
	require.Len(t, b.sqs.Messages(b.evtQ), 1, "not put back again")
}
