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

// TestQuickChangesStayDistinctAfterDedupe: an origin disabled, enabled
// and disabled again within one second records three events whose
// origin, disabled_at and at are the same (times have whole seconds).
// Two readers finishing them put each twice (at least once). A consumer
// deduplicating on the event's id, as docs/operations.md says, sees each
// of the three once, in order: every recorded event has an id of its
// own, the same in each copy put.
func TestQuickChangesStayDistinctAfterDedupe(t *testing.T) {
	t.Parallel()
	ddb := dynamotest.New(t)
	ddb.AddTable("t", store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: "t"})
	require.NoError(t, err)
	eb := eventbridgetest.New(t)
	pub, err := announce.New(eb.Client(), "default")
	require.NoError(t, err)
	ctx := context.Background()
	const origin, second = "https://a.example", "2026-12-01T10:00:00Z"
	disabled := announce.Pending{DetailType: announce.DestinationDisabled,
		Detail: announce.Event{Origin: origin, State: "disabled", DisabledBy: "operator", DisabledAt: second, At: second}}
	recovered := announce.Pending{DetailType: announce.DestinationRecovered,
		Detail: announce.Event{Origin: origin, State: "closed", DisabledBy: "operator", DisabledAt: second, At: second}}
	h, _, err := st.UpdateHealth(ctx, store.Health{Origin: origin}, func(h *store.Health) bool {
		for _, p := range []announce.Pending{disabled, recovered, disabled} {
			h.PendingEvents = announce.AppendPending(h.PendingEvents, p)
		}
		return true
	})
	require.NoError(t, err)

	_, err = announce.Finish(ctx, pub, st, h) // one reader
	require.NoError(t, err)
	_, err = announce.Finish(ctx, pub, st, h) // another, with the same copy
	require.NoError(t, err)
	require.Len(t, eb.Events(), 6, "each put by both readers")

	seen := map[string]bool{}
	var kept []string
	for _, e := range eb.Events() {
		id, _ := e.Detail["id"].(string)
		require.Regexp(t, `^[0-9a-f]{32}$`, id, "every event has an id")
		if seen[id] {
			continue
		}
		seen[id] = true
		kept = append(kept, e.DetailType)
	}
	require.Equal(t, []string{announce.DestinationDisabled, announce.DestinationRecovered, announce.DestinationDisabled}, kept)
}

// TestDroppedEventsAreCounted: beyond MaxPending events the oldest are
// dropped, and the oldest kept says how many were dropped before it
// (dropped_before), so a consumer knows that changes it never saw
// happened.
func TestDroppedEventsAreCounted(t *testing.T) {
	t.Parallel()
	list := ""
	total := announce.MaxPending + 3
	for i := range total {
		list = announce.AppendPending(list, announce.Pending{DetailType: announce.DestinationDisabled,
			Detail: announce.Event{Origin: "o", ConsecutiveFailures: i, At: fmt.Sprint(i)}})
	}
	ps, err := announce.ParsePending(list)
	require.NoError(t, err)
	require.Len(t, ps, announce.MaxPending)
	require.Equal(t, 3, ps[0].Detail.ConsecutiveFailures)
	require.Equal(t, 3, ps[0].Detail.DroppedBefore, "events 0, 1 and 2 dropped before it")
	for _, p := range ps[1:] {
		require.Zero(t, p.Detail.DroppedBefore)
	}
	// One more: the count moves to the new oldest and grows.
	list = announce.AppendPending(list, announce.Pending{DetailType: announce.DestinationDisabled, Detail: announce.Event{Origin: "o", ConsecutiveFailures: total}})
	ps, err = announce.ParsePending(list)
	require.NoError(t, err)
	require.Equal(t, 4, ps[0].Detail.ConsecutiveFailures)
	require.Equal(t, 4, ps[0].Detail.DroppedBefore)
}

