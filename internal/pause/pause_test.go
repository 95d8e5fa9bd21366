package pause_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/internal/testkit/pausetest"
)

const fnArn = "arn:aws:lambda:us-east-1:123456789012:function:herald-deliver"

const queueArn = "arn:aws:sqs:us-east-1:123456789012:herald-notifications"

func TestPauseDisablesOnlyTheFunctionsMappingsFromTheQueue(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{PageSize: 1, Mappings: []pausetest.Mapping{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
		{UUID: "b", FunctionArn: fnArn, EventSourceArn: "arn:aws:sqs:us-east-1:123456789012:other", State: "Enabled"},
		{UUID: "c", FunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:someone-else", EventSourceArn: queueArn, State: "Enabled"},
		{UUID: "d", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Disabled"},
		{UUID: "e", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
		{UUID: "f", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Disabling"},
	}}
	c := pausetest.Client(t, w)
	got, err := pause.Pause(context.Background(), c, "herald-deliver", queueArn)
	require.NoError(t, err)
	require.Equal(t, []pause.Mapping{
		{UUID: "a", EventSourceARN: queueArn, State: "Disabling"},
		{UUID: "d", EventSourceARN: queueArn, State: "Disabled"},
		{UUID: "e", EventSourceARN: queueArn, State: "Disabling"},
		{UUID: "f", EventSourceARN: queueArn, State: "Disabling"},
	}, got, "every page; a disabled or disabling mapping is not updated")
	require.Equal(t, []string{"a", "e"}, w.Updates)

	w.Mappings[5].State = "Disabled" // someone else's update has finished
	got, err = pause.Resume(context.Background(), c, "herald-deliver", queueArn)
	require.NoError(t, err)
	require.Len(t, got, 4)
	for _, m := range got {
		require.Equal(t, "Enabling", m.State)
	}

	w.Updates = nil
	_, err = pause.Resume(context.Background(), c, "herald-deliver", queueArn)
	require.NoError(t, err)
	require.Empty(t, w.Updates, "an enabling mapping is not updated again")
	w.Mappings[0].State = "Enabled"
	_, err = pause.Resume(context.Background(), c, "herald-deliver", queueArn)
	require.NoError(t, err)
	require.Empty(t, w.Updates, "nor an enabled one")
}

func TestPauseErrors(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{PageSize: 10, Deny: map[string]bool{"a": true}, Mappings: []pausetest.Mapping{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
	}}
	c := pausetest.Client(t, w)
	_, err := pause.Pause(context.Background(), c, "herald-deliver", queueArn)
	require.ErrorContains(t, err, "AccessDenied")
	require.ErrorContains(t, err, "update event source mapping a")

	_, err = pause.Pause(context.Background(), c, "herald-deliver", "arn:aws:sqs:us-east-1:123456789012:none")
	require.ErrorIs(t, err, pause.ErrNoMapping)
}

func TestHandlerPausesHandsBackAndSaysHowToResume(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{PageSize: 10, Mappings: []pausetest.Mapping{
		{UUID: "11111111-2222-3333-4444-555555555555", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
	}}
	var logs bytes.Buffer
	now := time.Now()
	h := &pause.Handler{
		API: pausetest.Client(t, w), FunctionName: "herald-deliver",
		Cause:  errors.New("webhook signing secret: HERALD_WEBHOOK_SECRET: not base64"),
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Now:    func() time.Time { return now },
	}
	require.NoError(t, h.Validate())
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", EventSourceARN: queueArn}, {MessageId: "m2", EventSourceARN: queueArn},
	}}
	resp, err := h.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m1"}, {ItemIdentifier: "m2"}}, resp.BatchItemFailures, "the batch is handed back whole")
	require.Equal(t, "Disabling", w.Mappings[0].State)

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 1, "one line per invocation")
	require.NoError(t, metrics.Validate([]byte(lines[0]), now))
	var l map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &l))
	require.Equal(t, "ERROR", l["level"])
	require.Equal(t, "webhook signing secret: HERALD_WEBHOOK_SECRET: not base64", l["error"])
	require.Equal(t, pause.ResumeCommand("11111111-2222-3333-4444-555555555555"), l["resume"])
	require.Equal(t, "aws lambda update-event-source-mapping --uuid 11111111-2222-3333-4444-555555555555 --enabled", l["resume"])
	require.EqualValues(t, 1, l[metrics.Paused])
}

func TestHandlerValidate(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, (&pause.Handler{FunctionName: "f", Cause: errors.New("x")}).Validate(), "nil API")
	c := lambda.New(lambda.Options{Region: "us-east-1"})
	require.ErrorContains(t, (&pause.Handler{API: c, Cause: errors.New("x")}).Validate(), "AWS_LAMBDA_FUNCTION_NAME")
	require.ErrorContains(t, (&pause.Handler{API: c, FunctionName: "f"}).Validate(), "Cause")
}

func TestListChangesNothing(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{PageSize: 1, Mappings: []pausetest.Mapping{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Disabled"},
		{UUID: "b", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabling"},
		{UUID: "c", FunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:someone-else", EventSourceArn: queueArn, State: "Disabled"},
	}}
	got, err := pause.List(context.Background(), pausetest.Client(t, w), "herald-deliver", "")
	require.NoError(t, err)
	require.Equal(t, []pause.Mapping{
		{UUID: "a", EventSourceARN: queueArn, State: "Disabled"},
		{UUID: "b", EventSourceARN: queueArn, State: "Enabling"},
	}, got, "every page, only the function's")
	require.False(t, got[0].Enabled())
	require.True(t, got[1].Enabled())
	require.True(t, pause.Mapping{State: "Enabled"}.Enabled())
	require.False(t, pause.Mapping{State: "Disabling"}.Enabled())
	require.Empty(t, w.Updates)

	_, err = pause.List(context.Background(), pausetest.Client(t, w), "nobody", "")
	require.ErrorIs(t, err, pause.ErrNoMapping)
}
