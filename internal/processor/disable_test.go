package processor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/eventbridgetest"
)

// TestDisableAfterNoSuccess: an origin failing since t0 (threshold 3,
// DisableAfter 10 min) is probed once a minute; the probe failing 10 min
// after the first failure disables it, not the one before. Its next
// records are dead-lettered at once with class destination_disabled and
// never sent; a healthy origin in the same batch is delivered. Enabling
// it sends again.
func TestDisableAfterNoSuccess(t *testing.T) {
	t.Parallel()
	cs, envs := environmentsWith(t, 1, nil, func(c *circuit.Config) { c.DisableAfter = 10 * time.Minute })
	down, up := newReceiver(t, http.StatusServiceUnavailable), newReceiver(t, http.StatusOK)
	t0 := cs.clock.Now()
	var recs []events.SQSMessage
	for i := range 3 {
		recs = append(recs, rec(fmt.Sprintf("a-%d", i), down.body(fmt.Sprintf("a-%d", i)), 1))
	}
	require.Len(t, failures(cs.invoke(t, envs[0], recs...)), 3)
	require.Equal(t, t0, cs.health(t, down).FailingSince)
	for minute := 1; minute <= 9; minute++ {
		cs.clock.Advance(time.Minute)
		require.Len(t, failures(cs.invoke(t, envs[0], rec(fmt.Sprintf("p-%d", minute), down.body(fmt.Sprintf("p-%d", minute)), 2))), 1)
		require.False(t, cs.health(t, down).Disabled(), "minute %d: failing for less than 10 min", minute)
	}
	require.Empty(t, envs[0].deadLetters(t))
	require.Zero(t, batchSum(t, envs[0], metrics.DestinationsDisabled))
	cs.clock.Advance(time.Minute)
	require.Len(t, failures(cs.invoke(t, envs[0], rec("p-10", down.body("p-10"), 2))), 1, "the disabling probe itself is retried")
	h := cs.health(t, down)
	require.True(t, h.Disabled())
	require.Equal(t, t0.Add(10*time.Minute), h.DisabledAt)
	require.Equal(t, store.DisabledByHerald, h.DisabledBy)
	require.Equal(t, int32(3+10), down.requests.Load())
	require.Equal(t, 1.0, batchSum(t, envs[0], metrics.DestinationsDisabled), "the transition, counted once")

	cs.clock.Advance(time.Minute)
	resp := cs.invoke(t, envs[0], rec("d-0", down.body("d-0"), 1), rec("d-1", down.body("d-1"), 1), rec("u-0", up.body("u-0"), 1))
	require.Empty(t, failures(resp), "dead-lettered or delivered: none retried")
	require.Equal(t, int32(3+10), down.requests.Load(), "a disabled origin gets nothing")
	require.Equal(t, int32(1), up.requests.Load())
	dls := envs[0].deadLetters(t)
	require.Len(t, dls, 2)
	for _, dl := range dls {
		require.Equal(t, circuit.ClassDestinationDisabled, dl.reason.ErrorClass)
		require.Equal(t, "permanent_failure", dl.reason.Outcome)
		require.Contains(t, dl.reason.Error, "webhook_http_5xx")
		require.NotContains(t, dl.reason.Error, "secret-path")
	}

	_, changed, err := cs.st.SetDisabled(context.Background(), "http://"+down.srv.Listener.Addr().String(), false)
	require.NoError(t, err)
	require.True(t, changed)
	down.status.Store(http.StatusOK)
	cs.clock.Advance(5 * time.Second) // the environment's copy is 5 s old
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("e-0", down.body("e-0"), 1))))
	require.Equal(t, int32(3+10+1), down.requests.Load(), "enabled: sent again")
	require.Len(t, envs[0].deadLetters(t), 2)
	require.Equal(t, 1.0, batchSum(t, envs[0], metrics.DestinationsDisabled))
}

