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
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/testkit/pausetest"
	"github.com/heraldhq/herald/notification"
)

const (
	emailQueueARN   = "arn:aws:sqs:us-east-1:123456789012:herald-email"
	webhookQueueARN = "arn:aws:sqs:us-east-1:123456789012:herald-webhook"
)

var channelQueues = []redrive.Queue{
	{Channel: notification.ChannelEmail, URL: "https://sqs.us-east-1.amazonaws.com/123456789012/herald-email", DeadLetterURL: "https://sqs.us-east-1.amazonaws.com/123456789012/herald-email-dlq"},
	{Channel: notification.ChannelWebhook, URL: "https://sqs.us-east-1.amazonaws.com/123456789012/herald-webhook", DeadLetterURL: "https://sqs.us-east-1.amazonaws.com/123456789012/herald-webhook-dlq"},
}

type gateBundle struct {
	w         *pausetest.Lambda
	gate      *pause.Gate
	logs      *bytes.Buffer
	delivered []string // the queue ARN of each batch handed to Deliver
}

// gateSetup: the webhook channel could not start; the email channel can.
func gateSetup(t *testing.T) *gateBundle {
	t.Helper()
	b := &gateBundle{logs: &bytes.Buffer{}, w: &pausetest.Lambda{PageSize: 1, Mappings: []pausetest.Mapping{
		{UUID: "email-1", FunctionArn: fnArn, EventSourceArn: emailQueueARN, State: "Enabled"},
		{UUID: "webhook-1", FunctionArn: fnArn, EventSourceArn: webhookQueueARN, State: "Enabled"},
	}}}
	b.gate = &pause.Gate{
		Deliver: func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			b.delivered = append(b.delivered, ev.Records[0].EventSourceARN)
			return events.SQSEventResponse{}, nil
		},
		Queues: channelQueues,
		Causes: map[redrive.Queue]error{channelQueues[1]: errors.New("webhook signing secret: HERALD_WEBHOOK_SECRET: not base64")},
		Paused: pause.Handler{API: pausetest.Client(t, b.w), FunctionName: "herald-deliver", Logger: slog.New(slog.NewJSONHandler(b.logs, nil))},
	}
	return b
}

func batch(arn string, ids ...string) events.SQSEvent {
	var ev events.SQSEvent
	for _, id := range ids {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: id, EventSourceARN: arn})
	}
	return ev
}

// TestGatePausesOnlyTheChannelThatCannotStart: the email batch is
// delivered; the webhook batch pauses the webhook mapping alone, is handed
// back whole, and the ERROR line and the Paused metric name the channel.
func TestGatePausesOnlyTheChannelThatCannotStart(t *testing.T) {
	t.Parallel()
	b := gateSetup(t)
	resp, err := b.gate.Handle(context.Background(), batch(emailQueueARN, "e1", "e2"))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Equal(t, []string{emailQueueARN}, b.delivered)
	require.Empty(t, b.w.Updates)

	resp, err = b.gate.Handle(context.Background(), batch(webhookQueueARN, "w1", "w2"))
	require.NoError(t, err)
	require.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "w1"}, {ItemIdentifier: "w2"}}, resp.BatchItemFailures)
	require.Equal(t, []string{emailQueueARN}, b.delivered, "not delivered")
	require.Equal(t, []string{"webhook-1"}, b.w.Updates, "the webhook mapping alone")
	require.Equal(t, "Enabled", b.w.Mappings[0].State)

	line := b.logs.String()
	require.NoError(t, metrics.Validate([]byte(strings.TrimSpace(line)), time.Time{}))
	var l map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &l))
	require.Equal(t, "ERROR", l["level"])
	require.Equal(t, "webhook", l[metrics.DimChannel])
	require.Contains(t, l["msg"], "paused channel webhook")
	require.Equal(t, pause.ResumeCommand("webhook-1"), l["resume"])
	require.EqualValues(t, 1, l[metrics.Paused])
	require.Contains(t, line, `"Dimensions":[["function","channel"]]`, "Paused by function and channel alone: the channel's alarm, not the alarm of everything")
}

