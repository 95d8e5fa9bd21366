package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/heraldhq/herald/internal/localenv"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/stretchr/testify/require"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/otlptest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/internal/tracecontext"
	"github.com/heraldhq/herald/internal/tracing"
)

// The producer's span the records carry: as a traceparent message
// attribute (W3C) and as SQS's AWSTraceHeader (X-Ray).
const (
	producerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	producerSpan  = "00f067aa0ba902b7"
	xrayTrace     = "5759e988bd862e3fe1be46a994272793"
	xrayParent    = "53995c3f42cd8ad8"
)

// Text that must never leave in a span: the webhook URL's path, query and
// credentials, a header's value, the payload, the signing secret.
var secretsInBatch = []string{"/hook", "SECRET-TOKEN", "user:pw", "HDR-SECRET", "PAYLOAD-SECRET", secretA, "Bearer"}

type tracedDeliver struct {
	logs     *localenv.SyncBuffer // the function's JSON log lines
	otlp     *otlptest.Server
	sqs      *sqstest.Server
	handle   tracing.SQSHandler
	hookURL  string
	mu       sync.Mutex
	received map[string]http.Header // webhook-id → request headers
}

// setupTraced is the deliver function with tracing to a real OTLP/HTTP
// receiver at ratio (below 0: HERALD_TRACING=off), SQS (visibility
// changes, dead letters) on the wire-format fake, and one webhook receiver
// answering 204, or 500 to id "n-fail".
func setupTraced(t *testing.T, ratio float64) *tracedDeliver {
	t.Helper()
	d := &tracedDeliver{otlp: otlptest.New(t), sqs: sqstest.New(t), received: map[string]http.Header{}}
	hook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		d.mu.Lock()
		d.received[r.Header.Get("webhook-id")] = r.Header.Clone()
		d.mu.Unlock()
		if r.Header.Get("webhook-id") == "n-fail" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	d.hookURL = strings.Replace(hook.URL, "https://", "https://user:pw@", 1) + "/hook?token=SECRET-TOKEN"

	const queue, dlq = "https://sqs.us-east-1.amazonaws.com/123456789012/herald", "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq"
	d.sqs.AddQueue(queue, nil)
	d.sqs.AddQueue(dlq, nil)
	env := map[string]string{
		"HERALD_QUEUE_URL": queue, "HERALD_DLQ_URL": dlq,
		"HERALD_WEBHOOK_SECRET": secretA, "HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
	}
	cfg, err := config.LoadDeliver(func(k string) string { return env[k] })
	require.NoError(t, err)
	tcfg := tracing.Config{Mode: tracing.OTLP, Endpoint: d.otlp.Endpoint(), SampleRatio: ratio, ServiceName: "herald-deliver-test"}
	if ratio < 0 {
		tcfg = tracing.Config{Mode: tracing.Off}
	}
	tr, err := tracing.New(context.Background(), tcfg, tracing.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	d.logs = &localenv.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(d.logs, nil))
	p, err := app.NewDeliver(cfg, awstest.Config(d.sqs.URL()), app.DeliverOptions{
		WebhookTLS: hook.Client().Transport.(*http.Transport).TLSClientConfig,
		Logger:     logger,
		Tracing:    tr,
	})
	require.NoError(t, err)
	d.handle = tr.Handler(p.Handle, logger)
	return d
}

// batch is three records: n-ok (delivered; traceparent attribute), n-fail
// (500, retried; AWSTraceHeader only) and one whose body is invalid
// (dead-lettered).
func (d *tracedDeliver) batch() events.SQSEvent {
	hook := func(id string) string {
		return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + d.hookURL +
			`","event_type":"t","headers":{"Authorization":"Bearer HDR-SECRET"},"payload":{"p":"PAYLOAD-SECRET"}}}`
	}
	tp := "00-" + producerTrace + "-" + producerSpan + "-01"
	return events.SQSEvent{Records: []events.SQSMessage{
		{
			MessageId: "m-ok", ReceiptHandle: "rh-ok", Body: hook("n-ok"),
			Attributes:        map[string]string{"ApproximateReceiveCount": "1"},
			MessageAttributes: map[string]events.SQSMessageAttribute{tracecontext.MessageAttribute: {DataType: "String", StringValue: &tp}},
		},
		{
			MessageId: "m-fail", ReceiptHandle: "rh-fail", Body: hook("n-fail"),
			Attributes: map[string]string{"ApproximateReceiveCount": "1",
				tracecontext.SystemAttribute: "Root=1-" + xrayTrace[:8] + "-" + xrayTrace[8:] + ";Parent=" + xrayParent + ";Sampled=1"},
		},
		{
			MessageId: "m-bad", ReceiptHandle: "rh-bad", Body: `{"version":1,"id":"n-bad","channel":"webhook"}`,
			Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		},
	}}
}

func byName(spans []otlptest.Span, name string) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func withAttr(spans []otlptest.Span, key string, v any) otlptest.Span {
	for _, s := range spans {
		if s.Attributes[key] == v {
			return s
		}
	}
	return otlptest.Span{}
}

