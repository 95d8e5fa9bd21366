package processor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
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
