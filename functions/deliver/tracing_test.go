package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/testkit/otlptest"
	"github.com/heraldhq/herald/internal/tracing"
)

// TestStartTraces: HERALD_TRACING=otlp reaches the cold start: the
// handler's invocation, record, send and DynamoDB spans are exported
// before it returns, named after the function, and the webhook carries
// traceparent.
func TestStartTraces(t *testing.T) {
	rcv := otlptest.New(t)
	s := setup(t, map[string]string{
		"HERALD_TRACING": "otlp", "HERALD_TRACING_ENDPOINT": rcv.Endpoint(), "HERALD_TRACING_SAMPLE_RATIO": "1",
	})
	var stdout, stderr localenv.SyncBuffer
	handle, err := start(context.Background(), &stdout, &stderr)
	require.NoError(t, err)
	resp, err := handle(context.Background(), batch(hooks, webhookBody("evt-1", s.receiver)))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Empty(t, stderr.String())

	names := map[string]int{}
	for _, sp := range rcv.Spans() {
		names[sp.Name]++
		require.Equal(t, function, sp.Resource[string(tracing.KeyServiceName)])
	}
	require.Equal(t, 1, names[tracing.SpanInvocation])
	require.Equal(t, 1, names[tracing.SpanRecord])
	require.Equal(t, 1, names[tracing.SpanSend])
	require.Positive(t, names["DynamoDB.PutItem"], "the delivered-once calls")
	require.Len(t, s.posts()[0].Header.Get("traceparent"), 55)
}

// TestStartWithABadTracingSettingDelivers: tracing is not worth a
// delivery: a setting it cannot use is said once on stderr, and the
// function delivers untraced.
func TestStartWithABadTracingSettingDelivers(t *testing.T) {
	s := setup(t, map[string]string{"HERALD_TRACING": "jaeger"})
	var stdout, stderr localenv.SyncBuffer
	handle, err := start(context.Background(), &stdout, &stderr)
	require.NoError(t, err)
	require.Contains(t, stderr.String(), `herald deliver: tracing off: HERALD_TRACING "jaeger": must be off, xray or otlp`)
	resp, err := handle(context.Background(), batch(hooks, webhookBody("evt-1", s.receiver)))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Empty(t, s.posts()[0].Header.Values("traceparent"))
}