// TestTracesFollowANotification: one invocation exports, before it
// returns, its span, a span per record linked to the producer's trace
// (traceparent attribute, AWSTraceHeader), a send span per webhook POST
// and a span per SQS call, each with its outcome and error class; the
// webhook receiver gets a traceparent whose parent is the send span; no
// span holds a secret, a URL's path or query, or the payload.
func TestTracesFollowANotification(t *testing.T) {
	t.Parallel()
	d := setupTraced(t, 1)
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})

	resp, err := d.handle(ctx, d.batch())
	require.NoError(t, err)
	require.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m-fail"}}, resp.BatchItemFailures)

	spans := d.otlp.Spans() // exported before the handler returned
	inv := byName(spans, tracing.SpanInvocation)
	require.Len(t, inv, 1)
	root := inv[0]
	require.Empty(t, root.ParentSpanID, "no Lambda trace header: a new trace")
	require.Equal(t, tracepb.Span_SPAN_KIND_CONSUMER, root.Kind)
	require.Equal(t, int64(3), root.Attributes[string(tracing.KeyBatchCount)])
	require.Equal(t, int64(1), root.Attributes[string(tracing.KeyBatchFailures)])
	require.Equal(t, true, root.Attributes[string(tracing.KeyFaaSColdStart)])
	require.Equal(t, "req-1", root.Attributes[string(tracing.KeyFaaSInvocationID)])
	require.Equal(t, "herald-deliver-test", root.Resource[string(tracing.KeyServiceName)])

	recs := byName(spans, tracing.SpanRecord)
	require.Len(t, recs, 3)
	for _, r := range recs {
		require.Equal(t, root.TraceID, r.TraceID)
		require.Equal(t, root.SpanID, r.ParentSpanID, "a record's span is the invocation's child")
	}
	ok := withAttr(recs, string(tracing.KeyNotificationID), "n-ok")
	require.Equal(t, []otlptest.Link{{TraceID: producerTrace, SpanID: producerSpan}}, ok.Links, "linked to the producer's traceparent")
	require.Equal(t, "delivered", ok.Attributes[string(tracing.KeyOutcome)])
	require.Equal(t, "m-ok", ok.Attributes[string(tracing.KeyMessageID)])
	require.Equal(t, "webhook", ok.Attributes[string(tracing.KeyChannel)])
	require.Equal(t, tracepb.Status_STATUS_CODE_UNSET, ok.StatusCode)

	fail := withAttr(recs, string(tracing.KeyNotificationID), "n-fail")
	require.Equal(t, []otlptest.Link{{TraceID: xrayTrace, SpanID: xrayParent}}, fail.Links, "linked to the AWSTraceHeader's trace")
	require.Equal(t, "retry", fail.Attributes[string(tracing.KeyOutcome)])
	require.Equal(t, "webhook_http_5xx", fail.Attributes[string(tracing.KeyErrorType)])
	require.Equal(t, tracepb.Status_STATUS_CODE_ERROR, fail.StatusCode)
	require.Equal(t, "webhook_http_5xx", fail.StatusText)
	require.Contains(t, fail.Attributes, string(tracing.KeyRetryDelayMS))

	bad := withAttr(recs, string(tracing.KeyNotificationID), "n-bad")
	require.Empty(t, bad.Links)
	require.Equal(t, "dead_lettered", bad.Attributes[string(tracing.KeyOutcome)])
	require.Equal(t, "invalid_message", bad.Attributes[string(tracing.KeyErrorClass)])

	sends := byName(spans, tracing.SpanSend)
	require.Len(t, sends, 2, "the invalid record is not sent")
	okSend := withAttr(sends, string(tracing.KeyNotificationID), "n-ok")
	require.Equal(t, ok.SpanID, okSend.ParentSpanID)
	require.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, okSend.Kind)
	require.Equal(t, "127.0.0.1", okSend.Attributes[string(tracing.KeyServerAddress)])
	require.Equal(t, "https", okSend.Attributes[string(tracing.KeyURLScheme)])
	require.Equal(t, "sent", okSend.Attributes[string(tracing.KeyOutcome)])
	failSend := withAttr(sends, string(tracing.KeyNotificationID), "n-fail")
	require.Equal(t, fail.SpanID, failSend.ParentSpanID)
	require.Equal(t, "webhook_http_5xx", failSend.Attributes[string(tracing.KeyErrorClass)])
	require.Equal(t, false, failSend.Attributes[string(tracing.KeyPermanent)])

	// The receiver joins the trace: parent = the send span.
	d.mu.Lock()
	require.Equal(t, "00-"+root.TraceID+"-"+okSend.SpanID+"-01", d.received["n-ok"].Get("traceparent"))
	require.Equal(t, "00-"+root.TraceID+"-"+failSend.SpanID+"-01", d.received["n-fail"].Get("traceparent"))
	d.mu.Unlock()

	// SQS calls: the dead letter under its record, the visibility change
	// under the invocation.
	move := byName(spans, "SQS.SendMessage")
	require.Len(t, move, 1)
	require.Equal(t, bad.SpanID, move[0].ParentSpanID)
	require.Equal(t, "aws-api", move[0].Attributes[string(tracing.KeyRPCSystem)])
	require.Equal(t, "SendMessage", move[0].Attributes[string(tracing.KeyRPCMethod)])
	vis := byName(spans, "SQS.ChangeMessageVisibilityBatch")
	require.Len(t, vis, 1)
	require.Equal(t, root.SpanID, vis[0].ParentSpanID)

	for _, b := range d.otlp.Bodies() {
		for _, s := range secretsInBatch {
			require.False(t, bytes.Contains(b, []byte(s)), "an exported span holds %q", s)
		}
	}

	// Each record's log line names its trace, for `herald trace` to join.
	traced := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(d.logs.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		if m["msg"] == "notification" {
			traced[m["id"].(string)], _ = m["trace_id"].(string)
		}
	}
	require.Equal(t, map[string]string{"n-ok": root.TraceID, "n-fail": root.TraceID, "n-bad": root.TraceID}, traced)

	// The next invocation is warm.
	_, err = d.handle(ctx, events.SQSEvent{Records: d.batch().Records[:1]})
	require.NoError(t, err)
	warm := byName(d.otlp.Spans(), tracing.SpanInvocation)
	require.Len(t, warm, 2)
	require.Equal(t, false, warm[1].Attributes[string(tracing.KeyFaaSColdStart)])
}

