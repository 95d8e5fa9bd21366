package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/retention"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

const (
	webhookDLQ = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-webhook-dlq"
	emailDLQ   = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-email-dlq"
)

// schedule is the event EventBridge Scheduler's rule hands the function.
const schedule = `{"version":"0","id":"53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa","detail-type":"Scheduled Event","source":"aws.events","account":"123456789012","time":"2026-12-01T12:00:00Z","region":"us-east-1","resources":["arn:aws:events:us-east-1:123456789012:rule/herald-retention"],"detail":{}}`

// setup points the SDK at an SQS fake holding both dead-letter queues, each
// with a letter of 8 days and one of 1 hour, and sets env over the
// channels' dead-letter queue variables.
func setup(t *testing.T, env map[string]string) *sqstest.Server {
	srv := sqstest.New(t)
	now := time.Now()
	for _, q := range []string{webhookDLQ, emailDLQ} {
		srv.AddQueue(q, map[string]string{"MessageRetentionPeriod": "1209600"})
		srv.Put(q, `{"id":"old"}`, now.Add(-8*24*time.Hour), nil)
		srv.Put(q, `{"id":"young"}`, now.Add(-time.Hour), nil)
	}
	awstest.Setenv(t, map[string]string{"SQS": srv.URL()})
	vars := map[string]string{"HERALD_WEBHOOK_DLQ_URL": webhookDLQ, "HERALD_EMAIL_DLQ_URL": emailDLQ, "HERALD_LOG_LEVEL": ""}
	for k, v := range env {
		vars[k] = v
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	return srv
}

func bodies(srv *sqstest.Server, url string) []string {
	var out []string
	for _, m := range srv.Messages(url) {
		out = append(out, m.Body)
	}
	return out
}

// TestStartSweepsEachDeadLetterQueue: an invocation of the cold start's
// handler sweeps every channel's dead-letter queue: the letters older than
// HERALD_DLQ_MAX_AGE_HOURS (168 by default) are deleted, the others kept,
// the totals returned and logged on stdout.
func TestStartSweepsEachDeadLetterQueue(t *testing.T) { // t.Setenv: not parallel
	srv := setup(t, nil)
	var stdout bytes.Buffer
	handle, err := start(context.Background(), &stdout)
	require.NoError(t, err)
	// As Lambda invokes it: the schedule's event in, the summary's JSON out.
	out, err := lambda.NewHandler(handle).Invoke(context.Background(), []byte(schedule))
	require.NoError(t, err)
	require.JSONEq(t, `{"scanned":4,"deleted":2,"kept":2,"failed":0}`, string(out))
	for _, q := range []string{webhookDLQ, emailDLQ} {
		require.Equal(t, []string{`{"id":"young"}`}, bodies(srv, q), q)
	}
	require.Equal(t, 2, strings.Count(stdout.String(), `"msg":"retention sweep"`), "a summary line per queue: %s", stdout.String())
	require.Equal(t, 2, strings.Count(stdout.String(), `"msg":"dead letter deleted"`))
}

// TestStartSettings: HERALD_DLQ_MAX_AGE_HOURS=200 keeps the letters of 8
// days (192 hours); HERALD_LOG_LEVEL=ERROR leaves the INFO lines out.
func TestStartSettings(t *testing.T) {
	srv := setup(t, map[string]string{"HERALD_DLQ_MAX_AGE_HOURS": "200", "HERALD_LOG_LEVEL": "ERROR"})
	var stdout bytes.Buffer
	handle, err := start(context.Background(), &stdout)
	require.NoError(t, err)
	sum, err := handle(context.Background(), []byte(schedule))
	require.NoError(t, err)
	require.Equal(t, retention.Summary{Scanned: 4, Kept: 4}, sum)
	require.Len(t, srv.Messages(webhookDLQ), 2)
	require.Empty(t, stdout.String())
}

// TestStartFails: a configuration it cannot use, or no AWS configuration,
// fails the cold start.
func TestStartFails(t *testing.T) {
	for name, c := range map[string]struct {
		env  map[string]string
		want string
	}{
		"max age out of range": {map[string]string{"HERALD_DLQ_MAX_AGE_HOURS": "0"}, "configuration: HERALD_DLQ_MAX_AGE_HOURS"},
		"no dead-letter queue": {map[string]string{"HERALD_WEBHOOK_DLQ_URL": "", "HERALD_EMAIL_DLQ_URL": ""}, "configuration: HERALD_EMAIL_DLQ_URL: required"},
		"no AWS configuration": {map[string]string{"AWS_PROFILE": "no-such-profile"}, "load AWS config"},
	} {
		t.Run(name, func(t *testing.T) {
			setup(t, c.env)
			handle, err := start(context.Background(), &bytes.Buffer{})
			require.Nil(t, handle)
			require.ErrorContains(t, err, c.want)
		})
	}
}
