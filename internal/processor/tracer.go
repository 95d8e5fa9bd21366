package processor

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/notification"
)

// Tracer traces each record the processor attempts: package tracing's.
// Config.Tracer nil (the default) traces nothing and costs nothing.
type Tracer interface {
	// StartRecord starts rec's span, linked to the producer's trace the
	// message carries, and returns ctx with it.
	StartRecord(ctx context.Context, rec TracedRecord) (context.Context, trace.Span)
	// EndRecord ends the span with the record's outcome.
	EndRecord(span trace.Span, end RecordEnd)
}

// TracedRecord is what a Tracer is told of a record: never its body.
type TracedRecord struct {
	Message        *events.SQSMessage
	NotificationID string
	// Channel is the notification's, or the queue's when the body is
	// invalid; empty when neither is known.
	Channel      notification.Channel
	ReceiveCount int
}

// RecordEnd is a record's outcome, as decided by process.
type RecordEnd struct {
	Outcome Outcome
	// Class is the error class of a record not delivered; empty else.
	Class delivery.Class
	// Delay is a retried record's visibility delay.
	Delay time.Duration
}

// traced is process inside the record's span when a Tracer is set: the
// span is the parent of the send and of the record's AWS calls.
func (p *Processor) traced(ctx, deliverCtx context.Context, r *record) {
	if p.cfg.Tracer == nil {
		p.process(ctx, deliverCtx, r)
		return
	}
	ch := r.queue.Channel
	if r.n != nil {
		ch = r.n.Channel
	}
	ctx, span := p.cfg.Tracer.StartRecord(ctx, TracedRecord{Message: r.msg, NotificationID: r.id, Channel: ch, ReceiveCount: r.receiveCount})
	if sc := span.SpanContext(); sc.IsSampled() {
		r.traceID = sc.TraceID().String()
	}
	p.process(ctx, trace.ContextWithSpan(deliverCtx, span), r)
	p.cfg.Tracer.EndRecord(span, RecordEnd{Outcome: r.outcome, Class: r.class, Delay: r.delay})
}
