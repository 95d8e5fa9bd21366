package testclock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/testclock"
)

var start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// TestNowReadsWhatItWasSetTo: Now keeps returning the time given to New
// while the wall clock moves on.
func TestNowReadsWhatItWasSetTo(t *testing.T) {
	t.Parallel()
	c := testclock.New(start)
	require.Equal(t, start, c.Now())
	time.Sleep(2 * time.Millisecond)
	require.Equal(t, start, c.Now(), "the wall clock does not move it")
}

// TestAdvance: Advance moves the clock by exactly d, backwards when d is
// negative, and the moves add up.
func TestAdvance(t *testing.T) {
	t.Parallel()
	c := testclock.New(start)
	c.Advance(90 * time.Second)
	require.Equal(t, start.Add(90*time.Second), c.Now())
	c.Advance(time.Hour)
	require.Equal(t, start.Add(time.Hour+90*time.Second), c.Now())
	c.Advance(-2 * time.Hour)
	require.Equal(t, start.Add(-time.Hour+90*time.Second), c.Now())
}

// TestConcurrentAdvance: advances from many goroutines all land (run with
// -race: reads and moves are safe together).
func TestConcurrentAdvance(t *testing.T) {
	t.Parallel()
	c := testclock.New(start)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			c.Advance(time.Second)
			_ = c.Now()
		})
	}
	wg.Wait()
	require.Equal(t, start.Add(50*time.Second), c.Now())
}
