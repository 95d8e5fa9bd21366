package processor_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// TestDeadLetterErrorOfExactlyTheShortLengthSkipsTheShortErrorStep: a
// dead letter whose error is already no longer than the short error (256
// bytes) and that has no overflow attributes has nothing to gain from the
// short-error step: refused at full size, it is sent next with the
// shortest reason, two sends in all.
func TestDeadLetterErrorOfExactlyTheShortLengthSkipsTheShortErrorStep(t *testing.T) {
	t.Parallel()
	text := "410 Gone: " + strings.Repeat("e", 256-len("410 Gone: "))
	run := func(t *testing.T, limit int) *bundle {
		t.Helper()
		b := setup(t, func(c *processor.Config) {
			c.Senders[notification.ChannelWebhook] = senderFunc(func(context.Context, *notification.Message) error {
				return delivery.Permanent("webhook_gone", errors.New(text))
			})
		})
		b.wire.AddQueue(b.dlqURL, map[string]string{"MaximumMessageSize": strconv.Itoa(limit)})
		_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m1", webhookBody("permanent-256"), 1)}})
		require.NoError(t, err)
		return b
	}
	b := run(t, notification.SQSMaxMessageBytes)
	dl := b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Equal(t, text, dl[0].reason.Error, "256 bytes, kept whole")

	b = run(t, dl[0].size-1)
	dl = b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Equal(t, 2, len(b.wire.Requests("SendMessage")), "refused once, then the shortest reason")
	require.Contains(t, dl[0].reason.Error, "reason shortened")
}

// TestDeadLetterNoReasonFits: queues of 256 KiB, a notification answered
// 410 (webhook_gone) whose message, with its producer attributes, leaves
// less room than the shortest reason needs. It leaves the queue on its
// first receive, moved whole as it came: its body and the producer's
// attributes, no herald.reason or herald.error_class (a redriven letter's
// old ones are left out, not passed off as its reason); the class and
// error are on its log line and DeadLettersWithoutReason counts it.
func TestDeadLetterNoReasonFits(t *testing.T) {
	t.Parallel()
	const limit = 256 * 1024
	attr := func(v string) events.SQSMessageAttribute {
		return events.SQSMessageAttribute{DataType: "String", StringValue: &v}
	}
	tests := []struct {
		name  string
		under int // bytes below limit, body and attributes as SQS counts them
		attrs map[string]events.SQSMessageAttribute
		want  []string // the dead letter's attributes
		tries int
	}{
		{name: "three attributes, 64 bytes under", under: 64,
			attrs: map[string]events.SQSMessageAttribute{"tenant": attr("acme"), "trace_id": attr("1-5f84c7a1-abc"), "priority": attr("high")},
			want:  []string{"priority", "tenant", "trace_id"}, tries: 4},
		{name: "three attributes, at the limit", under: 0,
			attrs: map[string]events.SQSMessageAttribute{"tenant": attr("acme"), "trace_id": attr("1-5f84c7a1-abc"), "priority": attr("high")},
			want:  []string{"priority", "tenant", "trace_id"}, tries: 4},
		{name: "ten attributes, one byte under", under: 1,
			attrs: func() map[string]events.SQSMessageAttribute {
				m := map[string]events.SQSMessageAttribute{}
				for i := range 10 {
					m[fmt.Sprint("a", i)] = attr("v")
				}
				return m
			}(),
			want: []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"}, tries: 5},
		{name: "no attributes, 200 bytes under", under: 200, tries: 3},
		{name: "a redriven letter's old reason is left out", under: 100,
			attrs: map[string]events.SQSMessageAttribute{
				redrive.AttrReason: attr(`{"outcome":"attempts_exhausted","error_class":"webhook_http_5xx"}`), redrive.AttrErrorClass: attr("webhook_http_5xx"),
				"tenant": attr("acme"),
			},
			want: []string{"tenant"}, tries: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			b.wire.AddQueue(b.dlqURL, map[string]string{"MaximumMessageSize": strconv.Itoa(limit)})
			attrBytes := 0
			for name, a := range tt.attrs {
				attrBytes += len(name) + len(a.DataType) + len(*a.StringValue)
			}
			head := `{"version":1,"id":"permanent-gone","channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{"pad":"`
			tail := `"}}}`
			body := head + strings.Repeat("p", limit-tt.under-attrBytes-len(head)-len(tail)) + tail
			r := rec("m1", body, 1)
			r.MessageAttributes = tt.attrs

			resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
			require.NoError(t, err)
			require.Empty(t, resp.BatchItemFailures, "it leaves the queue on its first receive")
			require.EqualValues(t, 1, b.sends("permanent-gone"), "sent once, never again")
			require.Equal(t, tt.tries, len(b.wire.Requests("SendMessage")), "the reason shrinks first")
			dl := b.storedDeadLetters(t)
			require.Len(t, dl, 1)
			require.Equal(t, body, dl[0].body, "whole")
			require.Equal(t, tt.want, dl[0].attrs, "the producer's attributes, no reason")
			for _, name := range tt.want {
				require.Equal(t, *tt.attrs[name].StringValue, *b.wire.Messages(b.dlqURL)[0].MsgAttrs[name].StringValue)
			}
			lines := b.logs.lines(t)
			require.Len(t, lines, 1)
			require.Equal(t, string(processor.DeadLettered), lines[0]["outcome"])
			require.Equal(t, "webhook_gone", lines[0]["error_class"])
			require.Contains(t, lines[0]["error"], "410 Gone")
			require.Equal(t, true, lines[0]["dead_letter_without_reason"], "the line says it is the only reason")
			require.EqualValues(t, 1, batchLines(t, b, now)["webhook/dead_lettered"][metrics.DeadLettersWithoutReason])
		})
	}
}

// TestDeadLetterNoReasonFitsOnAFIFOQueue: on FIFO queues the message moved
// as it came keeps its message group and is deduplicated by its source
// message id, as every dead letter there.
func TestDeadLetterNoReasonFitsOnAFIFOQueue(t *testing.T) {
	t.Parallel()
	const limit = 256 * 1024
	b := setup(t, func(c *processor.Config) {
		c.QueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/herald.fifo"
		c.DeadLetterQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq.fifo"
	})
	b.wire.AddQueue(b.dlqURL, map[string]string{"MaximumMessageSize": strconv.Itoa(limit)})
	head := `{"version":1,"id":"permanent-fifo","channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{"pad":"`
	tail := `"}}}`
	body := head + strings.Repeat("p", limit-10-len(head)-len(tail)) + tail
	r := fifoRec("m1", "tenant-7", body, 1)
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	msgs := b.wire.Messages(b.dlqURL)
	require.Len(t, msgs, 1)
	require.Equal(t, body, msgs[0].Body)
	require.Empty(t, msgs[0].MsgAttrs)
	sends := b.wire.Requests("SendMessage")
	last := sends[len(sends)-1]
	require.Contains(t, string(last), `"MessageGroupId":"tenant-7"`)
	require.Contains(t, string(last), `"MessageDeduplicationId":"m1"`)
}