// TestGatePausesAtStart: before any batch, the queue that cannot be served
// has its mapping paused, so none of its messages is received.
func TestGatePausesAtStart(t *testing.T) {
	t.Parallel()
	b := gateSetup(t)
	require.Empty(t, b.gate.PauseAtStart(context.Background()))
	require.Equal(t, []string{"webhook-1"}, b.w.Updates)
	require.Equal(t, "Disabling", b.w.Mappings[1].State)
	require.Equal(t, "Enabled", b.w.Mappings[0].State)
	require.Contains(t, b.logs.String(), `"channel":"webhook"`)
	require.Contains(t, b.logs.String(), `"records":0`)

	// No mapping from that queue: said, and left to the first batch.
	b = gateSetup(t)
	b.w.Mappings = b.w.Mappings[:1]
	errs := b.gate.PauseAtStart(context.Background())
	require.Len(t, errs, 1)
	require.ErrorIs(t, errs[0], pause.ErrNoMapping)
}

// TestGatePausesAtStartWithinTheInitPhase: a mapping held busy (Updating,
// a stack update) at cold start is waited for no longer than Lambda's
// 10-second Init phase allows: the waits end 2 s before 8 s, and the queue
// is left to its first batch.
func TestGatePausesAtStartWithinTheInitPhase(t *testing.T) {
	t.Parallel()
	b := gateSetup(t)
	b.w.BeforeUpdate = func(uuid string) string {
		b.w.Mappings[1].State = "Updating"
		return ""
	}
	ctx, waits := pause.RecordWaits(context.Background())
	errs := b.gate.PauseAtStart(ctx)
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "ResourceInUseException")
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, waits(), "1 s + 2 s fit in 8 s less the 2 s margin, 4 s more does not")
	require.Empty(t, b.w.Updates)
}

// TestGateWithTheQueueOfEveryChannel: a queue that serves every channel
// pauses with whatever cause it is given, and its line has no channel.
func TestGateWithTheQueueOfEveryChannel(t *testing.T) {
	t.Parallel()
	b := gateSetup(t)
	shared := redrive.Queue{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/herald-notifications", DeadLetterURL: "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq"}
	b.w.Mappings = append(b.w.Mappings, pausetest.Mapping{UUID: "shared-1", FunctionArn: fnArn, EventSourceArn: "arn:aws:sqs:us-east-1:123456789012:herald-notifications", State: "Enabled"})
	b.gate.Queues = append(b.gate.Queues, shared)
	b.gate.Causes = map[redrive.Queue]error{shared: errors.New("webhook signing secret: bad")}
	_, err := b.gate.Handle(context.Background(), batch("arn:aws:sqs:us-east-1:123456789012:herald-notifications", "s1"))
	require.NoError(t, err)
	require.Equal(t, []string{"shared-1"}, b.w.Updates)
	require.NotContains(t, b.logs.String(), `"channel"`)

	_, err = b.gate.Handle(context.Background(), batch(webhookQueueARN, "w1"))
	require.NoError(t, err)
	require.Equal(t, []string{webhookQueueARN}, b.delivered, "a queue without a cause is served")
}

// TestQueuePauserPausesOneChannel: the processor's request (SES sending
// paused) pauses the email queue's mapping alone, with the channel's ERROR
// line and Paused metric.
func TestQueuePauserPausesOneChannel(t *testing.T) {
	t.Parallel()
	b := gateSetup(t)
	p := pause.QueuePauser{Handler: b.gate.Paused}
	cause := errors.New("ses_sending_paused: send email n-1: SES SendingPausedException")
	require.NoError(t, p.PauseQueue(context.Background(), channelQueues[0], emailQueueARN, cause))
	require.Equal(t, []string{"email-1"}, b.w.Updates)
	require.Equal(t, "Enabled", b.w.Mappings[1].State, "the webhook channel is not touched")
	line := b.logs.String()
	require.Contains(t, line, `"channel":"email"`)
	require.Contains(t, line, "SendingPausedException")
	require.Contains(t, line, pause.ResumeCommand("email-1"))
	require.NoError(t, metrics.Validate([]byte(strings.TrimSpace(line)), time.Time{}))

	b.w.Deny = map[string]bool{"webhook-1": true}
	require.ErrorContains(t, p.PauseQueue(context.Background(), channelQueues[1], webhookQueueARN, cause), "AccessDenied")
}