// TestSequenceOrdersQuickChanges: an origin disabled, enabled and
// disabled again in one second, with another writer's write in between
// (a failure recorded, which makes the recording write try again on the
// item it left), records three events whose sequence is the version each
// change was written with: growing, so a consumer that gets them in any
// order keeps the last change as the origin's state.
func TestSequenceOrdersQuickChanges(t *testing.T) {
	t.Parallel()
	ddb := dynamotest.New(t)
	ddb.AddTable("t", store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: "t"})
	require.NoError(t, err)
	ctx := context.Background()
	const origin, second = "https://a.example", "2026-12-01T10:00:00Z"
	record := func(detailType, state string) func(store.Health, *store.Health) {
		return func(_ store.Health, h *store.Health) {
			announce.Record(h, announce.Pending{DetailType: detailType,
				Detail: announce.Event{Origin: origin, State: state, DisabledAt: second, At: second}})
		}
	}
	_, changed, err := st.SetDisabled(ctx, origin, true, record(announce.DestinationDisabled, "disabled"))
	require.NoError(t, err)
	require.True(t, changed)
	stale, err := st.Health(ctx, origin)
	require.NoError(t, err)
	_, changed, err = st.SetDisabled(ctx, origin, false, record(announce.DestinationRecovered, "closed"))
	require.NoError(t, err)
	require.True(t, changed)
	enabled, err := st.Health(ctx, origin)
	require.NoError(t, err)
	// Another writer, from a copy read before the enable, meets it and
	// writes on what it left (version 3).
	_, wrote, err := st.UpdateHealth(ctx, stale, func(h *store.Health) bool { h.FailureClass = "webhook_timeout"; return true })
	require.NoError(t, err)
	require.True(t, wrote)
	// The disabling write starts from the copy read before that one: it
	// meets it and records its event on the item it left.
	_, wrote, err = st.UpdateHealth(ctx, enabled, func(h *store.Health) bool {
		if h.Disabled() {
			return false
		}
		h.DisabledAt, h.DisabledBy = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), store.DisabledByOperator
		record(announce.DestinationDisabled, "disabled")(*h, h)
		return true
	})
	require.NoError(t, err)
	require.True(t, wrote)

	h, err := st.Health(ctx, origin)
	require.NoError(t, err)
	ps, err := announce.ParsePending(h.PendingEvents)
	require.NoError(t, err)
	require.Len(t, ps, 3)
	var seqs []int64
	for _, p := range ps {
		seqs = append(seqs, p.Detail.Sequence)
	}
	require.Equal(t, []int64{1, 2, 4}, seqs, "the version each change was written with; the other writer's write was 3")
	require.Equal(t, h.Version(), ps[2].Detail.Sequence)

	// Out of order, the highest sequence is the state now.
	last := ps[0]
	for _, p := range []announce.Pending{ps[2], ps[0], ps[1]} {
		if p.Detail.Sequence > last.Detail.Sequence {
			last = p
		}
	}
	require.Equal(t, "disabled", last.Detail.State)
	require.Equal(t, announce.DestinationDisabled, last.DetailType)
}

// TestFinishRemovesWhatItPutWhenTheListMoved: a reader finishes the
// MaxPending events it read while another writer adds one more, which
// drops the oldest and counts it on the next: the events put are still
// removed (by id), and only the new one stays pending, not put again.
func TestFinishRemovesWhatItPutWhenTheListMoved(t *testing.T) {
	t.Parallel()
	ddb := dynamotest.New(t)
	ddb.AddTable("t", store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: "t"})
	require.NoError(t, err)
	eb := eventbridgetest.New(t)
	pub, err := announce.New(eb.Client(), "default")
	require.NoError(t, err)
	ctx := context.Background()
	const origin = "https://a.example"
	ev := func(i int) announce.Pending {
		return announce.Pending{DetailType: announce.DestinationDisabled, Detail: announce.Event{Origin: origin, ConsecutiveFailures: i}}
	}
	read, _, err := st.UpdateHealth(ctx, store.Health{Origin: origin}, func(h *store.Health) bool {
		for i := range announce.MaxPending {
			h.PendingEvents = announce.AppendPending(h.PendingEvents, ev(i))
		}
		return true
	})
	require.NoError(t, err)
	_, _, err = st.UpdateHealth(ctx, read, func(h *store.Health) bool {
		h.PendingEvents = announce.AppendPending(h.PendingEvents, ev(announce.MaxPending))
		return true
	})
	require.NoError(t, err)

	_, err = announce.Finish(ctx, pub, st, read)
	require.NoError(t, err)
	require.Len(t, eb.Events(), announce.MaxPending)
	h, err := st.Health(ctx, origin)
	require.NoError(t, err)
	ps, err := announce.ParsePending(h.PendingEvents)
	require.NoError(t, err)
	require.Len(t, ps, 1, "only the one added meanwhile")
	require.Equal(t, announce.MaxPending, ps[0].Detail.ConsecutiveFailures)
}
