package tracecontext

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"go.opentelemetry.io/contrib/propagators/aws/xray"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// MessageAttribute is the name of the SQS message attribute (DataType
// String) holding the producer's W3C traceparent: the header's own name,
// as the OpenTelemetry messaging conventions propagate it.
const MessageAttribute = "traceparent"

// MessageAttributeDataType is MessageAttribute's SQS data type.
const MessageAttributeDataType = "String"

// MessageAttributeBytes is the most bytes MessageAttribute adds to a
// message as SQS counts its size (name, data type and value; a
// traceparent of version 00 is 55 characters).
const MessageAttributeBytes = len(MessageAttribute) + len(MessageAttributeDataType) + traceparentLen

const traceparentLen = 55

// SystemAttribute is SQS's message system attribute holding an X-Ray trace
// header. SQS does not count it in a message's size; the event source
// mapping passes it in each record's Attributes.
const SystemAttribute = "AWSTraceHeader"

// HeaderTraceParent is the W3C Trace Context request header.
const HeaderTraceParent = "traceparent"

var (
	w3c     propagation.TraceContext
	xrayFmt xray.Propagator
)

// TraceParent returns the traceparent of the span in ctx, and false when
// ctx carries no valid span context (tracing off, or a producer without
// one).
func TraceParent(ctx context.Context) (string, bool) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", false
	}
	c := one{key: HeaderTraceParent}
	w3c.Inject(ctx, &c)
	return c.value, c.value != ""
}

// XRayHeader returns the span in ctx as an X-Ray trace header
// (Root=…;Parent=…;Sampled=…) for SQS's AWSTraceHeader, and false when ctx
// carries no valid span context.
func XRayHeader(ctx context.Context) (string, bool) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", false
	}
	c := one{key: xrayHeader}
	xrayFmt.Inject(ctx, &c)
	return c.value, c.value != ""
}

// InjectHeader sets the W3C traceparent request header from the span in
// ctx, replacing any value already there; it does nothing when ctx
// carries no valid span context.
func InjectHeader(ctx context.Context, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	w3c.Inject(ctx, propagation.HeaderCarrier(h))
}

// Links returns the producer's span contexts a record carries, as links:
// its traceparent message attribute, then its AWSTraceHeader system
// attribute when that names another trace. A malformed value is ignored.
// It returns nil when the record carries neither.
func Links(msg *events.SQSMessage) []trace.Link {
	var links []trace.Link
	if a, ok := msg.MessageAttributes[MessageAttribute]; ok && a.StringValue != nil {
		sc := trace.SpanContextFromContext(w3c.Extract(context.Background(), &one{key: HeaderTraceParent, value: *a.StringValue}))
		if sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	if h := msg.Attributes[SystemAttribute]; h != "" {
		sc := trace.SpanContextFromContext(xrayFmt.Extract(context.Background(), &one{key: xrayHeader, value: h}))
		if sc.IsValid() && (len(links) == 0 || links[0].SpanContext.TraceID() != sc.TraceID()) {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	return links
}

// FromXRayHeader returns ctx carrying the remote span context of an X-Ray
// trace header (Lambda's, for an invocation of an actively traced
// function), or ctx unchanged when h is empty or malformed.
func FromXRayHeader(ctx context.Context, h string) context.Context {
	if h == "" {
		return ctx
	}
	return xrayFmt.Extract(ctx, &one{key: xrayHeader, value: h})
}

// xrayHeader is the X-Ray trace header's HTTP name.
const xrayHeader = "X-Amzn-Trace-Id"

// one is a carrier of the single header key (tracestate, which the W3C
// propagator also writes, is not kept).
type one struct {
	key, value string
}

func (c *one) Get(key string) string {
	if http.CanonicalHeaderKey(key) == http.CanonicalHeaderKey(c.key) {
		return c.value
	}
	return ""
}

func (c *one) Set(key, value string) {
	if http.CanonicalHeaderKey(key) == http.CanonicalHeaderKey(c.key) {
		c.value = value
	}
}

func (c *one) Keys() []string { return []string{c.key} }

// EnvTraceParent is the environment variable through which a process
// hands its trace context to a command it runs (OpenTelemetry's
// environment-variable carrier: the header's name in capitals).
const EnvTraceParent = "TRACEPARENT"

// FromTraceParent returns ctx carrying the remote span context of a W3C
// traceparent value, or an error when v is not one (version 00: 55
// characters, 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>, ids
// not all zero).
func FromTraceParent(ctx context.Context, v string) (context.Context, error) {
	out := w3c.Extract(ctx, &one{key: HeaderTraceParent, value: strings.TrimSpace(v)})
	if !trace.SpanContextFromContext(out).IsValid() {
		return ctx, errors.New("not a W3C traceparent (00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>)")
	}
	return out, nil
}