// TestDisableAfterSuccessStartsOver: a success between failures starts the
// run of failures again, so an origin that fails, recovers and fails
// again is disabled DisableAfter after its last run began, not its first.
func TestDisableAfterSuccessStartsOver(t *testing.T) {
	t.Parallel()
	cs, envs := environmentsWith(t, 1, nil, func(c *circuit.Config) { c.DisableAfter = 3 * time.Minute })
	r := newReceiver(t, http.StatusBadGateway)
	fail3 := func(prefix string) {
		for i := range 3 {
			cs.invoke(t, envs[0], rec(fmt.Sprintf("%s-%d", prefix, i), r.body(fmt.Sprintf("%s-%d", prefix, i)), 1))
		}
	}
	fail3("a")
	cs.clock.Advance(2 * time.Minute)
	r.status.Store(http.StatusOK)
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("ok", r.body("ok"), 1))), "the probe succeeds")
	require.True(t, cs.health(t, r).FailingSince.IsZero())
	r.status.Store(http.StatusBadGateway)
	cs.clock.Advance(2 * time.Minute)
	t1 := cs.clock.Now()
	fail3("b")
	cs.clock.Advance(time.Minute)
	cs.invoke(t, envs[0], rec("c", r.body("c"), 2))
	require.False(t, cs.health(t, r).Disabled(), "5 min after the first failure, 1 after this run's")
	cs.clock.Advance(2 * time.Minute)
	cs.invoke(t, envs[0], rec("d", r.body("d"), 2))
	h := cs.health(t, r)
	require.True(t, h.Disabled())
	require.Equal(t, t1, h.FailingSince)
}

// TestDisableManual: an operator disables a healthy origin; its records
// are dead-lettered, never sent; with DisableAfter 0 an origin failing
// for long is never disabled automatically.
func TestDisableManual(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 1, nil)
	r := newReceiver(t, http.StatusOK)
	origin := "http://" + r.srv.Listener.Addr().String()
	h, changed, err := cs.st.SetDisabled(context.Background(), origin, true)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, store.DisabledByOperator, h.DisabledBy)
	_, changed, err = cs.st.SetDisabled(context.Background(), origin, true)
	require.NoError(t, err)
	require.False(t, changed, "disabling a disabled origin changes nothing")
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("a", r.body("a"), 1))))
	require.Equal(t, int32(0), r.requests.Load())
	dls := envs[0].deadLetters(t)
	require.Len(t, dls, 1)
	require.Equal(t, circuit.ClassDestinationDisabled, dls[0].reason.ErrorClass)
	require.Contains(t, dls[0].reason.Error, "by operator")
	require.Zero(t, batchSum(t, envs[0], metrics.DestinationsDisabled), "a manual disable is the operator's, not counted")

	down := newReceiver(t, http.StatusServiceUnavailable)
	for i := range 3 {
		cs.invoke(t, envs[0], rec(fmt.Sprintf("b-%d", i), down.body(fmt.Sprintf("b-%d", i)), 1))
	}
	for i := range 5 {
		cs.clock.Advance(24 * time.Hour)
		cs.invoke(t, envs[0], rec(fmt.Sprintf("c-%d", i), down.body(fmt.Sprintf("c-%d", i)), 2))
	}
	require.False(t, cs.health(t, down).Disabled(), "DisableAfter 0: never disabled automatically")
}

