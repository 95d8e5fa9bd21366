package tracing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// exporter is an OTLP/HTTP trace exporter, protobuf encoding
// (https://opentelemetry.io/docs/specs/otlp/#otlphttp): one POST of an
// ExportTraceServiceRequest per batch, retried on 429, 502, 503, 504 and
// transport failures (the retryable answers of the specification) within
// ExportTimeout. It encodes the request with protowire from
// opentelemetry-proto's field numbers (collector/trace/v1,
// trace/v1, common/v1, resource/v1) instead of linking the generated
// messages: the official otlptracehttp exporter links gRPC and its
// gateway, and would double the deliver bootstrap (docs/benchmarks.md,
// "Tracing"). internal/testkit/otlptest decodes what it sends with the generated
// messages, so the two are checked against each other.
type exporter struct {
	endpoint string
	client   *http.Client
}

var _ sdktrace.SpanExporter = (*exporter)(nil)

// ExportSpans posts spans. Its errors hold the endpoint's host at most
// (a dial error), never its path or query (a collector's URL may carry a
// token).
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body := encodeRequest(spans)
	ctx, cancel := context.WithTimeout(ctx, ExportTimeout)
	defer cancel()
	delay := 100 * time.Millisecond
	for {
		wait, err := e.post(ctx, body)
		if err == nil || wait < 0 {
			return err
		}
		if wait == 0 {
			wait = delay
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("OTLP export: %w; last: %w", ctx.Err(), err)
		case <-time.After(wait):
		}
		delay = min(2*delay, 500*time.Millisecond)
	}
}

// post sends one request. It returns how long to wait before a retry (0:
// the backoff's; negative: do not retry) with the error.
func (e *exporter) post(ctx context.Context, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return -1, errors.New("OTLP export: cannot build a request for the endpoint")
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := e.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL
		}
		return 0, fmt.Errorf("OTLP export: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		return 0, nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		wait := time.Duration(0)
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		return wait, fmt.Errorf("OTLP export: HTTP %d", resp.StatusCode)
	default:
		return -1, fmt.Errorf("OTLP export: HTTP %d", resp.StatusCode)
	}
}

// Shutdown has nothing to release: the provider flushes before it.
func (e *exporter) Shutdown(context.Context) error { return nil }

// encodeRequest encodes an ExportTraceServiceRequest of spans: one
// ResourceSpans per resource, one ScopeSpans per instrumentation scope, in
// the order they first appear.
func encodeRequest(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct{ name, version, schema string }
	var out []byte
	done := make([]bool, len(spans))
	for i, s := range spans {
		if done[i] {
			continue
		}
		res := s.Resource()
		var rs []byte
		rs = appendMessage(rs, 1, func(b []byte) []byte { // resource
			for _, kv := range res.Attributes() {
				b = appendMessage(b, 1, func(b []byte) []byte { return appendKeyValue(b, kv) })
			}
			return b
		})
		var order []scopeKey
		byScope := map[scopeKey][]sdktrace.ReadOnlySpan{}
		for j := i; j < len(spans); j++ {
			if done[j] || spans[j].Resource() != res {
				continue
			}
			done[j] = true
			sc := spans[j].InstrumentationScope()
			k := scopeKey{sc.Name, sc.Version, sc.SchemaURL}
			if _, ok := byScope[k]; !ok {
				order = append(order, k)
			}
			byScope[k] = append(byScope[k], spans[j])
		}
		for _, k := range order {
			rs = appendMessage(rs, 2, func(b []byte) []byte { // scope_spans
				b = appendMessage(b, 1, func(b []byte) []byte { // scope
					b = appendString(b, 1, k.name)
					return appendString(b, 2, k.version)
				})
				for _, sp := range byScope[k] {
					b = appendMessage(b, 2, func(b []byte) []byte { return appendSpan(b, sp) })
				}
				return appendString(b, 3, k.schema)
			})
		}
		rs = appendString(rs, 3, res.SchemaURL())
		out = protowire.AppendTag(out, 1, protowire.BytesType) // resource_spans
		out = protowire.AppendBytes(out, rs)
	}
	return out
}

