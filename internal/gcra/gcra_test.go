package gcra_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/gcra"
	"github.com/heraldhq/herald/internal/store"
)

var t0 = time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)

var bounds = gcra.Bounds{MaxAhead: 15 * time.Minute, MaxHold: time.Hour, Idle: time.Minute}

// TestTakeSpacesTurns: with no burst, turns at one instant wait one
// interval more each; a burst of 3 lets three go at once.
func TestTakeSpacesTurns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rate  gcra.Rate
		waits []time.Duration
	}{
		{gcra.PerSecond(4), []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond}},
		{gcra.Rate{Every: time.Second, Burst: 3}, []time.Duration{0, 0, 0, time.Second}},
		{gcra.Rate{Every: time.Second}, []time.Duration{0, time.Second}}, // burst 0 reads as 1
	} {
		var p store.Pace
		for i, want := range c.waits {
			wait, ok := gcra.Take(&p, c.rate, t0, time.Time{}, gcra.NoDeadline, bounds)
			require.True(t, ok)
			require.Equal(t, want, wait, "turn %d of %+v", i, c.rate)
			require.Equal(t, p.Next.Add(bounds.Idle), p.Expires)
		}
	}
}

// TestTakeLeavesATurnThatOutlastsTheDeadline: a wait of the time left or
// more is not taken and leaves the pace as it was; one just under is.
func TestTakeLeavesATurnThatOutlastsTheDeadline(t *testing.T) {
	t.Parallel()
	r := gcra.PerSecond(1)
	p := store.Pace{Next: t0.Add(2 * time.Second)}
	before := p
	wait, ok := gcra.Take(&p, r, t0, time.Time{}, 2*time.Second, bounds)
	require.False(t, ok)
	require.Equal(t, 2*time.Second, wait)
	require.Equal(t, before, p)
	wait, ok = gcra.Take(&p, r, t0, time.Time{}, 2*time.Second+time.Millisecond, bounds)
	require.True(t, ok)
	require.Equal(t, 2*time.Second, wait)
	require.Equal(t, t0.Add(3*time.Second), p.Next)
}

// TestTakeHolds: a hold (Until, or from) delays the turn; holds and turns
// written by a clock far ahead are bounded.
func TestTakeHolds(t *testing.T) {
	t.Parallel()
	r := gcra.PerSecond(1)
	p := store.Pace{Until: t0.Add(5 * time.Second)}
	wait, _ := gcra.Take(&p, r, t0, time.Time{}, gcra.NoDeadline, bounds)
	require.Equal(t, 5*time.Second, wait)
	p = store.Pace{}
	wait, _ = gcra.Take(&p, r, t0, t0.Add(7*time.Second), gcra.NoDeadline, bounds)
	require.Equal(t, 7*time.Second, wait)
	p = store.Pace{Until: t0.Add(48 * time.Hour)}
	wait, _ = gcra.Take(&p, r, t0, time.Time{}, gcra.NoDeadline, bounds)
	require.Equal(t, bounds.MaxHold, wait)
	p = store.Pace{Next: t0.Add(48 * time.Hour)}
	wait, _ = gcra.Take(&p, r, t0, time.Time{}, gcra.NoDeadline, bounds)
	require.Equal(t, bounds.MaxAhead+time.Second, wait)
}

// TestTakeBoundsAPaceAheadByTheBurst: a turn written far ahead is read as
// MaxAhead plus the rate's tolerance and interval beyond now, and the
// burst still lets it go a tolerance early.
func TestTakeBoundsAPaceAheadByTheBurst(t *testing.T) {
	t.Parallel()
	r := gcra.Rate{Every: time.Second, Burst: 3} // tolerance 2 s
	b := gcra.Bounds{MaxAhead: 10 * time.Second, MaxHold: time.Hour, Idle: time.Minute}
	p := store.Pace{Next: t0.Add(time.Hour)}
	wait, ok := gcra.Take(&p, r, t0, time.Time{}, gcra.NoDeadline, b)
	require.True(t, ok)
	require.Equal(t, 11*time.Second, wait, "next bounded to now+10s+2s+1s, sent 2 s early")
	require.Equal(t, t0.Add(14*time.Second), p.Next)
}

// TestTakeWithADeadline: left is real time left, not a sentinel: a
// nanosecond left refuses a wait, and a turn with no wait is taken however
// little is left (the caller's deadline is the caller's to keep).
func TestTakeWithADeadline(t *testing.T) {
	t.Parallel()
	r := gcra.PerSecond(1)
	p := store.Pace{Next: t0.Add(time.Second)}
	wait, ok := gcra.Take(&p, r, t0, time.Time{}, time.Nanosecond, bounds)
	require.False(t, ok, "a wait of 1 s with 1 ns left")
	require.Equal(t, time.Second, wait)
	for _, left := range []time.Duration{0, -time.Second, time.Nanosecond} {
		p := store.Pace{Next: t0.Add(-time.Second)}
		wait, ok := gcra.Take(&p, r, t0, time.Time{}, left, bounds)
		require.True(t, ok, "no wait, %v left", left)
		require.Zero(t, wait)
		require.Equal(t, t0.Add(time.Second), p.Next)
	}
}
