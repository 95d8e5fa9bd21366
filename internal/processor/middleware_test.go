package processor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// journal records what the middlewares of a test saw, in order.
type journal struct {
	mu    sync.Mutex
	lines []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, s)
}

type batchKey struct{ name string }

// named is a middleware that writes its name around each send and, with
// batch set, its batch's start and end; its sends check that they run in
// the context its StartBatch returned.
func named(j *journal, name string, batch bool) processor.Middleware {
	m := processor.Middleware{Wrap: func(next processor.Sender) processor.Sender {
		return senderFunc(func(ctx context.Context, msg *notification.Message) error {
			if batch && ctx.Value(batchKey{name}) == nil {
				j.add(name + " outside its batch")
			}
			j.add(name + " >")
			err := next.Send(ctx, msg)
			j.add(name + " <")
			return err
		})
	}}
	if batch {
		m.StartBatch = func(ctx context.Context) (context.Context, func(context.Context)) {
			j.add(name + " start")
			return context.WithValue(ctx, batchKey{name}, true), func(context.Context) { j.add(name + " end") }
		}
	}
	return m
}

// TestMiddlewareOrderAndBatchHooks: the first middleware is outermost;
// each StartBatch runs before the batch's first send, its context reaches
// the sends, and each end runs once, after every send.
func TestMiddlewareOrderAndBatchHooks(t *testing.T) {
	t.Parallel()
	j := &journal{}
	b := setup(t, func(c *processor.Config) {
		c.Concurrency = 1
		c.Middleware = []processor.Middleware{named(j, "outer", true), named(j, "inner", false), named(j, "last", true)}
	})
	handle(t, b, context.Background(), rec("m-1", webhookBody("ok-1"), 1), rec("m-2", webhookBody("ok-2"), 1))
	round := []string{"outer >", "inner >", "last >", "last <", "inner <", "outer <"}
	want := append([]string{"outer start", "last start"}, round...)
	want = append(append(want, round...), "outer end", "last end")
	require.Equal(t, want, j.lines)
}

// TestMiddlewareOutcomesSettleTheRecord: the processor settles what a
// middleware returns as it settles a sender's answer: a DeliveredError is
// a duplicate acknowledged unsent (logged with delivered_at), a permanent
// error a dead letter, a transient one with RetryAfter a retry no sooner;
// the attempt's notes are logged (store_error) and counted (StoreErrors,
// DestinationsDisabled). A record no middleware let through has no send
// duration and reaches no sender.
func TestMiddlewareOutcomesSettleTheRecord(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	b := setup(t, func(c *processor.Config) {
		c.Middleware = []processor.Middleware{{Wrap: func(next processor.Sender) processor.Sender {
			return senderFunc(func(ctx context.Context, m *notification.Message) error {
				a := delivery.AttemptFrom(ctx)
				switch m.ID {
				case "ok-dup":
					return &delivery.DeliveredError{At: at, Err: errors.New("delivered")}
				case "ok-held":
					return &delivery.TransientError{Class: "webhook_http_429", RetryAfter: 7 * time.Minute, Err: errors.New("held")}
				case "ok-refused":
					a.DisabledDestination()
					return delivery.Permanent("webhook_gone", errors.New("refused"))
				case "ok-noted":
					a.StoreFailed(errors.New("health read failed"))
				}
				return next.Send(ctx, m)
			})
		}}}
	})
	resp := handle(t, b, context.Background(),
		rec("m-dup", webhookBody("ok-dup"), 1), rec("m-held", webhookBody("ok-held"), 1),
		rec("m-refused", webhookBody("ok-refused"), 1), rec("m-noted", webhookBody("ok-noted"), 1))
	require.Equal(t, []string{"m-held"}, failures(resp))
	lines := logLines(t, b)
	require.Equal(t, "duplicate", lines["m-dup"]["outcome"])
	require.Equal(t, at.Format(time.RFC3339), lines["m-dup"]["delivered_at"])
	require.NotContains(t, lines["m-dup"], "duration_ms", "not sent")
	require.Zero(t, b.sends("ok-dup"))
	require.Equal(t, "retry", lines["m-held"]["outcome"])
	require.Equal(t, float64(420), lines["m-held"]["delay_seconds"], "no sooner than RetryAfter")
	require.Equal(t, "dead_lettered", lines["m-refused"]["outcome"])
	require.Equal(t, "delivered", lines["m-noted"]["outcome"])
	require.Equal(t, "health read failed", lines["m-noted"]["store_error"])
	require.Equal(t, int32(1), b.sends("ok-noted"))
	line := batchLine(t, b)
	require.Equal(t, float64(1), line["StoreErrors"])
	require.Equal(t, float64(1), line["DestinationsDisabled"])
}

