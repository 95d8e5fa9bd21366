package backoff_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/backoff"
)

func TestScheduleDefaults(t *testing.T) {
	t.Parallel()
	p := backoff.Policy{}.WithDefaults()
	want := []time.Duration{
		time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute,
		32 * time.Minute, 64 * time.Minute, 128 * time.Minute, 256 * time.Minute,
		6 * time.Hour, 6 * time.Hour, 6 * time.Hour, 6 * time.Hour,
	}
	for i, w := range want {
		require.Equal(t, w, p.Schedule(i+1), "receive %d", i+1)
	}
	require.Equal(t, time.Minute, p.Schedule(0), "n < 1 counts as 1")
	require.Equal(t, 6*time.Hour, p.Schedule(1000), "no overflow far past the cap")
	// The defaults ride out about a day: 13 receives wait 26.5 h in all.
	require.Equal(t, 26*time.Hour+31*time.Minute, p.Total(13))
}

func TestDelayJitterBounds(t *testing.T) {
	t.Parallel()
	for _, r := range []float64{0, 0.5, 0.999999} {
		p := backoff.Policy{Base: 10 * time.Second, Cap: time.Hour, Jitter: 0.2, Rand: func() float64 { return r }}.WithDefaults()
		for n := 1; n <= 12; n++ {
			sched := p.Schedule(n)
			d := p.Delay(n, 0)
			require.LessOrEqual(t, d, sched, "never above the schedule (n=%d r=%v)", n, r)
			require.GreaterOrEqual(t, d, time.Duration(float64(sched)*0.8), "at most 20%% shorter (n=%d r=%v)", n, r)
			require.Zero(t, d%time.Second, "whole seconds")
		}
	}
}

func TestDelayExact(t *testing.T) {
	t.Parallel()
	p := backoff.Policy{Base: 10 * time.Second, Cap: time.Hour, Jitter: 0.5, Rand: func() float64 { return 0.5 }}.WithDefaults()
	require.Equal(t, 8*time.Second, p.Delay(1, 0), "10 s − 10·0.5·0.5 = 7.5 s, rounded up")
	require.Equal(t, 30*time.Second, p.Delay(3, 0), "40 s − 25%")
}

func TestDelayRetryAfterRaisesOnlyUpTo12Hours(t *testing.T) {
	t.Parallel()
	p := backoff.Policy{Base: time.Second, Cap: time.Minute, Rand: func() float64 { return 0 }}.WithDefaults()
	require.Equal(t, 90*time.Second, p.Delay(1, 90*time.Second), "Retry-After raises the delay above the cap")
	require.Equal(t, time.Second, p.Delay(1, 500*time.Millisecond), "a shorter Retry-After does not lower it")
	require.Equal(t, 11*time.Hour+45*time.Minute, p.Delay(1, 48*time.Hour), "never up to the SQS limit, which counts from the receive")
	require.Equal(t, backoff.MaxDelay, p.Delay(1, backoff.MaxVisibilityTimeout))
}

func TestWithDefaultsClampsCap(t *testing.T) {
	t.Parallel()
	p := backoff.Policy{Cap: 24 * time.Hour}.WithDefaults()
	require.Equal(t, backoff.MaxDelay, p.Cap)
}

func TestWithDefaultsJitterRangeEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		jitter, want float64
		why          string
	}{
		{0, 0, "0 turns jitter off"},
		{1, 1, "1 is in range: a delay may be shortened to nothing"},
		{0.5, 0.5, "in range"},
		{-0.01, backoff.DefaultJitter, "below the range"},
		{1.01, backoff.DefaultJitter, "above the range"},
	} {
		p := backoff.Policy{Jitter: tc.jitter}.WithDefaults()
		require.Equal(t, tc.want, p.Jitter, tc.why)
	}
	// Jitter off: the delay is the schedule whatever Rand returns.
	p := backoff.Policy{Base: 10 * time.Second, Cap: time.Hour, Rand: func() float64 { return 0.99 }}.WithDefaults()
	require.Equal(t, 10*time.Second, p.Delay(1, 0))
	// Jitter 1 with Rand near 1 shortens a delay to under a second, rounded up to 1 s.
	p = backoff.Policy{Base: 10 * time.Second, Cap: time.Hour, Jitter: 1, Rand: func() float64 { return 0.99 }}.WithDefaults()
	require.Equal(t, time.Second, p.Delay(1, 0))
}

func TestWithDefaultsKeepsPositiveBaseAndCap(t *testing.T) {
	t.Parallel()
	p := backoff.Policy{Base: time.Nanosecond, Cap: time.Nanosecond}.WithDefaults()
	require.Equal(t, time.Nanosecond, p.Base, "the smallest positive base is kept")
	require.Equal(t, time.Nanosecond, p.Cap, "the smallest positive cap is kept")
	p = backoff.Policy{Cap: backoff.MaxDelay}.WithDefaults()
	require.Equal(t, backoff.MaxDelay, p.Cap, "a cap of exactly MaxDelay is kept")
}
