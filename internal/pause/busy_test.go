package pause_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/internal/testkit/pausetest"
)

// Lambda refuses an update of a mapping while another one is in progress
// (ResourceInUseException in a transitional state, ResourceConflictException
// while another operation runs): two execution environments pausing at the
// same moment, or a resume right after a pause.

func oneMapping(state string) *pausetest.Lambda {
	return &pausetest.Lambda{Mappings: []pausetest.Mapping{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: state},
	}}
}

// handle runs a paused Handler on a batch of two with w, the waits between
// updates recorded in waits instead of slept.
func handle(t *testing.T, w *pausetest.Lambda) (events.SQSEventResponse, string, error) {
	t.Helper()
	resp, logs, err, _ := handleWaits(t, w)
	return resp, logs, err
}

func handleWaits(t *testing.T, w *pausetest.Lambda) (events.SQSEventResponse, string, error, []time.Duration) {
	t.Helper()
	ctx, waits := pause.RecordWaits(context.Background())
	var logs bytes.Buffer
	h := &pause.Handler{
		API: pausetest.Client(t, w), FunctionName: "herald-deliver",
		Cause:  errors.New("HERALD_WEBHOOK_SECRET: not base64"),
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	}
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", EventSourceARN: queueArn}, {MessageId: "m2", EventSourceARN: queueArn},
	}})
	return resp, logs.String(), err, waits()
}

func TestHandlerPausedByAnotherEnvironmentAtTheSameMoment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, other, errType string
	}{
		{"its update in progress", "Disabling", ""},
		{"its update in progress, answered as a conflict", "Disabling", "ResourceConflictException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := oneMapping("Enabled")
			calls := 0
			w.BeforeUpdate = func(uuid string) string {
				calls++
				w.Transition(uuid, tc.other) // the other environment's update lands first
				return tc.errType
			}
			resp, logs, err := handle(t, w)
			require.NoError(t, err, "the mapping is being disabled: this environment is paused too")
			require.Len(t, resp.BatchItemFailures, 2, "the batch is handed back whole")
			require.Contains(t, logs, `"msg":"paused:`)
			require.Equal(t, 1, calls, "no second update once the mapping is seen disabling")
			require.Empty(t, w.Updates, "only the other environment's update changed the mapping")
			require.Equal(t, "Disabled", w.Mappings[0].State)
		})
	}
}

func TestPauseRetriesWhileAResumeIsInProgress(t *testing.T) {
	t.Parallel()
	w := oneMapping("Enabled")
	calls := 0
	w.BeforeUpdate = func(uuid string) string {
		calls++
		if calls == 1 {
			w.Transition(uuid, "Enabling") // an operator's resume, in progress
		}
		return ""
	}
	ctx, waits := pause.RecordWaits(context.Background())
	got, err := pause.Pause(ctx, pausetest.Client(t, w), "herald-deliver", queueArn)
	require.NoError(t, err)
	require.Equal(t, []pause.Mapping{{UUID: "a", EventSourceARN: queueArn, State: "Disabling"}}, got,
		"the mapping came back Enabled: updated again")
	require.Equal(t, 2, calls)
	require.Equal(t, []time.Duration{pause.BusyWait}, waits(), "one wait, before the second update only")
	require.Equal(t, []string{"a"}, w.Updates)
}

func TestResumeRightAfterAPause(t *testing.T) {
	t.Parallel()
	w := oneMapping("Disabling") // a pause, in progress
	calls := 0
	w.BeforeUpdate = func(uuid string) string {
		if calls++; calls == 1 {
			w.Transition(uuid, "Disabling") // … and done by the next look
		}
		return ""
	}
	ctx, waits := pause.RecordWaits(context.Background())
	got, err := pause.Resume(ctx, pausetest.Client(t, w), "herald-deliver", queueArn)
	require.Equal(t, []time.Duration{pause.BusyWait}, waits())
	require.NoError(t, err)
	require.Equal(t, []pause.Mapping{{UUID: "a", EventSourceARN: queueArn, State: "Enabling"}}, got,
		"refused while disabling, enabled once disabled")
	require.Equal(t, 2, calls)
	require.Equal(t, []string{"a"}, w.Updates)
}

