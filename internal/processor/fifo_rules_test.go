package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// visibilityEntries returns every ChangeMessageVisibilityBatch entry the
// processor sent, as receipt handle → visibility timeout in seconds.
func visibilityEntries(t *testing.T, b *bundle) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, raw := range b.wire.Requests("ChangeMessageVisibilityBatch") {
		var in struct {
			Entries []struct {
				ReceiptHandle     string
				VisibilityTimeout int
			}
		}
		require.NoError(t, json.Unmarshal(raw, &in))
		for _, e := range in.Entries {
			_, dup := out[e.ReceiptHandle]
			require.False(t, dup, "one visibility change per record: %s", e.ReceiptHandle)
			out[e.ReceiptHandle] = e.VisibilityTimeout
		}
	}
	return out
}

// logLines returns the one log line of each record by SQS message id.
func logLines(t *testing.T, b *bundle) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, l := range b.logs.lines(t) {
		id := l["sqs_message_id"].(string)
		require.NotContains(t, out, id, "one line per record")
		out[id] = l
	}
	return out
}

// TestHandleFIFOFailedDeadLetterMoveBlocksItsGroup: a record whose
// dead-letter move failed stays in the queue, so the later records of its
// group must not overtake it: they are skipped and come back after it.
func TestHandleFIFOFailedDeadLetterMoveBlocksItsGroup(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.FailAction("SendMessage")
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		fifoRec("m1", "a", webhookBody("permanent-1"), 1),
		fifoRec("m2", "a", webhookBody("ok-2"), 1),
		fifoRec("m3", "b", webhookBody("ok-3"), 1),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m2"}, failures(resp))
	_, tried := b.sent.Load("ok-2")
	require.False(t, tried, "m2 must not overtake m1, still in the queue")
	_, tried = b.sent.Load("ok-3")
	require.True(t, tried, "another group goes on")
	lines := logLines(t, b)
	require.Equal(t, "failed", lines["m1"]["outcome"])
	require.Equal(t, "skipped", lines["m2"]["outcome"])
	require.Equal(t, string(processor.ClassGroupBlocked), lines["m2"]["error_class"])
	require.Equal(t, "delivered", lines["m3"]["outcome"])
	require.Empty(t, visibilityEntries(t, b), "m1 comes back after the queue's visibility timeout, m2 with it")
}

// TestHandleNotStartedRecordsComeBackAtOnce: records the invocation had no
// time to start are retried with visibility timeout 0, not a backoff delay,
// and the FIFO records behind them follow with the same 0.
func TestHandleNotStartedRecordsComeBackAtOnce(t *testing.T) {
	t.Parallel()
	// 30 s left, a minute reserved: nothing starts, and the SQS calls have
	// all the time a loaded machine needs.
	b := setup(t, func(c *processor.Config) { c.Reserve = time.Minute })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := b.p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("ok-1"), 3),
		fifoRec("m2", "a", webhookBody("ok-2"), 2),
		fifoRec("m3", "a", webhookBody("ok-3"), 1),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m2", "m3"}, failures(resp))
	require.Equal(t, map[string]int{"rh-m1": 0, "rh-m2": 0, "rh-m3": 0}, visibilityEntries(t, b))
	lines := logLines(t, b)
	require.Equal(t, "retry", lines["m1"]["outcome"])
	require.Equal(t, string(delivery.ClassDeadline), lines["m1"]["error_class"])
	require.Equal(t, float64(0), lines["m1"]["delay_seconds"])
	require.Equal(t, "retry", lines["m2"]["outcome"])
	require.Equal(t, "skipped", lines["m3"]["outcome"])
	require.Empty(t, b.wire.Requests("SendMessage"))
}

// TestHandleNotStartedOnLastReceiveIsDeadLettered: with time left for the
// SQS calls, a record not started on its last receive is dead-lettered with
// the deadline class, not left to the redrive policy without a reason.
func TestHandleNotStartedOnLastReceiveIsDeadLettered(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *processor.Config) { c.Reserve = time.Minute })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := b.p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{rec("m1", webhookBody("ok-1"), 5)}})
	require.NoError(t, err)
	require.Empty(t, failures(resp))
	sends := b.wire.Requests("SendMessage")
	require.Len(t, sends, 1)
	var sm struct {
		MessageAttributes map[string]struct{ StringValue string }
	}
	require.NoError(t, json.Unmarshal(sends[0], &sm))
	var reason redrive.Reason
	require.NoError(t, json.Unmarshal([]byte(sm.MessageAttributes[redrive.AttrReason].StringValue), &reason))
	require.Equal(t, delivery.ClassDeadline, reason.ErrorClass)
	require.Equal(t, "attempts_exhausted", reason.Outcome)
	require.Equal(t, 5, reason.Attempts)
}

