package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

const (
	emailQueue   = "https://sqs.us-east-1.amazonaws.com/123456789012/h-email"
	emailDLQ     = "https://sqs.us-east-1.amazonaws.com/123456789012/h-email-dlq"
	webhookQueue = "https://sqs.us-east-1.amazonaws.com/123456789012/h-webhook"
	webhookDLQ   = "https://sqs.us-east-1.amazonaws.com/123456789012/h-webhook-dlq"
	emailARN     = "arn:aws:sqs:us-east-1:123456789012:h-email"
	webhookARN   = "arn:aws:sqs:us-east-1:123456789012:h-webhook"
)

func emailOf(id string) string {
	return `{"version":1,"id":"` + id + `","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"t"}}`
}

// channelQueues is a processor with an email and a webhook queue and no
// queue of every channel; without lets a test leave a channel's sender out
// (its setup failed).
func channelQueues(t *testing.T, without ...notification.Channel) *bundle {
	t.Helper()
	b := setup(t, func(c *processor.Config) {
		c.QueueURL, c.DeadLetterQueueURL = "", ""
		c.Queues = []redrive.Queue{
			{Channel: notification.ChannelEmail, URL: emailQueue, DeadLetterURL: emailDLQ},
			{Channel: notification.ChannelWebhook, URL: webhookQueue, DeadLetterURL: webhookDLQ},
		}
		for _, ch := range without {
			delete(c.Senders, ch)
		}
	})
	for _, u := range []string{emailQueue, emailDLQ, webhookQueue, webhookDLQ} {
		b.wire.AddQueue(u, nil)
	}
	return b
}

func from(arn string, m events.SQSMessage) events.SQSMessage {
	m.EventSourceARN = arn
	return m
}

type sent struct {
	QueueUrl    string
	MessageBody string
}

func sends(t *testing.T, b *bundle) []sent {
	var out []sent
	for _, raw := range b.wire.Requests("SendMessage") {
		var s sent
		require.NoError(t, json.Unmarshal(raw, &s))
		out = append(out, s)
	}
	return out
}

// TestEachRecordRetriesAndDeadLettersOnItsOwnQueue: a retry changes the
// visibility on the record's queue, a dead letter goes to that queue's
// dead-letter queue.
func TestEachRecordRetriesAndDeadLettersOnItsOwnQueue(t *testing.T) {
	t.Parallel()
	b := channelQueues(t)
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		from(webhookARN, rec("w-retry", webhookBody("transient-w"), 1)),
		from(webhookARN, rec("w-gone", webhookBody("permanent-w"), 1)),
	}})
	require.NoError(t, err)
	require.Equal(t, []string{"w-retry"}, failures(resp))
	vis := b.wire.Requests("ChangeMessageVisibilityBatch")
	require.Len(t, vis, 1)
	require.Contains(t, string(vis[0]), `"QueueUrl":"`+webhookQueue+`"`)
	require.Equal(t, []sent{{QueueUrl: webhookDLQ, MessageBody: webhookBody("permanent-w")}}, sends(t, b))

	resp, err = b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		from(emailARN, rec("e-retry", emailOf("transient-e"), 1)),
		from(emailARN, rec("e-gone", emailOf("permanent-e"), 1)),
		from(emailARN, rec("e-bad", `{"version":1,"id":"e-bad","channel":"email"}`, 1)),
	}})
	require.NoError(t, err)
	require.Equal(t, []string{"e-retry"}, failures(resp))
	vis = b.wire.Requests("ChangeMessageVisibilityBatch")
	require.Len(t, vis, 2)
	require.Contains(t, string(vis[1]), `"QueueUrl":"`+emailQueue+`"`)
	got := sends(t, b)[1:]
	require.Len(t, got, 2)
	for _, s := range got {
		require.Equal(t, emailDLQ, s.QueueUrl, "an email queue's dead letters, the invalid one too")
	}
}

// TestMisroutedNotificationIsDeliveredWhereItIs: a webhook on the email
// queue, with the webhook channel up, is delivered from the email queue
// and its line names the queue's channel.
func TestMisroutedNotificationIsDeliveredWhereItIs(t *testing.T) {
	t.Parallel()
	b := channelQueues(t)
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		from(emailARN, rec("m1", webhookBody("ok-misrouted"), 1)),
		from(emailARN, rec("m2", emailOf("ok-routed"), 1)),
	}})
	require.NoError(t, err)
	require.Empty(t, failures(resp))
	_, ok := b.sent.Load("ok-misrouted")
	require.True(t, ok, "delivered")
	require.Empty(t, sends(t, b), "not moved")
	lines := b.logs.lines(t)
	require.Len(t, lines, 2)
	require.Equal(t, "delivered", lines[0]["outcome"])
	require.Equal(t, "email", lines[0]["queue_channel"], "the misrouting is visible")
	require.NotContains(t, lines[1], "queue_channel", "a record on its own queue")
}

