package processor_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/circuit"
)

// TestCircuitThresholdZeroIsOff: with a health store but CircuitThreshold
// 0 the circuit is off: every record to a failing origin is sent, and the
// store is neither read nor written.
func TestCircuitThresholdZeroIsOff(t *testing.T) {
	t.Parallel()
	cs, envs := environmentsWith(t, 1, nil, func(c *circuit.Config) { c.Threshold = 0 })
	r := newReceiver(t, http.StatusServiceUnavailable)
	var recs []events.SQSMessage
	for i := range 5 {
		recs = append(recs, rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	require.Len(t, failures(cs.invoke(t, envs[0], recs...)), 5)
	require.Equal(t, int32(5), r.requests.Load(), "every record sent")
	require.Zero(t, cs.ddb.Calls("GetItem"), "the store is not read")
	require.Zero(t, cs.ddb.Calls("PutItem"), "nor written")
}

// TestCircuitWritesAHealthyOriginsSuccessOncePerInterval: a delivery to an
// origin with no failures writes its last success only when the stored
// one is a minute old or older: not at 59 s, at exactly 60 s.
func TestCircuitWritesAHealthyOriginsSuccessOncePerInterval(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 1, nil)
	r := newReceiver(t, http.StatusOK)
	t0 := cs.clock.Now()
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("a", r.body("a"), 1))))
	require.Equal(t, t0, cs.health(t, r).LastSuccess, "the first success is written")

	cs.clock.Advance(59 * time.Second)
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("b", r.body("b"), 1))))
	require.Equal(t, t0, cs.health(t, r).LastSuccess, "59 s later: not written")

	cs.clock.Advance(time.Second)
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("c", r.body("c"), 1))))
	require.Equal(t, t0.Add(time.Minute), cs.health(t, r).LastSuccess, "a minute later: written")
}

// TestCircuitProbeRefusedForItsNotificationGivesTheLeaseBack: a probe that
// fails for a reason of its own notification (404), not because the origin
// is down, leaves the failures as they were and gives its probe lease
// back, so the next record past the probe time is a probe again at once.
func TestCircuitProbeRefusedForItsNotificationGivesTheLeaseBack(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 1, nil)
	r := newReceiver(t, http.StatusServiceUnavailable)
	for i := range 3 {
		cs.invoke(t, envs[0], rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.clock.Advance(time.Minute)
	r.status.Store(http.StatusNotFound)
	cs.invoke(t, envs[0], rec("probe-1", r.body("probe-1"), 2))
	require.Equal(t, int32(4), r.requests.Load())
	h := cs.health(t, r)
	require.Equal(t, 3, h.Failures, "a 404 says nothing of the origin")
	require.True(t, h.ProbeUntil.IsZero(), "the lease is given back")
	require.Empty(t, h.ProbeOwner)

	r.status.Store(http.StatusOK)
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("probe-2", r.body("probe-2"), 2))))
	require.Equal(t, int32(5), r.requests.Load(), "the next record is a probe at once")
	require.Zero(t, cs.health(t, r).Failures)
}

// TestDisabledReasonOfAnOriginThatNeverFailed: an origin an operator
// disabled before any failure is named in the dead letter's reason with
// "none" for its last failure's class and "never" for its time.
func TestDisabledReasonOfAnOriginThatNeverFailed(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 1, nil)
	r := newReceiver(t, http.StatusOK)
	origin := "http://" + r.srv.Listener.Addr().String()
	_, _, err := cs.st.SetDisabled(context.Background(), origin, true)
	require.NoError(t, err)
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("a", r.body("a"), 1))))
	dls := envs[0].deadLetters(t)
	require.Len(t, dls, 1)
	require.Equal(t, fmt.Sprintf("not sent: %s is disabled (by operator at %s; the last failure none at never); redrive after `herald destinations enable %s`",
		origin, cs.clock.Now().UTC().Format(time.RFC3339), origin), dls[0].reason.Error)
}

// TestCircuitProbeIntervalDefaultsToAMinute: with CircuitProbeInterval 0 an
// open circuit lets its probe through circuit.DefaultProbeInterval (1 min)
// after the last failure: not at 59 s, at 60 s.
func TestCircuitProbeIntervalDefaultsToAMinute(t *testing.T) {
	t.Parallel()
	require.Equal(t, time.Minute, circuit.DefaultProbeInterval)
	cs, envs := environmentsWith(t, 1, nil, func(c *circuit.Config) { c.ProbeInterval = 0 })
	r := newReceiver(t, http.StatusServiceUnavailable)
	for i := range 3 {
		cs.invoke(t, envs[0], rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.clock.Advance(59 * time.Second)
	cs.invoke(t, envs[0], rec("early", r.body("early"), 2))
	require.Equal(t, int32(3), r.requests.Load(), "59 s after the last failure: held back")
	require.Equal(t, string(circuit.ClassCircuitOpen), logLines(t, envs[0])["early"]["error_class"])
	cs.clock.Advance(time.Second)
	cs.invoke(t, envs[0], rec("probe", r.body("probe"), 2))
	require.Equal(t, int32(4), r.requests.Load(), "60 s after: the probe")
}