// TestDisableSeenByAStaleEnvironment: an environment whose copy still
// says open reaches the probe time just after another environment's probe
// disabled the origin: its probe-lease write meets the newer item, takes
// no lease and dead-letters the record unsent.
func TestDisableSeenByAStaleEnvironment(t *testing.T) {
	t.Parallel()
	cs, envs := environmentsWith(t, 2, nil, func(c *circuit.Config) { c.DisableAfter = 2 * time.Minute })
	r := newReceiver(t, http.StatusServiceUnavailable)
	for i := range 3 {
		cs.invoke(t, envs[0], rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.clock.Advance(time.Minute)
	cs.invoke(t, envs[0], rec("p-1", r.body("p-1"), 2))
	cs.clock.Advance(time.Minute - time.Second)
	cs.invoke(t, envs[1], rec("held", r.body("held"), 2)) // reads the item: open, before the probe time
	require.Equal(t, int32(4), r.requests.Load())
	cs.clock.Advance(time.Second)
	cs.invoke(t, envs[0], rec("p-2", r.body("p-2"), 2))
	require.True(t, cs.health(t, r).Disabled())
	require.Equal(t, int32(5), r.requests.Load())

	require.Empty(t, failures(cs.invoke(t, envs[1], rec("late", r.body("late"), 2))))
	require.Equal(t, int32(5), r.requests.Load(), "not sent")
	dls := envs[1].deadLetters(t)
	require.Len(t, dls, 1)
	require.Equal(t, circuit.ClassDestinationDisabled, dls[0].reason.ErrorClass)
	require.Equal(t, 1.0, batchSum(t, envs[0], metrics.DestinationsDisabled))
	require.Zero(t, batchSum(t, envs[1], metrics.DestinationsDisabled), "only the environment that disabled it counts it")
}

// TestDisableByOperatorSeenByAStaleEnvironment: an operator disables an
// open origin; an environment whose copy still says open reaches the probe
// time: it takes no probe lease on the disabled item and sends nothing.
func TestDisableByOperatorSeenByAStaleEnvironment(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 1, nil)
	r := newReceiver(t, http.StatusServiceUnavailable)
	for i := range 3 {
		cs.invoke(t, envs[0], rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.clock.Advance(time.Minute - time.Second)
	cs.invoke(t, envs[0], rec("held", r.body("held"), 2)) // reads the item: open, before the probe time
	_, _, err := cs.st.SetDisabled(context.Background(), "http://"+r.srv.Listener.Addr().String(), true)
	require.NoError(t, err)
	cs.clock.Advance(time.Second)
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("late", r.body("late"), 2))))
	require.Equal(t, int32(3), r.requests.Load(), "not sent")
	h := cs.health(t, r)
	require.True(t, h.ProbeUntil.IsZero(), "no probe lease on a disabled origin")
	require.Empty(t, h.ProbeOwner)
	require.Equal(t, circuit.ClassDestinationDisabled, envs[0].deadLetters(t)[0].reason.ErrorClass)
}