func TestPauseGivesUpWhenTheMappingStaysBusy(t *testing.T) {
	t.Parallel()
	for _, errType := range []string{"", "ResourceConflictException"} {
		t.Run("busy as "+errType, func(t *testing.T) {
			t.Parallel()
			w := oneMapping("Enabled")
			calls := 0
			w.BeforeUpdate = func(uuid string) string {
				calls++
				w.Transition(uuid, "Enabling") // a resume each time: never settles where the pause leads
				return errType
			}
			resp, logs, err, waits := handleWaits(t, w)
			require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}, waits,
				"1 s doubling up to 8 s, before each retry, 30 s of waits at most without a deadline")
			require.Error(t, err, "the invocation fails: the batch comes back, the errors alarm sees it")
			var inUse *types.ResourceInUseException
			var conflict *types.ResourceConflictException
			require.True(t, errors.As(err, &inUse) || errors.As(err, &conflict), "%v", err)
			require.Len(t, resp.BatchItemFailures, 2)
			require.Contains(t, logs, "could not pause")
			require.Equal(t, 6, calls, "six updates in all")
			require.Empty(t, w.Updates)
		})
	}
}

func TestPauseOtherErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	w := oneMapping("Enabled")
	w.Deny = map[string]bool{"a": true}
	calls := 0
	w.BeforeUpdate = func(string) string { calls++; return "" }
	ctx, waits := pause.RecordWaits(context.Background())
	_, err := pause.Pause(ctx, pausetest.Client(t, w), "herald-deliver", queueArn)
	require.ErrorContains(t, err, "AccessDeniedException")
	require.Empty(t, waits(), "no wait before the first update, nor after an error that is not busy")
	require.Equal(t, 1, calls)

	gone := oneMapping("Enabled")
	gone.BeforeUpdate = func(string) string {
		gone.Mappings = nil // deleted while this environment was pausing
		return "ResourceConflictException"
	}
	_, err = pause.Pause(ctx, pausetest.Client(t, gone), "herald-deliver", queueArn)
	require.ErrorIs(t, err, pause.ErrNoMapping)
}

// TestPauseStopsWaitingWhenTheInvocationEnds: a context that ends while
// the mapping is busy ends the waiting, with its cause, before the next
// update.
func TestPauseStopsWaitingWhenTheInvocationEnds(t *testing.T) {
	t.Parallel()
	w := oneMapping("Enabled")
	calls := 0
	w.BeforeUpdate = func(uuid string) string {
		calls++
		w.Transition(uuid, "Enabling")
		return ""
	}
	cause := errors.New("the invocation's deadline")
	ctx, waits := pause.EndAtFirstWait(context.Background(), cause)
	_, err := pause.Pause(ctx, pausetest.Client(t, w), "herald-deliver", queueArn)
	require.ErrorIs(t, err, cause)
	require.Equal(t, 1, calls, "no update after the context ended")
	require.Equal(t, []time.Duration{pause.BusyWait}, waits())
}

// updatingFor makes the mapping "a" Updating (a stack update changing it)
// for the first n updates, each refused with ResourceInUseException, and
// Enabled after; n < 0: for 100 updates, longer than any invocation waits
// (a pause that never stopped waiting would see it end, not hang). It
// returns the count of updates.
func updatingFor(w *pausetest.Lambda, n int) *int {
	calls := 0
	w.BeforeUpdate = func(string) string {
		calls++
		w.Mappings[0].State = "Updating"
		if n < 0 {
			n = 100
		}
		if calls > n {
			w.Mappings[0].State = "Enabled"
		}
		return ""
	}
	return &calls
}

