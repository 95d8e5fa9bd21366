package processor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// TestMisroutedFIFONotificationKeepsItsGroupWhenMoved: on FIFO channel
// queues a record moved to its own channel's queue keeps its message group
// (one without a group gets herald's) and is deduplicated by its message
// id, so a repeated move stores one copy.
func TestMisroutedFIFONotificationKeepsItsGroupWhenMoved(t *testing.T) {
	t.Parallel()
	const (
		emailFIFO   = "https://sqs.us-east-1.amazonaws.com/123456789012/h-email.fifo"
		webhookFIFO = "https://sqs.us-east-1.amazonaws.com/123456789012/h-webhook.fifo"
		emailARN    = "arn:aws:sqs:us-east-1:123456789012:h-email.fifo"
	)
	b := setup(t, func(c *processor.Config) {
		c.QueueURL, c.DeadLetterQueueURL = "", ""
		c.Queues = []redrive.Queue{
			{Channel: notification.ChannelEmail, URL: emailFIFO, DeadLetterURL: "https://sqs.us-east-1.amazonaws.com/123456789012/h-email-dlq.fifo"},
			{Channel: notification.ChannelWebhook, URL: webhookFIFO, DeadLetterURL: "https://sqs.us-east-1.amazonaws.com/123456789012/h-webhook-dlq.fifo"},
		}
		delete(c.Senders, notification.ChannelWebhook)
	})
	for _, u := range []string{emailFIFO, webhookFIFO} {
		b.wire.AddQueue(u, nil)
	}
	grouped := fifoRec("m1", "g1", webhookBody("ok-grouped"), 1)
	grouped.EventSourceARN = emailARN
	ungrouped := rec("m2", webhookBody("ok-ungrouped"), 1)
	ungrouped.EventSourceARN = emailARN
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{grouped, ungrouped}})
	require.NoError(t, err)
	require.Empty(t, failures(resp), "both moved and acknowledged")
	type sendIn struct{ QueueUrl, MessageGroupId, MessageDeduplicationId string }
	var got []sendIn
	for _, raw := range b.wire.Requests("SendMessage") {
		var s sendIn
		require.NoError(t, json.Unmarshal(raw, &s))
		got = append(got, s)
	}
	require.ElementsMatch(t, []sendIn{
		{QueueUrl: webhookFIFO, MessageGroupId: "g1", MessageDeduplicationId: "m1"},
		{QueueUrl: webhookFIFO, MessageGroupId: "herald", MessageDeduplicationId: "m2"},
	}, got)
	require.Len(t, b.wire.Messages(webhookFIFO), 2)
}