// batchSum adds up the metric name over every batch line b wrote.
func batchSum(t *testing.T, b *bundle, name string) float64 {
	t.Helper()
	b.logs.mu.Lock()
	defer b.logs.mu.Unlock()
	sum := 0.0
	sc := bufio.NewScanner(bytes.NewReader(b.logs.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		if v, ok := m[name].(float64); ok && m["msg"] == "batch" {
			sum += v
		}
	}
	return sum
}

// TestDisableAnnouncesOnce: with two environments publishing to one
// EventBridge (the wire fake), the disabling probe's environment puts one
// destination.disabled event naming the origin without its path, its last
// failure class and times; the other environment, which finds it disabled,
// puts none. A failed PutEvents is logged and changes nothing else.
func TestDisableAnnouncesOnce(t *testing.T) {
	t.Parallel()
	eb := eventbridgetest.New(t)
	pub, err := announce.New(eb.Client(), "default")
	require.NoError(t, err)
	cs, envs := environmentsWith(t, 2, nil, func(c *circuit.Config) { c.DisableAfter = 2 * time.Minute; c.Announcer = pub })
	r := newReceiver(t, http.StatusServiceUnavailable)
	t0 := cs.clock.Now()
	for i := range 3 {
		cs.invoke(t, envs[0], rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.clock.Advance(time.Minute)
	cs.invoke(t, envs[1], rec("p-1", r.body("p-1"), 2))
	require.Empty(t, eb.Events())
	cs.clock.Advance(time.Minute)
	cs.invoke(t, envs[0], rec("p-2", r.body("p-2"), 2))
	cs.invoke(t, envs[1], rec("late", r.body("late"), 2))
	cs.clock.Advance(time.Minute)
	cs.invoke(t, envs[0], rec("later", r.body("later"), 2))

	evs := eb.Events()
	require.Len(t, evs, 1)
	require.Equal(t, "herald", evs[0].Source)
	require.Equal(t, "destination.disabled", evs[0].DetailType)
	require.Equal(t, "default", evs[0].Bus)
	d := evs[0].Detail
	require.Equal(t, "http://"+r.srv.Listener.Addr().String(), d["origin"])
	require.Equal(t, "disabled", d["state"])
	require.Equal(t, "herald", d["disabled_by"])
	require.Equal(t, "webhook_http_5xx", d["last_failure_class"])
	require.Equal(t, float64(5), d["consecutive_failures"])
	require.Equal(t, t0.UTC().Format(time.RFC3339), d["failing_since"])
	require.Equal(t, t0.Add(2*time.Minute).UTC().Format(time.RFC3339), d["disabled_at"])
	require.NotContains(t, fmt.Sprint(d), "secret-path")

	// Another origin, with EventBridge failing: disabled all the same.
	r2 := newReceiver(t, http.StatusServiceUnavailable)
	for i := range 3 {
		cs.invoke(t, envs[0], rec(fmt.Sprintf("b-%d", i), r2.body(fmt.Sprintf("b-%d", i)), 1))
	}
	cs.clock.Advance(2 * time.Minute)
	eb.Fail(1)
	cs.invoke(t, envs[0], rec("b-p", r2.body("b-p"), 2))
	require.True(t, cs.health(t, r2).Disabled())
	require.Len(t, eb.Events(), 1)
	require.Contains(t, envs[0].logs.String(), "destination event not published")
}

// TestDisableNeedsFailuresAcrossThePeriod: three failures open the
// circuit; six silent days later one probe meets a 502. That failure
// starts a new run (the last one was circuit.FailureRunGap or more ago): the
// origin is not disabled, its circuit is closed again, and the next
// notification, to a receiver that has recovered, is delivered.
func TestDisableNeedsFailuresAcrossThePeriod(t *testing.T) {
	t.Parallel()
	for _, quiet := range []time.Duration{6 * 24 * time.Hour, circuit.FailureRunGap, 30*24*time.Hour - time.Hour} {
		t.Run(quiet.String(), func(t *testing.T) {
			t.Parallel()
			cs, envs := environmentsWith(t, 1, nil, func(c *circuit.Config) { c.DisableAfter = circuit.DefaultDisableAfter })
			r := newReceiver(t, http.StatusServiceUnavailable)
			for i := range 3 {
				cs.invoke(t, envs[0], rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
			}
			require.Equal(t, 3, cs.health(t, r).Failures)
			cs.clock.Advance(quiet)
			r.status.Store(http.StatusBadGateway)
			require.Len(t, failures(cs.invoke(t, envs[0], rec("probe", r.body("probe"), 1))), 1, "the probe's failure is retried")
			h := cs.health(t, r)
			require.False(t, h.Disabled(), "one failure after %s of quiet does not disable", quiet)
			require.Equal(t, 1, h.Failures, "a new run")
			require.Equal(t, cs.clock.Now(), h.FailingSince)
			r.status.Store(http.StatusOK)
			require.Empty(t, failures(cs.invoke(t, envs[0], rec("next", r.body("next"), 1))))
			require.Empty(t, envs[0].deadLetters(t), "the next notification is sent, not dead-lettered")
			require.Equal(t, int32(5), r.requests.Load())
		})
	}
}

// TestDisableRunBoundaries: an origin failing once every gap for longer
// than DisableAfter (5 days). With every gap just under circuit.FailureRunGap its
// run lasts, and the first failure DisableAfter or more after the run
// began disables it, not the one before; one gap of exactly circuit.FailureRunGap
// starts the run again, so 5 days after the first failure it is not
// disabled, and it is DisableAfter after the gap.
func TestDisableRunBoundaries(t *testing.T) {
	t.Parallel()
	const period = circuit.DefaultDisableAfter
	step := circuit.FailureRunGap - time.Second
	for _, tt := range []struct {
		name     string
		gapAt    int // the failure (from 1) reached after a gap of circuit.FailureRunGap; 0: none
		disabled bool
	}{
		{name: "every gap under circuit.FailureRunGap", disabled: true},
		{name: "one gap of circuit.FailureRunGap after the second failure", gapAt: 2},
		{name: "one gap of circuit.FailureRunGap before the last failure", gapAt: 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs, envs := environmentsWith(t, 1, nil, func(c *circuit.Config) { c.DisableAfter = period })
			r := newReceiver(t, http.StatusServiceUnavailable)
			for i := range 3 {
				cs.invoke(t, envs[0], rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
			}
			t0 := cs.clock.Now()
			at := t0
			// Failures 1…6 after t0: 5 gaps of step reach t0 + 5×step,
			// 5 s short of the period; the 6th gap passes it.
			for i := 1; i <= 6; i++ {
				gap := step
				if i == tt.gapAt {
					gap = circuit.FailureRunGap
				}
				cs.clock.Advance(gap)
				at = at.Add(gap)
				cs.invoke(t, envs[0], rec(fmt.Sprintf("p-%d", i), r.body(fmt.Sprintf("p-%d", i)), 2))
				h := cs.health(t, r)
				if i < 6 {
					require.False(t, h.Disabled(), "failure %d, %s after the first", i, at.Sub(t0))
				}
			}
			h := cs.health(t, r)
			require.Equal(t, tt.disabled, h.Disabled(), "%s after the first failure", at.Sub(t0))
			if tt.disabled {
				require.Equal(t, t0, h.FailingSince)
				require.Equal(t, at, h.DisabledAt)
				return
			}
			require.Equal(t, t0.Add(time.Duration(tt.gapAt-1)*step+circuit.FailureRunGap), h.FailingSince, "the run began again after the gap")
		})
	}
}

// TestDisableAnnouncementFinishedLater: EventBridge refuses the
// destination.disabled entry on every retry: the origin is disabled all
// the same, the event stays recorded in its health item and the line
// says so. The same environment does not try again within a minute;
// after it, the next record of the origin (dead-lettered unsent) reads
// the item and puts the event, once, and it leaves the item. Another
// environment reading the item then puts nothing more.
func TestDisableAnnouncementFinishedLater(t *testing.T) {
	t.Parallel()
	eb := eventbridgetest.New(t)
	pub, err := announce.New(eb.Client(), "default", announce.WithRetries(3, time.Millisecond))
	require.NoError(t, err)
	cs, envs := environmentsWith(t, 2, nil, func(c *circuit.Config) { c.DisableAfter = 2 * time.Minute; c.Announcer = pub })
	r := newReceiver(t, http.StatusServiceUnavailable)
	for i := range 3 {
		cs.invoke(t, envs[0], rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.clock.Advance(2 * time.Minute)
	eb.Refuse(eventbridgetest.CodeThrottling, eventbridgetest.CodeInternalFailure, eventbridgetest.CodeThrottling)
	cs.invoke(t, envs[0], rec("p", r.body("p"), 2))
	h := cs.health(t, r)
	require.True(t, h.Disabled())
	require.Empty(t, eb.Events())
	require.Equal(t, 3, eb.Calls(), "three attempts")
	require.Contains(t, h.PendingEvents, `"detail_type":"destination.disabled"`)
	require.Contains(t, envs[0].logs.String(), "destination event not published")

	cs.clock.Advance(30 * time.Second) // the copy is stale, the last try recent
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("d-1", r.body("d-1"), 1))))
	require.Equal(t, 3, eb.Calls(), "not tried again within a minute")
	cs.clock.Advance(30 * time.Second)
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("d-2", r.body("d-2"), 1))))
	evs := eb.Events()
	require.Len(t, evs, 1)
	require.Equal(t, "destination.disabled", evs[0].DetailType)
	require.Equal(t, "herald", evs[0].Detail["disabled_by"])
	require.Equal(t, h.DisabledAt.UTC().Format(time.RFC3339), evs[0].Detail["disabled_at"])
	require.Empty(t, cs.health(t, r).PendingEvents, "removed once put")

	require.Empty(t, failures(cs.invoke(t, envs[1], rec("d-3", r.body("d-3"), 1))))
	require.Len(t, eb.Events(), 1, "nothing left to put")
	require.Len(t, envs[0].deadLetters(t), 2)
	require.Equal(t, int32(4), r.requests.Load(), "a disabled origin gets nothing")
}

// TestDisableAnnouncementRetriedAtOnce: a refusal EventBridge asks to be
// retried is put on the next attempt, in the same invocation; nothing
// stays pending.
func TestDisableAnnouncementRetriedAtOnce(t *testing.T) {
	t.Parallel()
	eb := eventbridgetest.New(t)
	pub, err := announce.New(eb.Client(), "default", announce.WithRetries(3, time.Millisecond))
	require.NoError(t, err)
	cs, envs := environmentsWith(t, 1, nil, func(c *circuit.Config) { c.DisableAfter = 2 * time.Minute; c.Announcer = pub })
	r := newReceiver(t, http.StatusServiceUnavailable)
	for i := range 3 {
		cs.invoke(t, envs[0], rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.clock.Advance(2 * time.Minute)
	eb.Refuse(eventbridgetest.CodeInternalFailure, eventbridgetest.CodeThrottling)
	cs.invoke(t, envs[0], rec("p", r.body("p"), 2))
	require.Len(t, eb.Events(), 1)
	require.Equal(t, 3, eb.Calls())
	require.Empty(t, cs.health(t, r).PendingEvents)
	require.NotContains(t, envs[0].logs.String(), "destination event not published")
}
