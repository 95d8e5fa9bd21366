package app_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/notification"
)

// TestCheckQueuesNamesTheEnvironmentVariables: the deliver function's queue
// check reports a disagreement by the variables the operator sets.
func TestCheckQueuesNamesTheEnvironmentVariables(t *testing.T) {
	t.Parallel()
	const (
		mainURL = "https://sqs.us-east-1.amazonaws.com/123456789012/herald"
		dlqURL  = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq"
	)
	srv := sqstest.New(t)
	srv.AddQueue(mainURL, map[string]string{
		"MessageRetentionPeriod": "86400",
		"RedrivePolicy":          `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:other","maxReceiveCount":5}`,
	})
	srv.AddQueue(dlqURL, map[string]string{"MessageRetentionPeriod": "1209600"})
	cfg, err := config.LoadDeliver(func(k string) string {
		return map[string]string{"HERALD_QUEUE_URL": mainURL, "HERALD_DLQ_URL": dlqURL, "HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}[k]
	})
	require.NoError(t, err)
	awsCfg := awstest.Config(srv.URL())

	err = app.CheckQueues(context.Background(), cfg, awsCfg, 0)
	for _, want := range []string{"HERALD_MAX_RECEIVE_COUNT 13", "HERALD_DLQ_URL's queue", "HERALD_BACKOFF_BASE_SECONDS 1m0s", "HERALD_BACKOFF_CAP_SECONDS 6h0m0s"} {
		require.ErrorContains(t, err, want)
	}

	cfg.CheckQueues = false
	require.NoError(t, app.CheckQueues(context.Background(), cfg, awsCfg, 0), "off: no call")
	require.Len(t, srv.Requests("GetQueueAttributes"), 2)
}

// TestQueueCauses: a channel's setup error stops its own queue and the
// queue of every channel, never another channel's; a queue's own check
// stops that queue alone.
func TestQueueCauses(t *testing.T) {
	t.Parallel()
	email := redrive.Queue{Channel: notification.ChannelEmail, URL: "e", DeadLetterURL: "ed"}
	hook := redrive.Queue{Channel: notification.ChannelWebhook, URL: "w", DeadLetterURL: "wd"}
	shared := redrive.Queue{URL: "s", DeadLetterURL: "sd"}
	secret := errors.New("webhook signing secret: bad")
	got := app.QueueCauses([]redrive.Queue{email, hook, shared}, map[notification.Channel]error{notification.ChannelWebhook: secret}, nil)
	require.Len(t, got, 2)
	require.NotContains(t, got, email, "email is served")
	require.ErrorIs(t, got[hook], secret)
	require.ErrorIs(t, got[shared], secret)

	refused := errors.New("queue settings: e has no RedrivePolicy")
	got = app.QueueCauses([]redrive.Queue{email, hook}, nil, map[redrive.Queue]error{email: refused})
	require.Len(t, got, 1)
	require.ErrorIs(t, got[email], refused)
	require.Empty(t, app.QueueCauses([]redrive.Queue{email, hook}, map[notification.Channel]error{}, nil))
}
