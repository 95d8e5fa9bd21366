// Package backoff computes how long a failed notification waits before its
// next attempt: the visibility timeout herald sets on the SQS message.
//
// The schedule is exponential, delay(n) = min(Base·2^(n−1), Cap) for the n-th
// receive (SQS ApproximateReceiveCount), and the jittered value lies in
// [delay·(1−Jitter), delay] so that retries of one outage spread out but never
// exceed the schedule. See docs/delivery.md for the default table.
package backoff

import (
	"math"
	"math/rand/v2"
	"time"
)

// MaxVisibilityTimeout is the SQS limit on a message's visibility timeout
// (12 hours; ChangeMessageVisibility, "VisibilityTimeout" range 0–43200 s).
const MaxVisibilityTimeout = 12 * time.Hour

// MaxDelay is the longest delay herald asks for. SQS counts the 12 hours
// from the receive and rejects a change past them; the receive happened
// before the invocation began, and a Lambda invocation lasts at most 15
// minutes, so 12 h − 15 min is always accepted.
const MaxDelay = MaxVisibilityTimeout - 15*time.Minute

// Policy is an exponential backoff schedule.
type Policy struct {
	// Base is the delay after the first failed receive. Defaults to 60 s.
	Base time.Duration
	// Cap is the longest delay. Defaults to 6 h; never above MaxDelay.
	Cap time.Duration
	// Jitter is the fraction (0–1) by which a delay may be shortened at
	// random; 0 turns jitter off. Out of range, it becomes DefaultJitter
	// (0.2), which is what the functions use.
	Jitter float64
	// Rand returns a float in [0, 1). Defaults to math/rand/v2's Float64.
	Rand func() float64
}

// Default values of Policy.
const (
	DefaultBase   = 60 * time.Second
	DefaultCap    = 6 * time.Hour
	DefaultJitter = 0.2
)

// WithDefaults returns p with zero fields set to their defaults.
func (p Policy) WithDefaults() Policy {
	if p.Base <= 0 {
		p.Base = DefaultBase
	}
	if p.Cap <= 0 {
		p.Cap = DefaultCap
	}
	p.Cap = min(p.Cap, MaxDelay)
	if p.Jitter < 0 || p.Jitter > 1 {
		p.Jitter = DefaultJitter
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	return p
}

// Schedule returns the un-jittered delay after the n-th receive failed
// (n ≥ 1; n < 1 counts as 1): min(Base·2^(n−1), Cap).
func (p Policy) Schedule(n int) time.Duration {
	n = max(n, 1)
	// In float64 until capped: Base·2^(n−1) overflows a Duration for large n.
	return time.Duration(min(float64(p.Base)*math.Pow(2, float64(n-1)), float64(p.Cap)))
}

// Delay returns the jittered delay after the n-th receive failed, raised to
// at least retryAfter (a receiver's Retry-After), and never above MaxDelay.
// It is rounded up to whole seconds, the unit of a visibility timeout.
func (p Policy) Delay(n int, retryAfter time.Duration) time.Duration {
	d := p.Schedule(n)
	d -= time.Duration(float64(d) * p.Jitter * p.Rand())
	d = max(d, retryAfter)
	d = (d + time.Second - 1).Truncate(time.Second)
	return min(d, MaxDelay)
}

// Total returns the un-jittered time a notification spends waiting between
// its first and its maxReceive-th receive: the sum of Schedule(1…maxReceive−1).
func (p Policy) Total(maxReceive int) time.Duration {
	var sum time.Duration
	for n := 1; n < maxReceive; n++ {
		sum += p.Schedule(n)
	}
	return sum
}
