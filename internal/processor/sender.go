package processor

import (
	"context"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/notification"
)

// Sender delivers one notification of its channel. It returns nil when the
// notification was delivered, or an error classified by package delivery
// (a *delivery.DeliveredError from a middleware: delivered before, not
// sent).
type Sender interface {
	Send(ctx context.Context, m *notification.Message) error
}

// Middleware is one wrapper around a send (river's job middleware): what
// happens around one delivery — delivered-once, the circuit, a rate limit
// — in its own package, with a Sender port of its own, returning the same
// typed errors a sender returns (package delivery), and its outcome
// settled by the processor alone. The context of each send carries the
// record's delivery.Attempt, on which a middleware notes what the record's
// log line and the batch's metrics say beside the outcome (a failed store
// call, a destination it disabled), and the invocation's deadline, past
// the send's own (delivery.LeaseUntil, delivery.AfterSend).
type Middleware struct {
	// Wrap returns next wrapped; New calls it once per channel. Required.
	Wrap func(next Sender) Sender
	// StartBatch, when set, is the middleware's work per batch: Handle
	// calls it with the invocation's context before the batch's first
	// send; the context it returns is the parent of the batch's sends
	// (the batch's state travels in it), and end is called with the
	// invocation's context once every send of the batch has returned,
	// beside the batch's visibility changes and before its records' notes
	// are read, so that a note end makes is logged. Delivered-once
	// confirms the batch's deliveries there with one write.
	StartBatch func(ctx context.Context) (batch context.Context, end func(context.Context))
}

// DestinationKeyer is delivery.DestinationKeyer: a Sender that names each
// message's destination for the circuit (package tracing's and chat's
// doc comments name it here).
type DestinationKeyer = delivery.DestinationKeyer

type recordKey struct{}

func withRecord(ctx context.Context, r *record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

// timed is the channel's own sender, innermost in the middlewares: it
// records how long the send took and when it ended on its record, so that
// a send's duration is the sender's alone and a record no middleware let
// through has none.
func timed(s Sender, now func() time.Time) Sender {
	return delivery.KeepDestinationKey(&timedSender{next: s, now: now}, s)
}

type timedSender struct {
	next Sender
	now  func() time.Time // Config.Now
}

func (t *timedSender) Send(ctx context.Context, m *notification.Message) error {
	r, _ := ctx.Value(recordKey{}).(*record)
	if r == nil {
		return t.next.Send(ctx, m)
	}
	start := t.now()
	err := t.next.Send(ctx, m)
	r.settledAt = t.now()
	r.sendTime = r.settledAt.Sub(start)
	return err
}
