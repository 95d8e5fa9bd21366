package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TracesPath is the OTLP/HTTP traces path.
const TracesPath = "/v1/traces"

// Span is one received span, its ids in lower-case hex.
type Span struct {
	TraceID, SpanID, ParentSpanID string
	Name                          string
	Kind                          tracepb.Span_SpanKind
	// Attributes holds each attribute's value: string, bool, int64,
	// float64, or the AnyValue itself for others.
	Attributes map[string]any
	Links      []Link
	StatusCode tracepb.Status_StatusCode
	StatusText string
	// Resource is the attributes of the span's resource.
	Resource map[string]any
	// Sampled is the W3C sampled flag the exporter set on the span.
	Sampled bool
}

// Link is a span's link to another span.
type Link struct {
	TraceID, SpanID string
}

// Server is a running receiver, closed when its test ends.
type Server struct {
	srv      *httptest.Server
	mu       sync.Mutex
	spans    []Span
	requests []*http.Request
	raw      [][]byte
}

// New starts a receiver.
func New(t testing.TB) *Server {
	t.Helper()
	s := Start()
	t.Cleanup(s.Close)
	return s
}

// Start starts a receiver outside a test (make bench's); Close stops it.
func Start() *Server {
	s := &Server{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the receiver; closing it again does nothing.
func (s *Server) Close() { s.srv.Close() }

// NewTLS starts a receiver over HTTPS (X-Ray's endpoint is https only);
// Client trusts it.
func NewTLS(t testing.TB) *Server {
	t.Helper()
	s := &Server{}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Client returns an HTTP client that trusts the receiver.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Endpoint is the receiver's traces URL (…/v1/traces).
func (s *Server) Endpoint() string { return s.srv.URL + TracesPath }

// Spans returns the spans received so far, in arrival order.
func (s *Server) Spans() []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Span(nil), s.spans...)
}

// Requests returns the export requests received so far (their bodies
// read): a test checks their headers.
func (s *Server) Requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

// Bodies returns the raw (decompressed) bodies received so far: a test
// looks for text that must never be sent.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raw...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != TracesPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Content-Type") != "application/x-protobuf" {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var req collector.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		res := attributes(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				out := Span{
					TraceID:      hex.EncodeToString(sp.GetTraceId()),
					SpanID:       hex.EncodeToString(sp.GetSpanId()),
					ParentSpanID: hex.EncodeToString(sp.GetParentSpanId()),
					Name:         sp.GetName(),
					Kind:         sp.GetKind(),
					Attributes:   attributes(sp.GetAttributes()),
					StatusCode:   sp.GetStatus().GetCode(),
					StatusText:   sp.GetStatus().GetMessage(),
					Resource:     res,
					Sampled:      sp.GetFlags()&uint32(tracepb.SpanFlags_SPAN_FLAGS_TRACE_FLAGS_MASK)&1 == 1,
				}
				for _, l := range sp.GetLinks() {
					out.Links = append(out.Links, Link{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId())})
				}
				got = append(got, out)
			}
		}
	}
	s.mu.Lock()
	s.spans = append(s.spans, got...)
	s.requests = append(s.requests, r)
	s.raw = append(s.raw, data)
	s.mu.Unlock()
	resp, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func attributes(kvs []*common.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch v.GetValue().(type) {
		case *common.AnyValue_StringValue:
			out[kv.GetKey()] = v.GetStringValue()
		case *common.AnyValue_BoolValue:
			out[kv.GetKey()] = v.GetBoolValue()
		case *common.AnyValue_IntValue:
			out[kv.GetKey()] = v.GetIntValue()
		case *common.AnyValue_DoubleValue:
			out[kv.GetKey()] = v.GetDoubleValue()
		default:
			out[kv.GetKey()] = v
		}
	}
	return out
}
