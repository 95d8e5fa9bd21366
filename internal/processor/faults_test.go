package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// TestHandleReturnsBeforeTheDeadline: a sender that blocks until its
// context ends is cut off Reserve before the invocation's deadline, and
// Handle answers before the deadline, without a batch error.
func TestHandleReturnsBeforeTheDeadline(t *testing.T) {
	t.Parallel()
	// Budgets in seconds, none a race with a loaded machine (-race, CI, a
	// second test run beside): with the reserve above the time left nothing
	// may start, whenever Handle looks; with 4 s reserved of 6 s left the
	// senders have 2 s to start and Handle 2 s (half the reserve) to answer.
	for name, c := range map[string]struct{ reserve, timeLeft time.Duration }{
		"reserve above the time left": {time.Minute, 30 * time.Second}, // nothing starts
		"reserve 4 s":                 {4 * time.Second, 6 * time.Second},
	} {
		reserve := c.reserve
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var started atomic.Int32
			block := senderFunc(func(ctx context.Context, _ *notification.Message) error {
				started.Add(1)
				<-ctx.Done()
				return delivery.Transient(delivery.ClassDeadline, ctx.Err())
			})
			b := setup(t, func(c *processor.Config) {
				c.Reserve = reserve
				c.Senders = map[notification.Channel]processor.Sender{notification.ChannelWebhook: block}
			})
			deadline := time.Now().Add(c.timeLeft)
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			resp, err := b.p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
				rec("m1", webhookBody("ok-1"), 1), rec("m2", webhookBody("ok-2"), 1),
			}})
			require.NoError(t, err)
			require.True(t, time.Now().Before(deadline), "Handle returned %s after the deadline", time.Since(deadline))
			if reserve < c.timeLeft {
				// Cut at the reserve, not just before the deadline: half of
				// it is still left (the other half is slack for a loaded machine).
				require.Greater(t, time.Until(deadline), reserve/2, "the senders were cut off Reserve before the deadline")
			}
			require.ElementsMatch(t, []string{"m1", "m2"}, failures(resp))
			if reserve > c.timeLeft {
				require.Zero(t, started.Load(), "no delivery starts inside the reserve")
			} else {
				require.Equal(t, int32(2), started.Load())
			}
			require.Len(t, b.wire.Requests("ChangeMessageVisibilityBatch"), 1, "the retries are scheduled inside the reserve")
		})
	}
}

// TestHandleVisibilityCallErrorFailsOnlyTheRetried: when the whole
// ChangeMessageVisibilityBatch call fails, every retried record is reported
// failed (it comes back after the queue's visibility timeout) and the
// delivered ones stay acknowledged.
func TestHandleVisibilityCallErrorFailsOnlyTheRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.FailAction("ChangeMessageVisibilityBatch")
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("transient-1"), 1), rec("m2", webhookBody("ok-2"), 1),
		rec("m3", webhookBody("limited-3"), 2), rec("m4", webhookBody("ok-4"), 3),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m3"}, failures(resp))
	byID := map[string]map[string]any{}
	for _, l := range b.logs.lines(t) {
		byID[l["sqs_message_id"].(string)] = l
	}
	for _, id := range []string{"m1", "m3"} {
		require.Equal(t, "failed", byID[id]["outcome"], id)
		require.Contains(t, byID[id]["sqs_error"], "change visibility", id)
	}
	require.Equal(t, "delivered", byID["m2"]["outcome"])
	require.Equal(t, "delivered", byID["m4"]["outcome"])
}

// TestHandleVisibilityEntryFaults: each way SQS refuses one entry leaves
// that record failed and the others as they were.
func TestHandleVisibilityEntryFaults(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.FailReceiptHandle("rh-m2")
	b.wire.FailReceiptHandle("rh-m4")
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("transient-1"), 1), rec("m2", webhookBody("transient-2"), 1),
		rec("m3", webhookBody("ok-3"), 1), rec("m4", webhookBody("limited-4"), 1),
		rec("m5", webhookBody("permanent-5"), 1),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m2", "m4"}, failures(resp))
	out := map[string]string{}
	for _, l := range b.logs.lines(t) {
		out[l["sqs_message_id"].(string)] = l["outcome"].(string)
	}
	require.Equal(t, map[string]string{"m1": "retry", "m2": "failed", "m3": "delivered", "m4": "failed", "m5": "dead_lettered"}, out)
}

func fifoRec(msgID, group, body string, receiveCount int) events.SQSMessage {
	r := rec(msgID, body, receiveCount)
	r.Attributes[processor.AttrMessageGroupID] = group
	r.EventSourceARN = "arn:aws:sqs:us-east-1:123456789012:herald.fifo"
	return r
}

