package main

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/internal/pause/pausetest"
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

	rows, err := resume(ctx, api, "herald-DeliverFunction-AbC", true)
	require.NoError(t, err)
	require.Equal(t, []resumeRow{
		{UUID: "a", EventSourceARN: mainQueue, State: "Disabled", Action: actionWouldEnable},
		{UUID: "b", EventSourceARN: mainQueue, State: "Enabled", Action: actionAlreadyEnabled},
	}, rows)
	require.Empty(t, w.Updates, "--dry-run changes nothing")

	rows, err = resume(ctx, api, "herald-DeliverFunction-AbC", false)
	require.NoError(t, err)
	require.Equal(t, []resumeRow{
		{UUID: "a", EventSourceARN: mainQueue, State: "Enabling", Action: actionEnabled},
		{UUID: "b", EventSourceARN: mainQueue, State: "Enabled", Action: actionAlreadyEnabled},
	}, rows)
	require.Equal(t, []string{"a"}, w.Updates, "only the disabled mapping of this function")
	require.Equal(t, "Disabled", w.Mappings[2].State)

	_, err = resume(ctx, api, "nobody", false)
	require.ErrorIs(t, err, pause.ErrNoMapping)

	w.Mappings[0].State, w.Deny = "Disabled", map[string]bool{"a": true}
	_, err = resume(ctx, api, "herald-DeliverFunction-AbC", false)
	require.ErrorContains(t, err, "AccessDeniedException")
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
