package main

import (
	"fmt"
	"io"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/heraldhq/herald/internal/testkit/otlptest"
	"github.com/heraldhq/herald/internal/tracing"
)

// traceCount is what one function exported to the rounds' OTLP receiver.
type traceCount struct {
	// invocations and records are its spans named tracing.SpanInvocation
	// and tracing.SpanRecord; spans all of them.
	invocations, records, spans int
	// bytes is the protobuf bodies of its export requests, uncompressed.
	bytes int
}

// tracesBy counts what the receiver got by the spans' service.name, the
// function's name (AWS_LAMBDA_FUNCTION_NAME).
func tracesBy(s *otlptest.Server) map[string]traceCount {
	out := map[string]traceCount{}
	for _, sp := range s.Spans() {
		name, _ := sp.Resource[string(tracing.KeyServiceName)].(string)
		c := out[name]
		c.spans++
		switch sp.Name {
		case tracing.SpanInvocation:
			c.invocations++
		case tracing.SpanRecord:
			c.records++
		}
		out[name] = c
	}
	for _, body := range s.Bodies() {
		var req collector.ExportTraceServiceRequest
		if proto.Unmarshal(body, &req) != nil || len(req.GetResourceSpans()) == 0 {
			continue
		}
		for _, kv := range req.GetResourceSpans()[0].GetResource().GetAttributes() {
			if kv.GetKey() == string(tracing.KeyServiceName) {
				c := out[kv.GetValue().GetStringValue()]
				c.bytes += len(body)
				out[kv.GetValue().GetStringValue()] = c
			}
		}
	}
	return out
}

// bytesPerTrace is the OTLP bytes per exported invocation, 0 without one.
func (c traceCount) bytesPerTrace() float64 {
	if c.invocations == 0 {
		return 0
	}
	return float64(c.bytes) / float64(c.invocations)
}

// printTracingAdds prints what tracing on (p, its samples t) adds to
// herald's samples h, round by round, and what its OTLP receiver got.
func printTracingAdds(out io.Writer, p peer, h, t peerSamples, got traceCount) {
	fmt.Fprintf(out, "   %s: the same bootstrap as herald's (section 5's size), in the same rounds; it adds, round by round: "+
		"cold start %s, Init Duration %s, batch of 10 %s, CPU per record %s µs, peak RSS %s KB; "+
		"the OTLP receiver got %d invocation spans for %d invocations, %d record spans, %d spans in all, %.0f bytes of OTLP protobuf per traced invocation\n",
		p.label, addedRange(pairedDiffs(h.cold, t.cold)), addedRange(pairedDiffs(h.init, t.init)), addedRange(pairedDiffs(h.b10, t.b10)),
		numRange(floatDiffs(h.cpuUS, t.cpuUS), "%+.0f"), numRange(floatDiffs(h.rssKB, t.rssKB), "%+.0f"),
		got.invocations, t.invocations, got.records, got.spans, got.bytesPerTrace())
}