// TestMisroutedNotificationOfADownChannelMovesToItsQueue: a webhook on the
// email queue while the webhook channel cannot start is moved, unchanged,
// to the webhook queue (where it waits for the webhook channel) and
// acknowledged; when the move fails it stays, reported failed.
func TestMisroutedNotificationOfADownChannelMovesToItsQueue(t *testing.T) {
	t.Parallel()
	b := channelQueues(t, notification.ChannelWebhook)
	m := from(emailARN, rec("m1", webhookBody("ok-moved"), 2))
	m.MessageAttributes = map[string]events.SQSMessageAttribute{"trace": {DataType: "String", StringValue: ptr("abc")}}
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m, from(emailARN, rec("m2", emailOf("ok-e"), 1))}})
	require.NoError(t, err)
	require.Empty(t, failures(resp), "moved and acknowledged")
	_, tried := b.sent.Load("ok-moved")
	require.False(t, tried, "not attempted")
	stored := b.wire.Messages(webhookQueue)
	require.Len(t, stored, 1)
	require.Equal(t, webhookBody("ok-moved"), stored[0].Body, "the body unchanged")
	require.Equal(t, "abc", *stored[0].MsgAttrs["trace"].StringValue, "its attributes too")
	require.Empty(t, b.wire.Messages(emailDLQ))
	lines := b.logs.lines(t)
	require.Equal(t, "moved", lines[0]["outcome"])
	require.Equal(t, webhookQueue, lines[0]["moved_to"])
	require.Equal(t, "delivered", lines[1]["outcome"])

	// The send fails: the record stays on the email queue.
	b = channelQueues(t, notification.ChannelWebhook)
	b.wire.FailAction("SendMessage")
	resp, err = b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{from(emailARN, rec("m1", webhookBody("ok-moved"), 1))}})
	require.NoError(t, err)
	require.Equal(t, []string{"m1"}, failures(resp))
	require.Equal(t, "failed", b.logs.lines(t)[0]["outcome"])
}

// TestRecordOfAnUnknownQueueIsHandedBack: with several queues, a record
// from none of them is neither attempted nor acknowledged.
func TestRecordOfAnUnknownQueueIsHandedBack(t *testing.T) {
	t.Parallel()
	b := channelQueues(t)
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		from("arn:aws:sqs:us-east-1:123456789012:someone-else", rec("m1", webhookBody("ok-1"), 1)),
	}})
	require.NoError(t, err)
	require.Equal(t, []string{"m1"}, failures(resp))
	_, tried := b.sent.Load("ok-1")
	require.False(t, tried)
	l := b.logs.lines(t)[0]
	require.Equal(t, "failed", l["outcome"])
	require.Equal(t, string(processor.ClassUnknownQueue), l["error_class"])
}

func TestNewRefusesBadQueues(t *testing.T) {
	t.Parallel()
	_, client := newSQSWire(t)
	for _, tc := range []struct {
		queues []redrive.Queue
		want   string
	}{
		{nil, "QueueURL is required"},
		{[]redrive.Queue{{Channel: "email", DeadLetterURL: emailDLQ}}, `the queue of channel "email" has no URL`},
		{[]redrive.Queue{{Channel: "email", URL: emailQueue}}, "has no dead-letter queue URL"},
		{[]redrive.Queue{{Channel: "email", URL: emailQueue, DeadLetterURL: emailDLQ}, {Channel: "email", URL: webhookQueue, DeadLetterURL: webhookDLQ}}, `two queues of channel "email"`},
		{[]redrive.Queue{{Channel: "email", URL: emailQueue, DeadLetterURL: emailDLQ}, {Channel: "webhook", URL: emailQueue, DeadLetterURL: webhookDLQ}}, "is given twice"},
	} {
		_, err := processor.New(client, processor.Config{Queues: tc.queues, MaxReceiveCount: 3})
		require.ErrorContains(t, err, tc.want)
	}
	_, err := processor.New(client, processor.Config{Queues: []redrive.Queue{{URL: emailQueue}}, QueueURL: webhookQueue, MaxReceiveCount: 3})
	require.ErrorContains(t, err, "DeadLetterQueueURL is required")
}

func ptr(s string) *string { return &s }

// TestRecordOfADownChannelOnItsOwnQueueIsNotMovedToItself: without a
// sender for the queue's own channel (the gate pauses such a queue before
// the processor sees it) the record is dead-lettered with its reason, as
// on a queue of every channel, never sent back to its own queue.
func TestRecordOfADownChannelOnItsOwnQueueIsNotMovedToItself(t *testing.T) {
	t.Parallel()
	b := channelQueues(t, notification.ChannelWebhook)
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{from(webhookARN, rec("w1", webhookBody("ok-w"), 1))}})
	require.NoError(t, err)
	require.Empty(t, failures(resp))
	require.Empty(t, b.wire.Messages(webhookQueue), "not moved to itself")
	require.Len(t, b.wire.Messages(webhookDLQ), 1)
	require.Equal(t, "channel_not_configured", b.logs.lines(t)[0]["error_class"])
}

