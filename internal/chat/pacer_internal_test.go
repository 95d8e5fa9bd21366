package chat

import (
	"context"
	"fmt"
	"testing"
	"time"
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
	turn := func(key string, at time.Time) { p.turn(ctx, slack, slack.rate, key, at, time.Time{}) }
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
