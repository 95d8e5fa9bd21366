package tracing

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/internal/tracecontext"
)

// SQSHandler is the deliver function's handler: an SQS batch in, its
// partial batch response out.
type SQSHandler = func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// lambdaTraceKey is the context key under which aws-lambda-go passes the
// invocation's X-Ray trace header (Lambda-Runtime-Trace-Id).
const lambdaTraceKey = "x-amzn-trace-id"

// Handler wraps next so that each invocation is a span (SpanInvocation, a
// consumer span): a child of Lambda's own trace header when the function
// is actively traced, else a new trace, sampled by Config.SampleRatio.
// Attributes: faas.invocation_id, faas.coldstart, faas.trigger pubsub,
// messaging.batch.message_count, and herald.batch.failures (the records
// handed back). Before returning, it exports the invocation's spans within
// ExportTimeout and the invocation's deadline (Lambda freezes the process
// after the response, so a background export would wait for the next
// invocation); an export that fails is logged to logger (WARN) and changes
// nothing else. A nil t returns next itself.
func (t *Tracing) Handler(next SQSHandler, logger *slog.Logger) SQSHandler {
	if t == nil {
		return next
	}
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		parent := ctx
		if h, ok := ctx.Value(lambdaTraceKey).(string); ok {
			parent = tracecontext.FromXRayHeader(ctx, h)
		}
		attrs := []attribute.KeyValue{
			KeyFaaSTrigger.String("pubsub"),
			KeyMessagingSystem.String("aws_sqs"),
			KeyBatchCount.Int(len(ev.Records)),
			KeyFaaSColdStart.Bool(t.cold.Swap(false)),
		}
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			attrs = append(attrs, KeyFaaSInvocationID.String(lc.AwsRequestID))
		}
		spanCtx, span := t.Tracer().Start(parent, SpanInvocation, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
		resp, err := next(spanCtx, ev)
		span.SetAttributes(KeyBatchFailures.Int(len(resp.BatchItemFailures)))
		if err != nil {
			span.SetAttributes(KeyErrorType.String("batch_failed"))
			span.SetStatus(codes.Error, "batch_failed")
		}
		span.End()
		flushCtx, cancel := context.WithTimeout(ctx, ExportTimeout)
		defer cancel()
		if ferr := t.Flush(flushCtx); ferr != nil && logger != nil {
			logger.LogAttrs(ctx, slog.LevelWarn, "traces not exported", slog.String("error", ferr.Error()))
		}
		return resp, err
	}
}
