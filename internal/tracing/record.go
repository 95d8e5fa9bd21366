package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/tracecontext"
)

// Span names: few, fixed, so that a backend groups them.
const (
	SpanInvocation = "herald.deliver"
	SpanRecord     = "herald.record"
	SpanSend       = "herald.send"
)

var noopTracer = noop.NewTracerProvider().Tracer(ScopeName)

var _ processor.Tracer = (*Tracing)(nil)

// StartRecord starts a record's span (SpanRecord, a consumer span), a
// child of the invocation's span in ctx, linked to the producer's span
// contexts the message carries (tracecontext.Links). Its attributes: the
// SQS message id, the notification id, the channel, the receive count.
func (t *Tracing) StartRecord(ctx context.Context, rec processor.TracedRecord) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		KeyMessagingSystem.String("aws_sqs"),
		KeyMessageID.String(rec.Message.MessageId),
		KeyNotificationID.String(rec.NotificationID),
		KeyChannel.String(string(rec.Channel)),
		KeyReceiveCount.Int(rec.ReceiveCount),
	}
	return t.Tracer().Start(ctx, SpanRecord,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithLinks(tracecontext.Links(rec.Message)...),
		trace.WithAttributes(attrs...))
}

// EndRecord sets the record's outcome (herald.outcome), its error class
// (error.type and herald.error.class, and an Error status) when it was not
// delivered, and a retry's delay, then ends span.
func (t *Tracing) EndRecord(span trace.Span, end processor.RecordEnd) {
	span.SetAttributes(KeyOutcome.String(string(end.Outcome)))
	if end.Class != "" {
		span.SetAttributes(KeyErrorType.String(string(end.Class)), KeyErrorClass.String(string(end.Class)))
		if end.Outcome != processor.Delivered && end.Outcome != processor.Duplicate && end.Outcome != processor.Dropped {
			span.SetStatus(codes.Error, string(end.Class))
		}
	}
	if end.Outcome == processor.Retry {
		span.SetAttributes(KeyRetryDelayMS.Int64(end.Delay.Milliseconds()))
	}
	span.End()
}