// TestHandleFIFOKeepsGroupOrder: within a group records are delivered one
// at a time in batch order; after a retry the group's later records are not
// attempted and come back with the same delay; other groups go on, and a
// dead-lettered record does not stop its group.
func TestHandleFIFOKeepsGroupOrder(t *testing.T) {
	t.Parallel()
	var order []string
	var mu = make(chan struct{}, 1)
	var inGroupA atomic.Int32
	send := senderFunc(func(_ context.Context, m *notification.Message) error {
		mu <- struct{}{}
		order = append(order, m.ID)
		<-mu
		if m.ID[0] == 'a' {
			if inGroupA.Add(1) > 1 {
				return errors.New("two records of group a at once")
			}
			defer inGroupA.Add(-1)
			time.Sleep(5 * time.Millisecond)
		}
		switch m.ID {
		case "a2-transient", "c1-transient":
			return delivery.Transient("webhook_http_5xx", errors.New("503"))
		case "b1-permanent":
			return delivery.Permanent("webhook_gone", errors.New("410"))
		}
		return nil
	})
	b := setup(t, func(c *processor.Config) {
		c.DeadLetterQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq.fifo"
		c.Senders = map[notification.Channel]processor.Sender{notification.ChannelWebhook: send}
	})
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		fifoRec("m1", "a", webhookBody("a1-ok"), 1),
		fifoRec("m2", "b", webhookBody("b1-permanent"), 1),
		fifoRec("m3", "a", webhookBody("a2-transient"), 2),
		fifoRec("m4", "b", webhookBody("b2-ok"), 1),
		fifoRec("m5", "a", webhookBody("a3-ok"), 1),
		fifoRec("m6", "c", webhookBody("c1-transient"), 1),
		fifoRec("m7", "a", webhookBody("a4-ok"), 5),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m3", "m5", "m6"}, failures(resp))

	var groupA []string
	for _, id := range order {
		if id[0] == 'a' {
			groupA = append(groupA, id)
		}
	}
	require.Equal(t, []string{"a1-ok", "a2-transient"}, groupA, "a3 and a4 are not attempted")
	require.Contains(t, order, "b2-ok", "a dead letter does not stop its group")

	out := map[string]string{}
	for _, l := range b.logs.lines(t) {
		out[l["sqs_message_id"].(string)] = l["outcome"].(string)
	}
	require.Equal(t, map[string]string{
		"m1": "delivered", "m2": "dead_lettered", "m3": "retry", "m4": "delivered",
		"m5": "skipped", "m6": "retry", "m7": "dead_lettered",
	}, out, "m7, skipped on its last receive, is dead-lettered with its reason")

	// The skipped m5 comes back with m3: the same delay (10 s·2 for receive 2).
	var in struct {
		Entries []struct {
			ReceiptHandle     string
			VisibilityTimeout int
		}
	}
	vis := b.wire.Requests("ChangeMessageVisibilityBatch")
	require.Len(t, vis, 1)
	require.NoError(t, json.Unmarshal(vis[0], &in))
	delays := map[string]int{}
	for _, e := range in.Entries {
		delays[e.ReceiptHandle] = e.VisibilityTimeout
	}
	require.Equal(t, map[string]int{"rh-m3": 20, "rh-m5": 20, "rh-m6": 10}, delays)

	// Dead letters to a FIFO queue carry the group and a deduplication id.
	sends := b.wire.Requests("SendMessage")
	require.Len(t, sends, 2)
	got := map[string]string{}
	for _, raw := range sends {
		var sm struct {
			MessageGroupId, MessageDeduplicationId string
			MessageAttributes                      map[string]struct{ StringValue string }
		}
		require.NoError(t, json.Unmarshal(raw, &sm))
		got[sm.MessageDeduplicationId] = sm.MessageGroupId
		if sm.MessageDeduplicationId == "m7" {
			require.Equal(t, string(processor.ClassGroupBlocked), sm.MessageAttributes[redrive.AttrErrorClass].StringValue)
		}
	}
	require.Equal(t, map[string]string{"m2": "b", "m7": "a"}, got)
}

// TestHandleStandardDeadLetterHasNoGroup: a standard dead-letter queue gets
// neither a group nor a deduplication id (SQS rejects them there).
func TestHandleStandardDeadLetterHasNoGroup(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m1", webhookBody("permanent-1"), 1)}})
	require.NoError(t, err)
	sends := b.wire.Requests("SendMessage")
	require.Len(t, sends, 1)
	require.NotContains(t, string(sends[0]), "MessageGroupId")
	require.NotContains(t, string(sends[0]), "MessageDeduplicationId")
}

// TestHandleFIFODeadlineRetriesWholeGroupsAtOnce: past the deadline the
// first record of each group is retried at once and the rest follow it.
func TestHandleFIFODeadlineRetriesWholeGroupsAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	resp, err := b.p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		fifoRec("m1", "a", webhookBody("ok-1"), 1), fifoRec("m2", "a", webhookBody("ok-2"), 1),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m2"}, failures(resp))
	_, tried := b.sent.Load("ok-1")
	require.False(t, tried)
}