// TestNewRefusesAMiddlewareWithoutWrap names it.
func TestNewRefusesAMiddlewareWithoutWrap(t *testing.T) {
	t.Parallel()
	_, client := newSQSWire(t)
	_, err := processor.New(client, processor.Config{QueueURL: "q", DeadLetterQueueURL: "d", MaxReceiveCount: 1,
		Middleware: []processor.Middleware{{StartBatch: func(ctx context.Context) (context.Context, func(context.Context)) {
			return ctx, func(context.Context) {}
		}}}})
	require.EqualError(t, err, "processor: Middleware[0] has no Wrap")
}

// TestRecordsTheProcessorSettlesReachNoMiddleware: a record the processor
// settles without a send — moved to its channel's queue, expired, invalid,
// a copy of an earlier record of the batch, of an unknown queue, or
// skipped behind its FIFO group's retried record — never reaches a
// middleware (no delivered-once lease, no health read); only the records
// it sends do, in the group's order.
func TestRecordsTheProcessorSettlesReachNoMiddleware(t *testing.T) {
	t.Parallel()
	j := &journal{}
	seen := processor.Middleware{Wrap: func(next processor.Sender) processor.Sender {
		return senderFunc(func(ctx context.Context, m *notification.Message) error {
			j.add(m.ID)
			return next.Send(ctx, m)
		})
	}}
	b := setup(t, func(c *processor.Config) {
		c.QueueURL, c.DeadLetterQueueURL = "", ""
		c.Queues = []redrive.Queue{
			{Channel: notification.ChannelEmail, URL: emailQueue, DeadLetterURL: emailDLQ},
			{Channel: notification.ChannelWebhook, URL: webhookQueue, DeadLetterURL: webhookDLQ},
		}
		delete(c.Senders, notification.ChannelWebhook)
		c.Middleware = []processor.Middleware{seen}
	})
	for _, u := range []string{emailQueue, emailDLQ, webhookQueue, webhookDLQ} {
		b.wire.AddQueue(u, nil)
	}
	expired := `{"version":1,"id":"ok-expired","channel":"email","expires_at":"2026-01-01T00:00:00Z","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"t"}}`
	inGroup := func(m events.SQSMessage, g string) events.SQSMessage {
		m.Attributes[processor.AttrMessageGroupID] = g
		return m
	}
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		from(emailARN, rec("m-moved", webhookBody("ok-moved"), 1)),
		from(emailARN, rec("m-expired", expired, 1)),
		from(emailARN, rec("m-invalid", `{"version":1,"id":"bad","channel":"email"}`, 1)),
		from(emailARN, rec("m-first", emailOf("ok-first"), 1)),
		from(emailARN, rec("m-copy", emailOf("ok-first"), 1)),
		from("arn:aws:sqs:us-east-1:123456789012:someone-else", rec("m-unknown", emailOf("ok-unknown"), 1)),
		inGroup(from(emailARN, rec("m-g1", emailOf("transient-g1"), 1)), "g"),
		inGroup(from(emailARN, rec("m-g2", emailOf("ok-g2"), 1)), "g"),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m-unknown", "m-g1", "m-g2"}, failures(resp))
	require.ElementsMatch(t, []string{"ok-first", "transient-g1"}, j.lines, "only the records sent pass the middlewares")
	outcomes := map[string]any{}
	for _, l := range b.logs.lines(t) {
		outcomes[l["sqs_message_id"].(string)] = l["outcome"]
	}
	require.Equal(t, map[string]any{
		"m-moved": "moved", "m-expired": "dropped", "m-invalid": "dead_lettered", "m-first": "delivered", "m-copy": "duplicate",
		"m-unknown": "failed", "m-g1": "retry", "m-g2": "skipped",
	}, outcomes)
}
