package chat

import (
	"fmt"
	"testing"
	"time"
)

// TestPacerForgetsIdleHooksOnlyAtItsBound: the pacer keeps every webhook
// until it holds maxIdleHooks, then forgets the idle ones before it adds
// another (idle: unused for more than idleHookAfter and not held by a
// 429), so it never holds more.
func TestPacerForgetsIdleHooksOnlyAtItsBound(t *testing.T) {
	t.Parallel()
	p := newPacer()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	late := start.Add(10 * idleHookAfter)
	for i := range maxIdleHooks - 3 {
		p.reserve(slack, fmt.Sprintf("https://hooks.slack.com/services/T/B/%d", i), start)
	}
	// Idle for exactly idleHookAfter: not yet idle enough to forget.
	p.reserve(slack, "https://hooks.slack.com/services/T/B/edge", late.Add(-idleHookAfter))
	// Held by a 429 beyond late: kept whatever its idle time.
	p.reserve(slack, "https://hooks.slack.com/services/T/B/held", start)
	p.block(slack, "https://hooks.slack.com/services/T/B/held", start, 11*idleHookAfter)
	// Long idle, but below the bound: nothing is forgotten.
	p.reserve(slack, "https://hooks.slack.com/services/T/B/last", late)
	if len(p.hooks) != maxIdleHooks {
		t.Fatalf("%d hooks, want %d (none forgotten below the bound)", len(p.hooks), maxIdleHooks)
	}
	// At the bound, the idle ones go before the next is added.
	p.reserve(slack, "https://hooks.slack.com/services/T/B/next", late)
	if len(p.hooks) != 4 {
		t.Fatalf("%d hooks, want 4 (the idle ones forgotten; edge, held, last and next kept)", len(p.hooks))
	}
}

// TestPacerKeysAWebhookByItsNormalizedURL: spellings of one webhook (the
// host's case, the default port, a trailing dot, an escaped unreserved
// character) take turns from one bucket, and a 429's block holds them
// all; another webhook of the service has its own.
func TestPacerKeysAWebhookByItsNormalizedURL(t *testing.T) {
	t.Parallel()
	p := newPacer()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	spellings := []string{
		"https://hooks.slack.com/services/T0/B0/XyZ",
		"https://HOOKS.slack.com:443/services/T0/B0/XyZ",
		"https://hooks.slack.com./services/T0/B0/%58yZ",
	}
	var waits []time.Duration
	for range slack.burst {
		waits = append(waits, p.reserve(slack, spellings[0], now).wait)
	}
	for _, s := range spellings[1:] {
		waits = append(waits, p.reserve(slack, s, now).wait)
	}
	if len(p.hooks) != 1 {
		t.Fatalf("%d hooks for one webhook spelt %d ways", len(p.hooks), len(spellings))
	}
	if waits[slack.burst] <= 0 || waits[slack.burst+1] <= waits[slack.burst] {
		t.Fatalf("waits %v: past the burst, each spelling waits its turn after the last", waits)
	}
	if w := p.reserve(slack, "https://hooks.slack.com/services/T0/B0/other", now).wait; w != 0 {
		t.Fatalf("another webhook waited %v", w)
	}

	p.block(slack, spellings[2], now, time.Hour)
	if w := p.reserve(slack, spellings[1], now).wait; w < time.Hour {
		t.Fatalf("a 429 on one spelling held another only %v", w)
	}
}
