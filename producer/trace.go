package producer

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/internal/tracecontext"
	"github.com/heraldhq/herald/notification"
)

// traceAttrs is the trace context each message carries: the span in the
// caller's context (OpenTelemetry), when there is one.
type traceAttrs struct {
	parent string // W3C traceparent: the traceparent message attribute
	xray   string // the same span as an X-Ray header: AWSTraceHeader
}

// traceOf reads ctx's span; the zero traceAttrs when it has none.
func traceOf(ctx context.Context) traceAttrs {
	var t traceAttrs
	t.parent, _ = tracecontext.TraceParent(ctx)
	t.xray, _ = tracecontext.XRayHeader(ctx)
	return t
}

// batchBytes is the most bytes of bodies of one SendMessageBatch call,
// leaving room for each entry's traceparent attribute, which SQS counts
// (AWSTraceHeader, a system attribute, it does not).
func (t traceAttrs) batchBytes() int {
	if t.parent == "" {
		return MaxBatchBytes
	}
	return MaxBatchBytes - MaxBatchEntries*tracecontext.MessageAttributeBytes
}

// apply sets e's trace attributes: AWSTraceHeader always, and traceparent
// when the body leaves room for it under notification.MaxMessageBytes (the
// deliver function counts message attributes in a message's size).
func (t traceAttrs) apply(e *types.SendMessageBatchRequestEntry, body []byte) {
	if t.xray != "" {
		e.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{
			tracecontext.SystemAttribute: {DataType: aws.String(tracecontext.MessageAttributeDataType), StringValue: aws.String(t.xray)},
		}
	}
	if t.parent != "" && len(body)+tracecontext.MessageAttributeBytes <= notification.MaxMessageBytes {
		e.MessageAttributes = map[string]types.MessageAttributeValue{
			tracecontext.MessageAttribute: {DataType: aws.String(tracecontext.MessageAttributeDataType), StringValue: aws.String(t.parent)},
		}
	}
}
