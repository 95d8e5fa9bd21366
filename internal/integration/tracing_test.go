//go:build integration

package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/testkit/otlptest"
	"github.com/heraldhq/herald/internal/tracecontext"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/producer"
)

// TestTraceFromProducerToReceiver: through LocalStack's SQS, the producer's
// span reaches the deliver function in both attributes (the traceparent
// message attribute and the AWSTraceHeader system attribute, which SQS
// returns on receive), the record span links to it, and the receiver gets
// a traceparent whose parent is the send span. Spans go to a real OTLP/HTTP
// receiver: LocalStack's community edition has no X-Ray.
func TestTraceFromProducerToReceiver(t *testing.T) {
	t.Parallel()
	const callerTrace, callerSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	rcv := otlptest.New(t)
	tr, err := tracing.New(t.Context(), tracing.Config{Mode: tracing.OTLP, Endpoint: rcv.Endpoint(), SampleRatio: 1}, tracing.Options{})
	require.NoError(t, err)
	e := setup(t, options{deliver: func(_ *env, _ *config.Deliver, o *app.DeliverOptions) { o.Tracing = tr }})
	e.runner.Handler = tr.Handler(e.runner.Handler, nil)

	ctx, err := tracecontext.FromTraceParent(e.ctx, "00-"+callerTrace+"-"+callerSpan+"-01")
	require.NoError(t, err)
	body := `{"version":1,"id":"traced-1","channel":"webhook","webhook":{"url":"` + e.receiver.URL() + `/traced","event_type":"t","payload":{}}}`
	_, err = (&producer.Client{SQS: e.sqs, QueueURL: e.queues.URL}).SendBodies(ctx, [][]byte{[]byte(body)})
	require.NoError(t, err)
	e.pollUntil(30*time.Second, func() bool { return len(e.receiver.Requests()) > 0 })

	var record, send otlptest.Span
	for _, s := range rcv.Spans() {
		switch s.Name {
		case tracing.SpanRecord:
			record = s
		case tracing.SpanSend:
			send = s
		}
	}
	require.Equal(t, "traced-1", record.Attributes[string(tracing.KeyNotificationID)])
	require.Equal(t, "delivered", record.Attributes[string(tracing.KeyOutcome)])
	require.Equal(t, []otlptest.Link{{TraceID: callerTrace, SpanID: callerSpan}}, record.Links,
		"one link: the traceparent attribute and AWSTraceHeader name the same span")
	require.Equal(t, record.SpanID, send.ParentSpanID)
	require.Equal(t, "00-"+record.TraceID+"-"+send.SpanID+"-01", e.receiver.Requests()[0].Header.Get("traceparent"))
}