// TestTracesUnderLambdasTraceHeader: with Tracing: Active, Lambda hands
// each invocation its X-Ray trace header; the invocation's span is its
// child, in its trace.
func TestTracesUnderLambdasTraceHeader(t *testing.T) {
	t.Parallel()
	d := setupTraced(t, 1)
	const lambdaTrace, lambdaSegment = "6a7b3c1e2d4f5a6b7c8d9e0f1a2b3c4d", "1a2b3c4d5e6f7a8b"
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", //nolint:staticcheck // aws-lambda-go's own key
		"Root=1-"+lambdaTrace[:8]+"-"+lambdaTrace[8:]+";Parent="+lambdaSegment+";Sampled=1")
	_, err := d.handle(ctx, events.SQSEvent{Records: d.batch().Records[:1]})
	require.NoError(t, err)
	inv := byName(d.otlp.Spans(), tracing.SpanInvocation)
	require.Len(t, inv, 1)
	require.Equal(t, lambdaTrace, inv[0].TraceID)
	require.Equal(t, lambdaSegment, inv[0].ParentSpanID)
}

// TestTracesSampledOut: at ratio 0 nothing is exported, and the webhook
// still carries a traceparent, flagged not sampled (00), so that the
// receiver neither records nor breaks the trace.
func TestTracesSampledOut(t *testing.T) {
	t.Parallel()
	d := setupTraced(t, 0)
	_, err := d.handle(context.Background(), d.batch())
	require.NoError(t, err)
	require.Empty(t, d.otlp.Spans())
	require.Empty(t, d.otlp.Requests(), "no export call at all")
	require.NotContains(t, d.logs.String(), "trace_id", "no trace to join: the log lines name none")
	require.Contains(t, d.logs.String(), `"id":"n-ok"`)
	d.mu.Lock()
	defer d.mu.Unlock()
	tp := d.received["n-ok"].Get("traceparent")
	require.Len(t, tp, 55)
	require.True(t, strings.HasSuffix(tp, "-00"), tp)
}

// TestTracingOff: HERALD_TRACING=off builds nothing: no tracing, no span
// exported, no traceparent on the webhook, the same handler.
func TestTracingOff(t *testing.T) {
	t.Parallel()
	d := setupTraced(t, -1)
	resp, err := d.handle(context.Background(), d.batch())
	require.NoError(t, err)
	require.Len(t, resp.BatchItemFailures, 1)
	require.Empty(t, d.otlp.Requests())
	d.mu.Lock()
	defer d.mu.Unlock()
	require.Len(t, d.received, 2)
	for id, h := range d.received {
		require.Empty(t, h.Values("traceparent"), id)
	}
}

// TestTracesRatioDecidesUnderLambdasHeader: Lambda's trace header says
// Sampled=1 (X-Ray's rules sampled the invocation), but herald's ratio
// decides its own spans: at 0 none is exported.
func TestTracesRatioDecidesUnderLambdasHeader(t *testing.T) {
	t.Parallel()
	d := setupTraced(t, 0)
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", //nolint:staticcheck // aws-lambda-go's own key
		"Root=1-6a7b3c1e-2d4f5a6b7c8d9e0f1a2b3c4d;Parent=1a2b3c4d5e6f7a8b;Sampled=1")
	_, err := d.handle(ctx, events.SQSEvent{Records: d.batch().Records[:1]})
	require.NoError(t, err)
	require.Empty(t, d.otlp.Spans())
	d.mu.Lock()
	defer d.mu.Unlock()
	require.Equal(t, "00-6a7b3c1e2d4f5a6b7c8d9e0f1a2b3c4d-", d.received["n-ok"].Get("traceparent")[:36], "in Lambda's trace all the same")
}
