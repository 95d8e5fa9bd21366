// Package testclock is a clock that tests move by hand, safe to read from
// several goroutines: pass Clock.Now where the code under test takes a
// `now func() time.Time`.
package testclock

import (
	"sync"
	"time"
)

// Clock reads the time it was set to; only Advance moves it.
type Clock struct {
	mu sync.Mutex
	at time.Time
}

// New returns a Clock that reads at.
func New(at time.Time) *Clock { return &Clock{at: at} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

// Advance moves the clock by d (backwards when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}