// TestHandleFIFOSkippedOnLastReceiveWithFailedMoveFollowsItsBlocker: a
// skipped record on its last receive whose dead-letter move fails stays
// skipped: it comes back with the record it follows (same delay), not
// after the queue's visibility timeout as a plain failure.
func TestHandleFIFOSkippedOnLastReceiveWithFailedMoveFollowsItsBlocker(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.FailAction("SendMessage")
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		fifoRec("m1", "a", webhookBody("transient-1"), 2),
		fifoRec("m2", "a", webhookBody("ok-2"), 5),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m2"}, failures(resp))
	require.Len(t, b.wire.Requests("SendMessage"), 1, "the move of m2 was tried")
	_, tried := b.sent.Load("ok-2")
	require.False(t, tried)
	require.Equal(t, map[string]int{"rh-m1": 20, "rh-m2": 20}, visibilityEntries(t, b))
	lines := logLines(t, b)
	require.Equal(t, "retry", lines["m1"]["outcome"])
	require.Equal(t, "skipped", lines["m2"]["outcome"])
	require.Contains(t, lines["m2"]["sqs_error"], "send to dead-letter queue")
}

// TestHandleFIFOSkippedOnLastReceiveWithAnUnfitDeadLetter: a skipped
// record on its last receive whose dead letter exceeds the dead-letter
// queue's size even with no reason (a dead-letter queue smaller than the
// message) stays skipped, counted as DeadLettersTooLarge, and follows its
// blocker.
func TestHandleFIFOSkippedOnLastReceiveWithAnUnfitDeadLetter(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.AddQueue(b.dlqURL, map[string]string{"MaximumMessageSize": "1024"})
	big := rec("m2", bigBody(t, "ok-2", 1025), 5)
	big.Attributes[processor.AttrMessageGroupID] = "a"
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		fifoRec("m1", "a", webhookBody("transient-1"), 2), big,
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m2"}, failures(resp))
	require.Empty(t, b.wire.Messages(b.dlqURL))
	require.Equal(t, map[string]int{"rh-m1": 20, "rh-m2": 20}, visibilityEntries(t, b))
	lines := logLines(t, b)
	require.Equal(t, "skipped", lines["m2"]["outcome"])
	metricLines := batchLines(t, b, now)
	require.EqualValues(t, 1, metricLines["email/skipped"][metrics.DeadLettersTooLarge])
	require.NotContains(t, metricLines["webhook/retry"], metrics.DeadLettersTooLarge)
}

// TestHandleFIFOSkippedBehindAFailedRecordKeepsNoDelay: behind a record
// whose visibility is not set (a failed move), a skipped record gets no
// visibility change of its own: both come back after the queue's timeout.
func TestHandleFIFOSkippedBehindAFailedRecordKeepsNoDelay(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.FailAction("SendMessage")
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		fifoRec("m1", "a", webhookBody("permanent-1"), 1),
		fifoRec("m2", "a", webhookBody("transient-2"), 1),
		fifoRec("m3", "b", webhookBody("transient-3"), 1),
	}})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"rh-m3": 10}, visibilityEntries(t, b))
}

// TestHandleClampsLongDelaysToTheSQSLimit: a Retry-After of a day, or
// exactly 12 hours, becomes backoff.MaxDelay, which SQS accepts; without
// the clamp SQS refuses the change (the wire fake, like SQS, rejects a
// visibility timeout over 43,200 s) and the record would come back early.
func TestHandleClampsLongDelaysToTheSQSLimit(t *testing.T) {
	t.Parallel()
	long := senderFunc(func(_ context.Context, m *notification.Message) error {
		d := map[string]time.Duration{"day": 24 * time.Hour, "twelve": backoff.MaxVisibilityTimeout, "under": backoff.MaxDelay - time.Second}[m.ID]
		return &delivery.TransientError{Class: "webhook_http_429", RetryAfter: d, Err: errors.New("429")}
	})
	b := setup(t, func(c *processor.Config) {
		c.Senders = map[notification.Channel]processor.Sender{notification.ChannelWebhook: long}
	})
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("day"), 1), rec("m2", webhookBody("twelve"), 1), rec("m3", webhookBody("under"), 1),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m2", "m3"}, failures(resp))
	limit := int(backoff.MaxDelay.Seconds())
	require.Equal(t, map[string]int{"rh-m1": limit, "rh-m2": limit, "rh-m3": limit - 1}, visibilityEntries(t, b))
	for id, l := range logLines(t, b) {
		require.Equal(t, "retry", l["outcome"], id)
	}
}

// TestHandleVisibilityChangesFitSQSBatchRules: 23 retried records take
// three calls of at most 10 entries with distinct ids, which SQS (and the
// wire fake) accepts: every record stays a retry, none becomes failed.
func TestHandleVisibilityChangesFitSQSBatchRules(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	var ev events.SQSEvent
	for i := range 23 {
		ev.Records = append(ev.Records, rec(fmt.Sprint("m", i), webhookBody(fmt.Sprint("transient-", i)), 1))
	}
	_, err := b.p.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, visibilityEntries(t, b), 23)
	for id, l := range logLines(t, b) {
		require.Equal(t, "retry", l["outcome"], id)
	}
}
