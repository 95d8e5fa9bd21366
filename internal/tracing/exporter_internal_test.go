package tracing

import (
	"context"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestEncodeRequestDecodesWithTheGeneratedMessages: the hand-written
// encoder and opentelemetry-proto's generated messages agree on every
// field herald's spans use, and on the zero values a oneof must keep.
func TestEncodeRequestDecodesWithTheGeneratedMessages(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "svc"))))
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 1}, SpanID: trace.SpanID{0x00, 0xf0, 2}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	ts, err := trace.ParseTraceState("vendor=x")
	require.NoError(t, err)
	link := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8}, TraceState: ts, Remote: true})
	ctx, root := tp.Tracer("scope-a", trace.WithInstrumentationVersion("1.2")).Start(trace.ContextWithRemoteSpanContext(context.Background(), remote), "root",
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithLinks(trace.Link{SpanContext: link, Attributes: []attribute.KeyValue{attribute.String("why", "producer")}}),
		trace.WithAttributes(
			attribute.Bool("f", false), attribute.Int64("zero", 0), attribute.Int64("neg", -3), attribute.Float64("pi", 3.25),
			attribute.String("s", "v"), attribute.StringSlice("ss", []string{"a", "b"}), attribute.BoolSlice("bs", []bool{true}),
			attribute.Int64Slice("is", []int64{1, 2}), attribute.Float64Slice("fs", []float64{0.5})))
	root.AddEvent("ev", trace.WithAttributes(attribute.Int("n", 1)))
	root.SetStatus(codes.Error, "webhook_http_5xx")
	_, child := tp.Tracer("scope-b").Start(ctx, "child", trace.WithSpanKind(trace.SpanKindClient))
	child.SetStatus(codes.Ok, "")
	child.End()
	root.End()
	spans := rec.Ended()
	require.Len(t, spans, 2)

	var req collector.ExportTraceServiceRequest
	require.NoError(t, proto.Unmarshal(encodeRequest(spans), &req))
	require.Len(t, req.ResourceSpans, 1)
	rs := req.ResourceSpans[0]
	require.Equal(t, "service.name", rs.Resource.Attributes[0].Key)
	require.Equal(t, "svc", rs.Resource.Attributes[0].Value.GetStringValue())
	require.Len(t, rs.ScopeSpans, 2, "one per scope")
	require.Equal(t, "scope-b", rs.ScopeSpans[0].Scope.Name, "in the order the spans ended")
	require.Equal(t, "scope-a", rs.ScopeSpans[1].Scope.Name)
	require.Equal(t, "1.2", rs.ScopeSpans[1].Scope.Version)

	c, r := rs.ScopeSpans[0].Spans[0], rs.ScopeSpans[1].Spans[0]
	rsc := spans[1].SpanContext()
	require.Equal(t, rsc.TraceID().String(), hex.EncodeToString(r.TraceId))
	require.Equal(t, rsc.SpanID().String(), hex.EncodeToString(r.SpanId))
	require.Equal(t, remote.SpanID().String(), hex.EncodeToString(r.ParentSpanId))
	require.Equal(t, r.SpanId, c.ParentSpanId)
	require.Equal(t, "root", r.Name)
	require.Equal(t, tracepb.Span_SPAN_KIND_CONSUMER, r.Kind)
	require.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, c.Kind)
	require.Equal(t, uint64(spans[1].StartTime().UnixNano()), r.StartTimeUnixNano)
	require.Equal(t, uint64(spans[1].EndTime().UnixNano()), r.EndTimeUnixNano)
	require.Equal(t, uint32(0x301), r.Flags, "sampled, parent remote")
	require.Equal(t, uint32(0x101), c.Flags, "sampled, parent local")
	require.Equal(t, tracepb.Status_STATUS_CODE_ERROR, r.Status.Code)
	require.Equal(t, "webhook_http_5xx", r.Status.Message)
	require.Equal(t, tracepb.Status_STATUS_CODE_OK, c.Status.Code)

	attrs := map[string]any{}
	for _, kv := range r.Attributes {
		attrs[kv.Key] = kv.Value.GetValue()
	}
	require.Equal(t, &common.AnyValue_BoolValue{BoolValue: false}, attrs["f"], "a false bool keeps its type")
	require.Equal(t, &common.AnyValue_IntValue{IntValue: 0}, attrs["zero"], "a zero int keeps its type")
	vals := func(k string) []any {
		var out []any
		for _, v := range r.Attributes {
			if v.Key == k {
				for _, e := range v.Value.GetArrayValue().GetValues() {
					out = append(out, e.GetValue())
				}
			}
		}
		return out
	}
	for _, kv := range r.Attributes {
		switch kv.Key {
		case "zero":
			require.Equal(t, int64(0), kv.Value.GetIntValue())
		case "neg":
			require.Equal(t, int64(-3), kv.Value.GetIntValue())
		case "pi":
			require.Equal(t, 3.25, kv.Value.GetDoubleValue())
		case "s":
			require.Equal(t, "v", kv.Value.GetStringValue())
		case "ss":
			require.Equal(t, "b", kv.Value.GetArrayValue().Values[1].GetStringValue())
		case "bs":
			require.True(t, kv.Value.GetArrayValue().Values[0].GetBoolValue())
		case "is":
			require.Equal(t, int64(2), kv.Value.GetArrayValue().Values[1].GetIntValue())
		case "fs":
			require.Equal(t, 0.5, kv.Value.GetArrayValue().Values[0].GetDoubleValue())
		}
	}
	require.Len(t, vals("ss"), 2)
	require.Len(t, r.Attributes, 9)

	require.Len(t, r.Links, 1)
	require.Equal(t, link.TraceID().String(), hex.EncodeToString(r.Links[0].TraceId))
	require.Equal(t, link.SpanID().String(), hex.EncodeToString(r.Links[0].SpanId))
	require.Equal(t, "vendor=x", r.Links[0].TraceState)
	require.Equal(t, "why", r.Links[0].Attributes[0].Key)
	require.Equal(t, uint32(0x300), r.Links[0].Flags, "not sampled, remote")
	require.Len(t, r.Events, 1)
	require.Equal(t, "ev", r.Events[0].Name)
	require.Equal(t, int64(1), r.Events[0].Attributes[0].Value.GetIntValue())
}
