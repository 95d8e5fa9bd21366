package tracing

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func oneSpan(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	_, s := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("t").Start(t.Context(), "s")
	s.End()
	return rec.Ended()
}

// TestExporterRetriesWhatOTLPSaysToRetry: 429, 502, 503 and 504 are
// retried (OTLP/HTTP, "Retryable Response Codes"); 400 is not; a transport
// error is, and its text holds the URL's host at most, never its path or
// query.
func TestExporterRetriesWhatOTLPSaysToRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		statuses []int // answered in turn, the last one from then on
		calls    int32
		err      string
	}{
		{statuses: []int{200}, calls: 1},
		{statuses: []int{503, 502, 504, 200}, calls: 4},
		{statuses: []int{429, 200}, calls: 2},
		{statuses: []int{400}, calls: 1, err: "OTLP export: HTTP 400"},
		{statuses: []int{401}, calls: 1, err: "OTLP export: HTTP 401"},
	} {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := int(calls.Add(1)) - 1
			w.WriteHeader(tc.statuses[min(n, len(tc.statuses)-1)])
		}))
		e := &exporter{endpoint: srv.URL + "/v1/traces?token=SECRET", client: srv.Client()}
		err := e.ExportSpans(t.Context(), oneSpan(t))
		srv.Close()
		if tc.err == "" {
			require.NoError(t, err, "%v", tc.statuses)
		} else {
			require.EqualError(t, err, tc.err)
		}
		require.Equal(t, tc.calls, calls.Load(), "%v", tc.statuses)
	}

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	e := &exporter{endpoint: down.URL + "/v1/traces?token=SECRET", client: down.Client()}
	err := e.ExportSpans(t.Context(), oneSpan(t))
	require.Error(t, err, "given up within ExportTimeout")
	require.NotContains(t, err.Error(), "SECRET")
	require.NotContains(t, err.Error(), "/v1/traces", "the dial error names the host, never the URL")
}
