package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/kmstest"
	"github.com/heraldhq/herald/internal/testkit/otlptest"
	"github.com/heraldhq/herald/internal/testkit/sestest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/internal/tracing"
)

// The queues of a rig's deliver function.
const (
	rigQueue = "https://sqs.us-east-1.amazonaws.com/123456789012/herald"
	rigDLQ   = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq"
)

// rig is the deliver function as app wires it (every channel's real
// sender, the circuit and delivered-once around them, tracing to a real
// OTLP receiver) on the wire-format fakes of DynamoDB, SQS and SES v2,
// with one webhook receiver (httptest, TLS) whose answer the test sets.
type rig struct {
	ddb  *dynamotest.Server
	sqs  *sqstest.Server
	ses  *sestest.Server
	kms  *kmstest.Server
	st   *store.Store
	p    *processor.Processor
	logs *localenv.SyncBuffer
	hook *httptest.Server
	// build makes a new execution environment of the function (its own
	// circuit cache and senders) on the same fakes.
	build func() *processor.Processor

	mu     sync.Mutex
	answer func(w http.ResponseWriter, r *http.Request)
	posts  []string // webhook-id of each request, in order
}

// newRig builds a rig whose environment is env over the queues, the
// table "herald", the webhook secret and a receiver on 127.0.0.1; the
// receiver answers 204 until the test sets another answer.
func newRig(t *testing.T, env map[string]string) *rig {
	t.Helper()
	r := &rig{ddb: dynamotest.New(t), sqs: sqstest.New(t), ses: sestest.New(t), kms: kmstest.New(t), logs: &localenv.SyncBuffer{}}
	r.ddb.AddTable("herald", store.AttrPK, store.AttrSK)
	r.sqs.AddQueue(rigQueue, nil)
	r.sqs.AddQueue(rigDLQ, nil)
	r.hook = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Read whole, so that the server sees the client go away.
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.posts = append(r.posts, req.Header.Get("webhook-id"))
		answer := r.answer
		r.mu.Unlock()
		if answer != nil {
			answer(w, req)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.hook.Close)

	full := map[string]string{
		"HERALD_QUEUE_URL": rigQueue, "HERALD_DLQ_URL": rigDLQ,
		"HERALD_WEBHOOK_SECRET": secretA, "HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
		"HERALD_STORE_TABLE": "herald",
	}
	for k, v := range env {
		full[k] = v
	}
	cfg, err := config.LoadDeliver(func(k string) string { return full[k] })
	require.NoError(t, err)
	awsCfg := awstest.Config(r.endpoint(t))
	r.st, err = store.New(dynamodb.NewFromConfig(awsCfg), store.Config{Table: "herald"})
	require.NoError(t, err)
	otlp := otlptest.New(t)
	tr, err := tracing.New(context.Background(), tracing.Config{Mode: tracing.OTLP, Endpoint: otlp.Endpoint(), SampleRatio: 1, ServiceName: "herald-rig"}, tracing.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	r.build = func() *processor.Processor {
		p, err := app.NewDeliver(cfg, awsCfg, app.DeliverOptions{
			WebhookTLS: r.hook.Client().Transport.(*http.Transport).TLSClientConfig,
			Logger:     slog.New(slog.NewJSONHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Tracing:    tr,
		})
		require.NoError(t, err)
		return p
	}
	r.p = r.build()
	return r
}

// coldStart replaces the rig's function by a new execution environment
// on the same fakes: its circuit reads each destination's health afresh.
func (r *rig) coldStart() { r.p = r.build() }

// endpoint serves DynamoDB, SQS, KMS and SES v2 on one URL, as an account's
// endpoint resolution gives each client its own: the JSON protocols by
// their X-Amz-Target header, SES v2 by its REST path.
func (r *rig) endpoint(t *testing.T) string {
	t.Helper()
	proxy := func(raw string) *httputil.ReverseProxy {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		return httputil.NewSingleHostReverseProxy(u)
	}
	dyn, sq, ses, kms := proxy(r.ddb.URL()), proxy(r.sqs.URL()), proxy(r.ses.URL()), proxy(r.kms.URL())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch target := req.Header.Get("X-Amz-Target"); {
		case strings.HasPrefix(target, "DynamoDB_20120810."):
			dyn.ServeHTTP(w, req)
		case strings.HasPrefix(target, "AmazonSQS."):
			sq.ServeHTTP(w, req)
		case strings.HasPrefix(target, "TrentService."):
			kms.ServeHTTP(w, req)
		case strings.HasPrefix(req.URL.Path, "/v2/email/"):
			ses.ServeHTTP(w, req)
		default:
			http.Error(w, "no service for "+target+" "+req.URL.Path, http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// setAnswer makes the receiver answer with f (nil: 204).
func (r *rig) setAnswer(f func(w http.ResponseWriter, req *http.Request)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = f
}

func status(code int) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// postsOf is how many requests the receiver got for notification id.
func (r *rig) postsOf(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range r.posts {
		if p == id {
			n++
		}
	}
	return n
}

// sqsRecord is one record of a batch: message id mid, receive count n.
func sqsRecord(mid, body string, n string) events.SQSMessage {
	return events.SQSMessage{MessageId: mid, ReceiptHandle: "rh-" + mid, Body: body,
		EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:herald",
		Attributes:     map[string]string{"ApproximateReceiveCount": n}}
}

func (r *rig) handle(t *testing.T, ctx context.Context, recs ...events.SQSMessage) []string {
	t.Helper()
	resp, err := r.p.Handle(ctx, events.SQSEvent{Records: recs})
	require.NoError(t, err)
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// lines are the "notification" lines by SQS message id, the last of each,
// and the "batch" lines.
func (r *rig) lines(t *testing.T) (byMessage map[string]map[string]any, batches []map[string]any) {
	t.Helper()
	byMessage = map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader([]byte(r.logs.String())))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		switch m["msg"] {
		case processor.LineNotification:
			byMessage[m["sqs_message_id"].(string)] = m
		case processor.LineBatch:
			batches = append(batches, m)
		}
	}
	return byMessage, batches
}

// batchSum is metric name summed over every batch line.
func (r *rig) batchSum(t *testing.T, name string) float64 {
	t.Helper()
	_, batches := r.lines(t)
	sum := 0.0
	for _, b := range batches {
		if v, ok := b[name].(float64); ok {
			sum += v
		}
	}
	return sum
}

// deadLetters are the reasons of the dead letters sent, by body.
func (r *rig) deadLetters(t *testing.T) map[string]redrive.Reason {
	t.Helper()
	out := map[string]redrive.Reason{}
	for _, m := range r.sqs.Messages(rigDLQ) {
		var reason redrive.Reason
		require.NoError(t, json.Unmarshal([]byte(*m.MsgAttrs[redrive.AttrReason].StringValue), &reason))
		out[m.Body] = reason
	}
	return out
}

func (r *rig) health(t *testing.T, key string) store.Health {
	t.Helper()
	h, err := r.st.Health(context.Background(), key)
	require.NoError(t, err)
	return h
}

// deliveryItems counts the delivered-once items of the table (leases and
// batch confirms).
func (r *rig) deliveryItems() int {
	n := 0
	for _, item := range r.ddb.Items("herald") {
		if s := item["type"].(map[string]any)["S"].(string); s == "delivery" || s == "delivery_batch" {
			n++
		}
	}
	return n
}

func (r *rig) webhookBody(id string) string {
	return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + r.hook.URL + `/h","event_type":"t","payload":{}}}`
}
