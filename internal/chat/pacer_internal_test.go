package chat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
)

// TestPacerForgetsIdleHooksOnlyAtItsBound: the pacer keeps every webhook
// until it holds maxIdleHooks, then forgets the idle ones before it adds
// another (idle: unused for more than idleHookAfter and not held by a
// 429), so it never holds more. (Keys here are any strings: the Sender
// passes Destination's.)
func TestPacerForgetsIdleHooksOnlyAtItsBound(t *testing.T) {
	t.Parallel()
	p := newPacer(nil)
	ctx := context.Background()
	turn := func(key string, at time.Time) { p.turn(ctx, slack, slack.rate, key, at, noDeadline) }
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	late := start.Add(10 * idleHookAfter)
	for i := range maxIdleHooks - 3 {
		turn(fmt.Sprintf("https://hooks.slack.com/services/T/B/%d", i), start)
	}
	// Idle for exactly idleHookAfter: not yet idle enough to forget.
	turn("https://hooks.slack.com/services/T/B/edge", late.Add(-idleHookAfter))
	// Held by a 429 beyond late: kept whatever its idle time.
	turn("https://hooks.slack.com/services/T/B/held", start)
	p.hold(ctx, "https://hooks.slack.com/services/T/B/held", start, start.Add(11*idleHookAfter))
	// Long idle, but below the bound: nothing is forgotten.
	turn("https://hooks.slack.com/services/T/B/last", late)
	if len(p.hooks) != maxIdleHooks {
		t.Fatalf("%d hooks, want %d (none forgotten below the bound)", len(p.hooks), maxIdleHooks)
	}
	// At the bound, the idle ones go before the next is added.
	turn("https://hooks.slack.com/services/T/B/next", late)
	if len(p.hooks) != 4 {
		t.Fatalf("%d hooks, want 4 (the idle ones forgotten; edge, held, last and next kept)", len(p.hooks))
	}
}

// Contention is not a store failure: when every try of a webhook's pace
// meets another environment's write, that post is paced alone, but the
// store is asked again by the next post, not skipped for paceStoreRetry as
// after a failed call.
func TestPaceContentionDoesNotSkipTheStore(t *testing.T) {
	t.Parallel()
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: "herald-store"})
	require.NoError(t, err)
	p := newPacer(st)
	ctx := context.Background()
	now := time.Now()
	key := "chat:slack:" + strings.Repeat("0", 32)
	other := store.Pace{Key: key}
	take := func(x *store.Pace) bool {
		var werr error
		other, _, werr = st.UpdatePace(ctx, other, func(o *store.Pace) bool { o.Next = o.Next.Add(time.Second); return true })
		require.NoError(t, werr)
		x.Next = x.Next.Add(time.Second)
		return true
	}
	_, _, ok := p.updatePace(ctx, now, store.Pace{Key: key}, take)
	require.False(t, ok, "contended: paced alone")
	require.True(t, p.storeDownUntil.IsZero(), "the store is not down")
	ddb.Fail("PutItem", 1)
	_, _, ok = p.updatePace(ctx, now, other, func(x *store.Pace) bool { x.Next = x.Next.Add(time.Second); return true })
	require.False(t, ok)
	require.Equal(t, now.Add(paceStoreRetry), p.storeDownUntil, "a failed call skips the store")
}
