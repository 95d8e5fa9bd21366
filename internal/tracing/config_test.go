package tracing_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/tracing"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want tracing.Config
		err  string
	}{
		{name: "unset is off", env: map[string]string{}, want: tracing.Config{Mode: tracing.Off, SampleRatio: tracing.DefaultSampleRatio, ServiceName: "herald-deliver"}},
		{name: "off spelled out", env: map[string]string{"HERALD_TRACING": " OFF "}, want: tracing.Config{Mode: tracing.Off, SampleRatio: tracing.DefaultSampleRatio, ServiceName: "herald-deliver"}},
		{
			name: "xray leaves the endpoint to the Region (New)",
			env:  map[string]string{"HERALD_TRACING": "xray", "AWS_REGION": "eu-west-1"},
			want: tracing.Config{Mode: tracing.XRay, SampleRatio: 0.01, ServiceName: "herald-deliver"},
		},
		{
			name: "otlp with a ratio",
			env:  map[string]string{"HERALD_TRACING": "otlp", "HERALD_TRACING_ENDPOINT": "http://127.0.0.1:4318/v1/traces", "HERALD_TRACING_SAMPLE_RATIO": "0.25"},
			want: tracing.Config{Mode: tracing.OTLP, Endpoint: "http://127.0.0.1:4318/v1/traces", SampleRatio: 0.25, ServiceName: "herald-deliver"},
		},
		{name: "ratio 0 stays 0", env: map[string]string{"HERALD_TRACING": "otlp", "HERALD_TRACING_ENDPOINT": "http://c/v1/traces", "HERALD_TRACING_SAMPLE_RATIO": "0"}, want: tracing.Config{Mode: tracing.OTLP, Endpoint: "http://c/v1/traces", SampleRatio: 0, ServiceName: "herald-deliver"}},
		{name: "ratio 1", env: map[string]string{"HERALD_TRACING": "otlp", "HERALD_TRACING_ENDPOINT": "http://c/v1/traces", "HERALD_TRACING_SAMPLE_RATIO": "1"}, want: tracing.Config{Mode: tracing.OTLP, Endpoint: "http://c/v1/traces", SampleRatio: 1, ServiceName: "herald-deliver"}},
		{name: "unknown mode", env: map[string]string{"HERALD_TRACING": "jaeger"}, err: `HERALD_TRACING "jaeger": must be off, xray or otlp`},
		{name: "xray over http", env: map[string]string{"HERALD_TRACING": "xray", "HERALD_TRACING_ENDPOINT": "http://xray.us-east-1.amazonaws.com/v1/traces"}, err: "X-Ray's endpoint is https"},
		{name: "otlp without an endpoint", env: map[string]string{"HERALD_TRACING": "otlp"}, err: "HERALD_TRACING_ENDPOINT is required"},
		{name: "relative endpoint", env: map[string]string{"HERALD_TRACING": "otlp", "HERALD_TRACING_ENDPOINT": "/v1/traces"}, err: "HERALD_TRACING_ENDPOINT: must be an absolute http(s) URL"},
		{name: "ratio above 1", env: map[string]string{"HERALD_TRACING": "otlp", "HERALD_TRACING_ENDPOINT": "http://c/v1/traces", "HERALD_TRACING_SAMPLE_RATIO": "1.5"}, err: "HERALD_TRACING_SAMPLE_RATIO 1.5: must be from 0 to 1"},
		{name: "negative ratio", env: map[string]string{"HERALD_TRACING_SAMPLE_RATIO": "-0.1"}, err: `HERALD_TRACING_SAMPLE_RATIO "-0.1": must be from 0 to 1`},
		{name: "ratio not a number", env: map[string]string{"HERALD_TRACING_SAMPLE_RATIO": "5%"}, err: `HERALD_TRACING_SAMPLE_RATIO "5%": not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tracing.LoadConfig(func(k string) string { return tc.env[k] })
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestLoadConfigKeepsTheEndpointOutOfErrors: a collector URL may carry a
// token; an error names the variable, never echoes its value.
func TestLoadConfigKeepsTheEndpointOutOfErrors(t *testing.T) {
	t.Parallel()
	_, err := tracing.LoadConfig(func(k string) string {
		return map[string]string{"HERALD_TRACING": "otlp", "HERALD_TRACING_ENDPOINT": "collector/v1/traces?api_key=SECRET"}[k]
	})
	require.ErrorContains(t, err, "HERALD_TRACING_ENDPOINT")
	require.NotContains(t, err.Error(), "SECRET")
}

// TestNewOff: off builds nothing, and a nil *Tracing is harmless
// everywhere it is wired.
func TestNewOff(t *testing.T) {
	t.Parallel()
	tr, err := tracing.New(t.Context(), tracing.Config{}, tracing.Options{})
	require.NoError(t, err)
	require.Nil(t, tr)
	require.NoError(t, tr.Flush(t.Context()))
	require.NoError(t, tr.Shutdown(t.Context()))
	require.NoError(t, tr.AWSMiddleware(nil))
	_, span := tr.Tracer().Start(t.Context(), "x")
	require.False(t, span.SpanContext().IsValid(), "a no-op span")
	require.False(t, span.IsRecording())
	next := &keyed{}
	require.Same(t, next, tr.Sender(next), "no wrapper")
}
