package announce_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/eventbridgetest"
)

const (
	throttled = eventbridgetest.CodeThrottling
	internal  = eventbridgetest.CodeInternalFailure
)

// TestPublishRetriesRefusedEntries: an entry EventBridge refuses with a
// retryable code (ThrottlingException, InternalFailure) is sent again, up
// to the attempts set; a refusal of another kind is not retried; the
// waits double from the base.
func TestPublishRetriesRefusedEntries(t *testing.T) {
	t.Parallel()
	e := announce.Event{Origin: "https://hooks.example.com", State: "disabled", At: "2026-12-01T10:00:00Z"}
	for _, tt := range []struct {
		name   string
		refuse []string
		calls  int
		err    string
	}{
		{name: "accepted at once", calls: 1},
		{name: "throttled once", refuse: []string{throttled}, calls: 2},
		{name: "internal failure once", refuse: []string{internal}, calls: 2},
		{name: "refused three times, the fourth taken", refuse: []string{throttled, internal, throttled}, calls: 4},
		{name: "refused on every attempt", refuse: []string{throttled, throttled, internal, throttled}, calls: 4, err: "refused on each of 4 attempts, the last: ThrottlingException"},
		{name: "not retryable", refuse: []string{"AccessDeniedException"}, calls: 1, err: "refused: AccessDeniedException"},
		{name: "not retryable after a throttle", refuse: []string{throttled, "MalformedDetail"}, calls: 2, err: "refused: MalformedDetail"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eb := eventbridgetest.New(t)
			eb.Refuse(tt.refuse...)
			p, err := announce.New(eb.Client(), "default", announce.WithRetries(4, time.Millisecond))
			require.NoError(t, err)
			start := time.Now()
			err = p.Publish(context.Background(), announce.DestinationDisabled, e)
			require.Equal(t, tt.calls, eb.Calls())
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				require.ErrorContains(t, err, "https://hooks.example.com")
				require.Empty(t, eb.Events())
				return
			}
			require.NoError(t, err)
			require.Len(t, eb.Events(), 1, "one event, however many calls")
			// Waits of 1, 2, 4 ms: at least their sum, by the wall clock.
			require.GreaterOrEqual(t, time.Since(start), time.Duration(1<<(tt.calls-1)-1)*time.Millisecond)
		})
	}
}

// TestPublishRetriesWithinTheDeadline: a retry whose wait would end after
// the context's deadline is not made; a context cancelled during a wait
// ends it.
func TestPublishRetriesWithinTheDeadline(t *testing.T) {
	t.Parallel()
	e := announce.Event{Origin: "https://hooks.example.com", At: "2026-12-01T10:00:00Z"}
	eb := eventbridgetest.New(t)
	p, err := announce.New(eb.Client(), "default", announce.WithRetries(4, time.Hour))
	require.NoError(t, err)
	eb.Refuse(throttled)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = p.Publish(ctx, announce.DestinationDisabled, e)
	require.ErrorContains(t, err, "no time for another before the deadline")
	require.Equal(t, 1, eb.Calls())

	eb.Refuse(throttled)
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		for eb.Calls() < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	err = p.Publish(ctx, announce.DestinationDisabled, e)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 2, eb.Calls())
	require.Empty(t, eb.Events())
}

// TestPendingKeepsTheNewest: AppendPending keeps MaxPending events, the
// newest; an unreadable list is replaced.
func TestPendingKeepsTheNewest(t *testing.T) {
	t.Parallel()
	list := ""
	for i := range announce.MaxPending + 2 {
		list = announce.AppendPending(list, announce.Pending{DetailType: announce.DestinationDisabled, Detail: announce.Event{Origin: "o", ConsecutiveFailures: i}})
	}
	ps, err := announce.ParsePending(list)
	require.NoError(t, err)
	require.Len(t, ps, announce.MaxPending)
	require.Equal(t, 2, ps[0].Detail.ConsecutiveFailures)
	require.Equal(t, announce.MaxPending+1, ps[len(ps)-1].Detail.ConsecutiveFailures)
	ps, err = announce.ParsePending(announce.AppendPending("not json", announce.Pending{DetailType: "x"}))
	require.NoError(t, err)
	require.Len(t, ps, 1)
	_, err = announce.ParsePending("not json")
	require.Error(t, err)
}