// handleBefore runs a paused Handler on a batch of two with w under a
// context whose deadline is in d, the waits recorded instead of slept.
func handleBefore(t *testing.T, w *pausetest.Lambda, d time.Duration) (events.SQSEventResponse, string, error, []time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ctx, waits := pause.RecordWaits(ctx)
	var logs bytes.Buffer
	h := &pause.Handler{
		API: pausetest.Client(t, w), FunctionName: "herald-deliver",
		Cause:  errors.New("HERALD_WEBHOOK_SECRET: not base64"),
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	}
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", EventSourceARN: queueArn}, {MessageId: "m2", EventSourceARN: queueArn},
	}})
	return resp, logs.String(), err, waits()
}

// A stack update holds the mapping in Updating for longer than a few
// seconds: the pause waits it out within the invocation, and pauses.
func TestPauseWaitsOutAStackUpdate(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 4, 6} {
		w := oneMapping("Updating")
		calls := updatingFor(w, n)
		resp, logs, err, waits := handleBefore(t, w, time.Minute)
		require.NoError(t, err, "Updating for %d updates", n)
		require.Len(t, resp.BatchItemFailures, 2)
		require.Contains(t, logs, `"msg":"paused:`)
		require.Equal(t, []string{"a"}, w.Updates, "disabled once the stack update ended")
		require.Equal(t, n+1, *calls)
		want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}[:n]
		require.Equal(t, want, waits)
	}
}

// A mapping Updating for longer than the invocation: the waits stop before
// its deadline less the margin to answer, and the invocation fails with
// Lambda's error (the batch is handed back).
func TestPauseWaitsNoLongerThanTheInvocation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		deadline time.Duration
		waits    []time.Duration
	}{
		{time.Second, nil}, // less than the margin: no wait at all
		{4 * time.Second, []time.Duration{time.Second}}, // 1 s + 2 s would leave less than the margin
		{6 * time.Second, []time.Duration{time.Second, 2 * time.Second}},
		{20 * time.Second, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{45 * time.Second, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}},
	} {
		w := oneMapping("Updating")
		calls := updatingFor(w, -1)
		resp, logs, err, waits := handleBefore(t, w, tc.deadline)
		require.Equal(t, tc.waits, waits, "deadline in %s", tc.deadline)
		var sum time.Duration
		for _, d := range waits {
			sum += d
		}
		require.LessOrEqual(t, sum, max(0, tc.deadline-pause.BusyMargin), "within the invocation, with room to answer")
		var inUse *types.ResourceInUseException
		require.ErrorAs(t, err, &inUse)
		require.Contains(t, err.Error(), "still busy")
		require.Len(t, resp.BatchItemFailures, 2)
		require.Contains(t, logs, "could not pause")
		require.Equal(t, len(tc.waits)+1, *calls)
		require.Empty(t, w.Updates)
	}
}

// Each Lambda call takes time too (here half a second, as a slow control
// plane can): the waits and the calls together stay within the invocation
// less the margin. Counting only the waits, 1 s and 2 s fit in 3.5 s, and
// the third update started with the margin already spent.
func TestPauseCountsTheCallsTimeAgainstTheInvocation(t *testing.T) {
	t.Parallel()
	w := oneMapping("Updating")
	calls := updatingFor(w, -1)
	refuse := w.BeforeUpdate
	w.BeforeUpdate = func(uuid string) string {
		time.Sleep(500 * time.Millisecond) // the call's latency, not a synchronisation
		return refuse(uuid)
	}
	_, _, err, waits := handleBefore(t, w, pause.BusyMargin+3500*time.Millisecond)
	require.Equal(t, []time.Duration{time.Second}, waits, "after 1 s of calls and a 1 s wait, 2 s more do not fit in 3.5 s")
	require.Equal(t, 2, *calls)
	require.ErrorContains(t, err, "still busy after 1s of waiting and 1")
}