// TestBatchOfAChannelQueueReportsPausedZeroForItsChannel: the batch line
// of a channel queue carries Paused 0 by function and by function and
// channel, so that channel's paused alarm returns to OK; a queue of every
// channel's, by function alone.
func TestBatchOfAChannelQueueReportsPausedZeroForItsChannel(t *testing.T) {
	t.Parallel()
	pausedLine := func(b *bundle) map[string]any {
		t.Helper()
		b.logs.lines(t) // every line is EMF
		for _, l := range strings.Split(strings.TrimSpace(b.logs.b.String()), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m))
			if _, ok := m["Paused"]; ok {
				return m
			}
		}
		t.Fatalf("no line with Paused: %s", b.logs.b.String())
		return nil
	}
	b := channelQueues(t)
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{from(webhookARN, rec("w1", webhookBody("ok-w"), 1))}})
	require.NoError(t, err)
	l := pausedLine(b)
	require.EqualValues(t, 0, l["Paused"])
	require.Equal(t, "webhook", l["channel"])
	require.Contains(t, b.logs.b.String(), `"Dimensions":[["function"],["function","channel"]]`)

	// A webhook on the email queue: the line's channel is the record's,
	// so the batch's Paused (by the email queue's channel) goes apart.
	b = channelQueues(t)
	_, err = b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{from(emailARN, rec("w1", webhookBody("ok-w"), 1))}})
	require.NoError(t, err)
	l = pausedLine(b)
	require.Equal(t, "email", l["channel"], "Paused 0 for the email queue's channel")
	require.NotContains(t, l, "outcome", "on a line of its own")

	shared := setup(t, nil)
	_, err = shared.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("w1", webhookBody("ok-w"), 1)}})
	require.NoError(t, err)
	require.EqualValues(t, 0, pausedLine(shared)["Paused"])
	require.NotContains(t, shared.logs.b.String(), `["function","channel"]]`, "a queue of every channel: by function alone")
}

// pauserFunc records the processor's pause requests.
type pauserFunc func(q redrive.Queue, sourceARN string, cause error) error

func (f pauserFunc) PauseQueue(_ context.Context, q redrive.Queue, sourceARN string, cause error) error {
	return f(q, sourceARN, cause)
}

// TestATransportThatRefusesEverySendPausesItsChannelQueue: SES answering
// that sending is paused (delivery.PausesChannel) makes the processor ask,
// once per batch, for the email queue's mapping to be paused; the records
// keep their retry with the long delay. A queue of every channel is never
// paused so, nor is a channel for an ordinary failure.
func TestATransportThatRefusesEverySendPausesItsChannelQueue(t *testing.T) {
	t.Parallel()
	paused := &delivery.TransientError{Class: "ses_sending_paused", RetryAfter: time.Hour, Err: errors.New("SendingPausedException"), PausesChannel: true}
	type call struct {
		channel notification.Channel
		arn     string
	}
	var calls []call
	pauser := pauserFunc(func(q redrive.Queue, arn string, cause error) error {
		require.ErrorIs(t, cause, paused)
		calls = append(calls, call{q.Channel, arn})
		return nil
	})
	refuse := senderFunc(func(context.Context, *notification.Message) error { return paused })
	b := channelQueues(t)
	p, err := processor.New(b.wire.Client(), processor.Config{
		Queues:          []redrive.Queue{{Channel: notification.ChannelEmail, URL: emailQueue, DeadLetterURL: emailDLQ}, {Channel: notification.ChannelWebhook, URL: webhookQueue, DeadLetterURL: webhookDLQ}},
		MaxReceiveCount: 5, Senders: map[notification.Channel]processor.Sender{notification.ChannelEmail: refuse, notification.ChannelWebhook: refuse},
		Pauser: pauser, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	resp, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		from(emailARN, rec("e1", emailOf("e-1"), 1)), from(emailARN, rec("e2", emailOf("e-2"), 1)),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"e1", "e2"}, failures(resp), "retried, as before")
	require.Equal(t, []call{{notification.ChannelEmail, emailARN}}, calls, "one pause, of the email queue")

	// A queue of every channel: not paused.
	calls = nil
	shared, err := processor.New(b.wire.Client(), processor.Config{
		QueueURL: emailQueue, DeadLetterQueueURL: emailDLQ, MaxReceiveCount: 5,
		Senders: map[notification.Channel]processor.Sender{notification.ChannelEmail: refuse}, Pauser: pauser,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	_, err = shared.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{from(emailARN, rec("e1", emailOf("e-1"), 1))}})
	require.NoError(t, err)
	require.Empty(t, calls)

	// An ordinary failure: not paused.
	fails := senderFunc(func(context.Context, *notification.Message) error {
		return &delivery.TransientError{Class: "ses_throttled", RetryAfter: time.Minute, Err: errors.New("Throttling")}
	})
	ordinary, err := processor.New(b.wire.Client(), processor.Config{
		Queues: []redrive.Queue{{Channel: notification.ChannelEmail, URL: emailQueue, DeadLetterURL: emailDLQ}}, MaxReceiveCount: 5,
		Senders: map[notification.Channel]processor.Sender{notification.ChannelEmail: fails}, Pauser: pauser,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	_, err = ordinary.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{from(emailARN, rec("e3", emailOf("e-3"), 1))}})
	require.NoError(t, err)
	require.Empty(t, calls)
}