// TestFinishPublishesInOrderAndRemovesWhatWentOut: against the DynamoDB
// and EventBridge wire fakes, Finish puts the pending events oldest first,
// stops at one refused for good and removes only those put; an event
// another writer added meanwhile stays; nothing pending makes no call.
func TestFinishPublishesInOrderAndRemovesWhatWentOut(t *testing.T) {
	t.Parallel()
	ddb := dynamotest.New(t)
	ddb.AddTable("t", store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: "t"})
	require.NoError(t, err)
	eb := eventbridgetest.New(t)
	pub, err := announce.New(eb.Client(), "default", announce.WithRetries(2, time.Millisecond))
	require.NoError(t, err)
	ctx := context.Background()
	ev := func(n int) announce.Pending {
		return announce.Pending{DetailType: announce.DestinationDisabled, Detail: announce.Event{ID: fmt.Sprintf("e%d", n), Origin: "https://a.example", ConsecutiveFailures: n, At: "2026-12-01T10:00:00Z"}}
	}
	h, _, err := st.UpdateHealth(ctx, store.Health{Origin: "https://a.example"}, func(h *store.Health) bool {
		for i := range 3 {
			h.PendingEvents = announce.AppendPending(h.PendingEvents, ev(i))
		}
		return true
	})
	require.NoError(t, err)

	eb.Refuse("", "AccessDeniedException") // the first taken, the second refused for good
	// Another writer adds one after Finish's caller read the item.
	_, _, err = st.UpdateHealth(ctx, h, func(h *store.Health) bool {
		h.PendingEvents = announce.AppendPending(h.PendingEvents, ev(3))
		return true
	})
	require.NoError(t, err)
	h2, err := announce.Finish(ctx, pub, st, h)
	require.ErrorContains(t, err, "AccessDeniedException")
	require.Len(t, eb.Events(), 1)
	require.EqualValues(t, 0, eb.Events()[0].Detail["consecutive_failures"])
	got, err := st.Health(ctx, "https://a.example")
	require.NoError(t, err)
	require.Equal(t, got.PendingEvents, h2.PendingEvents)
	ps, err := announce.ParsePending(got.PendingEvents)
	require.NoError(t, err)
	require.Equal(t, []announce.Pending{ev(1), ev(2), ev(3)}, ps, "the one put is removed, the other writer's kept")

	h3, err := announce.Finish(ctx, pub, st, got)
	require.NoError(t, err)
	require.Empty(t, h3.PendingEvents)
	require.Len(t, eb.Events(), 4)
	calls := eb.Calls()
	_, err = announce.Finish(ctx, pub, st, h3)
	require.NoError(t, err)
	require.Equal(t, calls, eb.Calls(), "nothing pending: no call")

	// Two callers read the same pending event; the first puts and removes
	// it, and a new one is added; the second puts its copy (events go at
	// least once) but removes only what it put: the new one stays.
	stale, _, err := st.UpdateHealth(ctx, h3, func(h *store.Health) bool {
		h.PendingEvents = announce.AppendPending("", ev(4))
		return true
	})
	require.NoError(t, err)
	fresh, err := announce.Finish(ctx, pub, st, stale)
	require.NoError(t, err)
	_, _, err = st.UpdateHealth(ctx, fresh, func(h *store.Health) bool {
		h.PendingEvents = announce.AppendPending(h.PendingEvents, ev(5))
		return true
	})
	require.NoError(t, err)
	_, err = announce.Finish(ctx, pub, st, stale)
	require.NoError(t, err)
	got, err = st.Health(ctx, "https://a.example")
	require.NoError(t, err)
	ps, err = announce.ParsePending(got.PendingEvents)
	require.NoError(t, err)
	require.Equal(t, []announce.Pending{ev(5)}, ps)
}
