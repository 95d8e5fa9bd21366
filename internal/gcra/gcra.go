// Package gcra is herald's one rule for pacing sends to a destination: the
// generic cell rate algorithm (GCRA, the token bucket written as one
// timestamp, the theoretical arrival time), applied to a [store.Pace] so
// that every execution environment takes its turns from the same item
// (store.UpdatePace's compare and swap). Package chat paces each chat
// webhook with it, package endpointsend each registered endpoint that has
// a rate limit.
//
// See https://en.wikipedia.org/wiki/Generic_cell_rate_algorithm.
package gcra

import (
	"time"

	"github.com/heraldhq/herald/internal/store"
)

// Rate is a pace: one send per Every, and up to Burst at once after a
// quiet spell. Burst below 1 reads as 1.
type Rate struct {
	Every time.Duration
	Burst int
}

// Tolerance is how far ahead of the theoretical arrival time a send may
// go: Burst-1 intervals.
func (r Rate) Tolerance() time.Duration { return time.Duration(max(r.Burst, 1)-1) * r.Every }

// PerSecond is the rate of n requests per second with no burst: one send
// every 1/n s, so that no second holds more than n+1 sends (the
// "requests per second" of an endpoint's rate limit). n must be > 0.
func PerSecond(n float64) Rate {
	return Rate{Every: time.Duration(float64(time.Second) / n), Burst: 1}
}

// NoDeadline is the time left of a send whose context has no deadline.
const NoDeadline time.Duration = -1

// Bounds limit what a pace written by another clock can impose.
type Bounds struct {
	// MaxAhead bounds how far beyond now (and the turn's own interval and
	// tolerance) Next may be: a pace further ahead was written by a clock
	// running ahead of this one and is read as that far.
	MaxAhead time.Duration
	// MaxHold bounds how far beyond now Until may be.
	MaxHold time.Duration
	// Idle is how long after its last turn (and hold) the item may be
	// forgotten (Pace.Expires).
	Idle time.Duration
}

// Take takes the next turn of x at now under rate r, not before from (a
// hold this process knows of; zero for none) nor before x.Until. It
// returns the wait before sending and whether the turn was taken: a turn
// whose wait is left or more is not (left is the real time until the
// caller's deadline, measured with time.Until, never with the caller's
// clock; [NoDeadline] for none), and x is then left for the next caller
// to take the same turn. A turn with no wait is taken whatever is left:
// the caller keeps its own deadline. A taken turn moves x.Next one
// interval on and sets x.Expires.
func Take(x *store.Pace, r Rate, now, from time.Time, left time.Duration, b Bounds) (wait time.Duration, taken bool) {
	// Another environment's clock wrote these: one running ahead must not
	// hold the destination beyond what any writer can ask.
	if limit := now.Add(b.MaxAhead + r.Tolerance() + r.Every); x.Next.After(limit) {
		x.Next = limit
	}
	if limit := now.Add(b.MaxHold); x.Until.After(limit) {
		x.Until = limit
	}
	held := later(later(now, from), x.Until)
	at := later(x.Next, held)
	send := later(held, at.Add(-r.Tolerance()))
	wait = send.Sub(now)
	if wait > 0 && left != NoDeadline && wait >= left {
		return wait, false
	}
	x.Next = at.Add(r.Every)
	x.Expires = later(x.Next, x.Until).Add(b.Idle)
	return wait, true
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
