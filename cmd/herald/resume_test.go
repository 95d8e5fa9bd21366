package main

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/internal/testkit/pausetest"
)

const (
	deliverArn = "arn:aws:lambda:us-east-1:123456789012:function:herald-DeliverFunction-AbC"
	mainQueue  = "arn:aws:sqs:us-east-1:123456789012:herald-notifications"
)

func TestResumeEnablesOnlyTheDisabled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := &pausetest.Lambda{PageSize: 1, Mappings: []pausetest.Mapping{
		{UUID: "a", FunctionArn: deliverArn, EventSourceArn: mainQueue, State: "Disabled"},
		{UUID: "b", FunctionArn: deliverArn, EventSourceArn: mainQueue, State: "Enabled"},
		{UUID: "c", FunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:other", EventSourceArn: mainQueue, State: "Disabled"},
	}}
	api := pausetest.Client(t, w)

	rows, err := resume(ctx, api, "herald-DeliverFunction-AbC", "", true)
	require.NoError(t, err)
	require.Equal(t, []resumeRow{
		{UUID: "a", EventSourceARN: mainQueue, State: "Disabled", Action: actionWouldEnable},
		{UUID: "b", EventSourceARN: mainQueue, State: "Enabled", Action: actionAlreadyEnabled},
	}, rows)
	require.Empty(t, w.Updates, "--dry-run changes nothing")

	rows, err = resume(ctx, api, "herald-DeliverFunction-AbC", "", false)
	require.NoError(t, err)
	require.Equal(t, []resumeRow{
		{UUID: "a", EventSourceARN: mainQueue, State: "Enabling", Action: actionEnabled},
		{UUID: "b", EventSourceARN: mainQueue, State: "Enabled", Action: actionAlreadyEnabled},
	}, rows)
	require.Equal(t, []string{"a"}, w.Updates, "only the disabled mapping of this function")
	require.Equal(t, "Disabled", w.Mappings[2].State)

	_, err = resume(ctx, api, "nobody", "", false)
	require.ErrorIs(t, err, pause.ErrNoMapping)

	w.Mappings[0].State, w.Deny = "Disabled", map[string]bool{"a": true}
	_, err = resume(ctx, api, "herald-DeliverFunction-AbC", "", false)
	require.ErrorContains(t, err, "AccessDeniedException")
}

// TestResumeOneChannel: --channel resumes the mapping of that channel's
// queue alone; the other paused channel stays paused.
func TestResumeOneChannel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const (
		emailQ = "arn:aws:sqs:us-east-1:123456789012:herald-email"
		hookQ  = "arn:aws:sqs:us-east-1:123456789012:herald-webhook"
	)
	w := &pausetest.Lambda{PageSize: 1, Mappings: []pausetest.Mapping{
		{UUID: "e", FunctionArn: deliverArn, EventSourceArn: emailQ, State: "Disabled"},
		{UUID: "w", FunctionArn: deliverArn, EventSourceArn: hookQ, State: "Disabled"},
	}}
	api := pausetest.Client(t, w)
	hookURL := "https://sqs.us-east-1.amazonaws.com/123456789012/herald-webhook"

	rows, err := resume(ctx, api, "herald-DeliverFunction-AbC", hookURL, true)
	require.NoError(t, err)
	require.Equal(t, []resumeRow{{UUID: "w", EventSourceARN: hookQ, State: "Disabled", Action: actionWouldEnable}}, rows)

	rows, err = resume(ctx, api, "herald-DeliverFunction-AbC", hookURL, false)
	require.NoError(t, err)
	require.Equal(t, []resumeRow{{UUID: "w", EventSourceARN: hookQ, State: "Enabling", Action: actionEnabled}}, rows)
	require.Equal(t, []string{"w"}, w.Updates)
	require.Equal(t, "Disabled", w.Mappings[0].State, "email stays paused")

	_, err = resume(ctx, api, "herald-DeliverFunction-AbC", "https://sqs.us-east-1.amazonaws.com/123456789012/herald-chat", false)
	require.ErrorIs(t, err, pause.ErrNoMapping)

	r := herald(t, "", "resume", "--function", "f", "--channel", "sms")
	require.Equal(t, exitUsage, r.code, "%+v", r)
	require.Contains(t, r.stderr, `--channel "sms"`)
	r = herald(t, "", "resume", "--function", "f", "--channel", "chat")
	require.Equal(t, exitUsage, r.code, "%+v", r)
	require.Contains(t, r.stderr, "HERALD_CHAT_QUEUE_URL")
}

func TestResumeFunctionFromFlagOrStack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfn := cfnWire(t, "herald", map[string]string{outputDeliverFunction: "herald-DeliverFunction-AbC", outputQueueURL: "q"})
	outputs := func(ctx context.Context) (map[string]string, error) { return describeOutputs(ctx, cfn, "herald") }
	other := cfnWire(t, "other", map[string]string{"Foo": "x"})
	otherOutputs := func(ctx context.Context) (map[string]string, error) { return describeOutputs(ctx, other, "other") }
	unused := func(context.Context) (map[string]string, error) { return nil, errors.New("not called") }

	fn, err := resolveFunction(ctx, &globals{stack: "herald"}, "", outputs)
	require.NoError(t, err)
	require.Equal(t, "herald-DeliverFunction-AbC", fn)

	fn, err = resolveFunction(ctx, &globals{stack: "herald"}, "mine", unused)
	require.NoError(t, err)
	require.Equal(t, "mine", fn, "--function wins")

	_, err = resolveFunction(ctx, &globals{stack: "other"}, "", otherOutputs)
	require.ErrorContains(t, err, "no DeliverFunctionName output")

	_, err = resolveFunction(ctx, &globals{}, "", unused)
	var ue usageError
	require.ErrorAs(t, err, &ue)
}

func TestResumeCommandUsage(t *testing.T) {
	t.Parallel()
	r := herald(t, "", "resume")
	require.Equal(t, exitUsage, r.code, "%+v", r)
	require.Contains(t, r.stderr, "no deliver function")
	r = herald(t, "", "resume", "extra")
	require.Equal(t, exitUsage, r.code)
	r = herald(t, "", "resume", "--help")
	require.Equal(t, exitOK, r.code)
	require.Contains(t, r.stdout, "--dry-run")
}