// OTLP's span flags: the W3C trace flags, and whether the parent's
// "is remote" is known and true (trace/v1 SpanFlags).
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = appendString(b, 3, sc.TraceState().String())
	if parent.SpanID().IsValid() {
		pid := parent.SpanID()
		b = appendBytes(b, 4, pid[:])
	}
	b = appendString(b, 5, s.Name())
	b = appendVarint(b, 6, uint64(spanKind(s.SpanKind())))
	b = appendFixed64(b, 7, uint64(s.StartTime().UnixNano()))
	b = appendFixed64(b, 8, uint64(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = appendMessage(b, 9, func(b []byte) []byte { return appendKeyValue(b, kv) })
	}
	b = appendVarint(b, 10, uint64(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendFixed64(b, 1, uint64(ev.Time.UnixNano()))
			b = appendString(b, 2, ev.Name)
			for _, kv := range ev.Attributes {
				b = appendMessage(b, 3, func(b []byte) []byte { return appendKeyValue(b, kv) })
			}
			return appendVarint(b, 4, uint64(ev.DroppedAttributeCount))
		})
	}
	b = appendVarint(b, 12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = appendMessage(b, 13, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytes(b, 1, ltid[:])
			b = appendBytes(b, 2, lsid[:])
			b = appendString(b, 3, l.SpanContext.TraceState().String())
			for _, kv := range l.Attributes {
				b = appendMessage(b, 4, func(b []byte) []byte { return appendKeyValue(b, kv) })
			}
			b = appendVarint(b, 5, uint64(l.DroppedAttributeCount))
			return appendFixed32(b, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()))
		})
	}
	b = appendVarint(b, 14, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset {
		b = appendMessage(b, 15, func(b []byte) []byte {
			b = appendString(b, 2, st.Description)
			return appendVarint(b, 3, uint64(statusCode(st.Code)))
		})
	}
	return appendFixed32(b, 16, spanFlags(sc.TraceFlags(), parent.IsRemote()))
}

func spanFlags(f trace.TraceFlags, remote bool) uint32 {
	out := uint32(f) | flagHasIsRemote
	if remote {
		out |= flagIsRemote
	}
	return out
}

// spanKind maps to trace/v1 Span.SpanKind: UNSPECIFIED 0, INTERNAL 1,
// SERVER 2, CLIENT 3, PRODUCER 4, CONSUMER 5.
func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal:
		return 1
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	default:
		return 0
	}
}

// statusCode maps to trace/v1 Status.StatusCode: UNSET 0, OK 1, ERROR 2
// (the API's codes number Error 1 and Ok 2).
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	default:
		return 0
	}
}

// appendKeyValue encodes common/v1 KeyValue: key 1, value 2 (AnyValue).
func appendKeyValue(b []byte, kv attribute.KeyValue) []byte {
	b = appendString(b, 1, string(kv.Key))
	return appendMessage(b, 2, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
}

// appendAnyValue encodes common/v1 AnyValue's oneof: string_value 1,
// bool_value 2, int_value 3, double_value 4, array_value 5, bytes_value 7.
// A oneof member is written even when zero (false, 0): its presence is the
// value's type.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendString(b, v.AsString())
	case attribute.BOOLSLICE:
		return appendArray(b, len(v.AsBoolSlice()), func(b []byte, i int) []byte { return appendAnyValue(b, attribute.BoolValue(v.AsBoolSlice()[i])) })
	case attribute.INT64SLICE:
		return appendArray(b, len(v.AsInt64Slice()), func(b []byte, i int) []byte { return appendAnyValue(b, attribute.Int64Value(v.AsInt64Slice()[i])) })
	case attribute.FLOAT64SLICE:
		return appendArray(b, len(v.AsFloat64Slice()), func(b []byte, i int) []byte {
			return appendAnyValue(b, attribute.Float64Value(v.AsFloat64Slice()[i]))
		})
	case attribute.STRINGSLICE:
		return appendArray(b, len(v.AsStringSlice()), func(b []byte, i int) []byte {
			return appendAnyValue(b, attribute.StringValue(v.AsStringSlice()[i]))
		})
	default:
		// Types herald does not set (bytes, maps, nested slices): their
		// text form.
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendString(b, v.Emit())
	}
}

func appendArray(b []byte, n int, elem func([]byte, int) []byte) []byte {
	return appendMessage(b, 5, func(b []byte) []byte {
		for i := range n {
			b = appendMessage(b, 1, func(b []byte) []byte { return elem(b, i) })
		}
		return b
	})
}

// appendMessage appends field num holding the message inner writes.
func appendMessage(b []byte, num protowire.Number, inner func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, inner(nil))
}

// The scalar fields below follow proto3: a zero value is not written.

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}
