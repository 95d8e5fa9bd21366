package circuit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/store"
)

// TestStateOfAtTheThreshold: a destination is open from Threshold
// consecutive failures on; a Threshold of 0 never opens it; a disabled one
// is disabled whatever its failures (moved from herald destinations,
// which now asks this rule).
func TestStateOfAtTheThreshold(t *testing.T) {
	t.Parallel()
	h := func(failures int) store.Health {
		return store.Health{Origin: "https://a.example.com", Failures: failures}
	}
	three := circuit.Rules{Threshold: 3}
	require.Equal(t, circuit.Open, three.StateOf(h(3)))
	require.Equal(t, circuit.Open, three.StateOf(h(4)))
	require.Equal(t, circuit.Closed, three.StateOf(h(2)))
	require.Equal(t, circuit.Closed, circuit.Rules{}.StateOf(h(0)))
	require.Equal(t, circuit.Closed, circuit.Rules{}.StateOf(h(5)))
	for _, failures := range []int{0, 2, 3} {
		d := h(failures)
		d.DisabledAt, d.DisabledBy = time.Unix(1, 0), store.DisabledByOperator
		require.Equal(t, circuit.Disabled, three.StateOf(d))
		require.Equal(t, circuit.Disabled, circuit.Rules{}.StateOf(d), "a disable holds with the circuit off")
	}
}

// TestNextProbe: a probe interval after the last failure, and never before
// a probe lease ends; the default interval when none is set.
func TestNextProbe(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	r := circuit.Rules{Threshold: 3, ProbeInterval: 30 * time.Second}
	h := store.Health{Failures: 3, LastFailure: t0}
	require.Equal(t, t0.Add(30*time.Second), r.NextProbe(h))
	h.ProbeUntil = t0.Add(29 * time.Second)
	require.Equal(t, t0.Add(30*time.Second), r.NextProbe(h), "a lease ending before the interval changes nothing")
	h.ProbeUntil = t0.Add(45 * time.Second)
	require.Equal(t, t0.Add(45*time.Second), r.NextProbe(h), "not before the probe lease ends")
	require.Equal(t, t0.Add(circuit.DefaultProbeInterval), circuit.Rules{Threshold: 3}.NextProbe(store.Health{LastFailure: t0}))
}

// TestDisables: only an open, enabled destination whose run of failures
// began DisableAfter or longer ago, and never with DisableAfter 0.
func TestDisables(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	r := circuit.Rules{Threshold: 3, DisableAfter: time.Hour}
	open := store.Health{Failures: 3, FailingSince: t0, LastFailure: t0.Add(time.Hour)}
	require.True(t, r.Disables(open, t0.Add(time.Hour)), "exactly DisableAfter")
	require.False(t, r.Disables(open, t0.Add(time.Hour-time.Millisecond)))
	closed := open
	closed.Failures = 2
	require.False(t, r.Disables(closed, t0.Add(2*time.Hour)), "a closed circuit is not disabled")
	noRun := open
	noRun.FailingSince = time.Time{}
	require.False(t, r.Disables(noRun, t0.Add(2*time.Hour)))
	already := open
	already.DisabledAt = t0
	require.False(t, r.Disables(already, t0.Add(2*time.Hour)), "already disabled")
	require.False(t, circuit.Rules{Threshold: 3}.Disables(open, t0.Add(1000*time.Hour)), "DisableAfter 0 never disables")
}

// TestRunEnded: a failure FailureRunGap or more after the last ends the run.
func TestRunEnded(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	h := store.Health{LastFailure: t0}
	require.False(t, circuit.RunEnded(h, t0.Add(circuit.FailureRunGap-time.Millisecond)))
	require.True(t, circuit.RunEnded(h, t0.Add(circuit.FailureRunGap)))
	require.False(t, circuit.RunEnded(store.Health{}, t0), "no failure yet: nothing ended")
}

// TestNewRefusesANegativeThresholdOrDisableAfter: 0 turns each off; below
// 0 is an error naming the field; a Breaker needs its health store (moved
// from the processor with the circuit's settings).
func TestNewRefusesANegativeThresholdOrDisableAfter(t *testing.T) {
	t.Parallel()
	st := &store.Store{}
	_, err := circuit.New(circuit.Config{Health: st, Rules: circuit.Rules{Threshold: -1}})
	require.EqualError(t, err, "circuit: Threshold -1: must be at least 0")
	_, err = circuit.New(circuit.Config{Health: st, Rules: circuit.Rules{DisableAfter: -time.Nanosecond}})
	require.EqualError(t, err, "circuit: DisableAfter -1ns: must not be negative")
	_, err = circuit.New(circuit.Config{Health: st})
	require.NoError(t, err, "0 turns each off")
	_, err = circuit.New(circuit.Config{Rules: circuit.Rules{Threshold: 3}})
	require.EqualError(t, err, "circuit: Health is required")
}

// TestDefaultDisableAfterIsFiveDays: under the default rules an open
// destination is disabled when its run of failures is 5 days old, as Svix
// disables an endpoint (docs/configuration.md,
// HERALD_DESTINATION_DISABLE_AFTER_SECONDS 432000), not a millisecond
// before.
func TestDefaultDisableAfterIsFiveDays(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	r := circuit.Rules{Threshold: circuit.DefaultThreshold, DisableAfter: circuit.DefaultDisableAfter}
	h := store.Health{Failures: circuit.DefaultThreshold, FailingSince: t0}
	fiveDays := t0.AddDate(0, 0, 5)
	require.False(t, r.Disables(h, fiveDays.Add(-time.Millisecond)))
	require.True(t, r.Disables(h, fiveDays))
	require.Equal(t, 432000*time.Second, circuit.DefaultDisableAfter, "HERALD_DESTINATION_DISABLE_AFTER_SECONDS' default")
}
