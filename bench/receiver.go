package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/processor"
)

// benchSecret signs the bench's webhooks (a throwaway key).
const benchSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// receiver is a local HTTPS webhook receiver that answers every request
// after a fixed delay: 503 for paths under /fail/, 410 under /gone/, else
// 200. It records when each webhook-id arrived.
type receiver struct {
	srv   *httptest.Server
	delay time.Duration
	count atomic.Int64

	mu      sync.Mutex
	arrived map[string]time.Time
	onHit   func(id string, at time.Time)
}

func newReceiver(delay time.Duration) *receiver {
	r := &receiver{delay: delay, arrived: map[string]time.Time{}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.StartTLS()
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	now := time.Now()
	if id := req.Header.Get("webhook-id"); id != "" {
		r.mu.Lock()
		r.arrived[id] = now
		hit := r.onHit
		r.mu.Unlock()
		if hit != nil {
			hit(id, now)
		}
	}
	r.count.Add(1)
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	switch {
	case strings.HasPrefix(req.URL.Path, "/fail/"):
		w.WriteHeader(http.StatusServiceUnavailable)
	case strings.HasPrefix(req.URL.Path, "/gone/"):
		w.WriteHeader(http.StatusGone)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

func (r *receiver) URL() string { return r.srv.URL }

func (r *receiver) tlsConfig() *tls.Config {
	return r.srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
}

func (r *receiver) Close() { r.srv.Close() }

// deliverer builds herald's deliver processor exactly as the Lambda does,
// from HERALD_* variables (docs/configuration.md), trusting rcv.
func deliverer(awsCfg aws.Config, rcv *receiver, env map[string]string) (*processor.Processor, error) {
	vars := map[string]string{
		"HERALD_QUEUE_URL":           "https://sqs.us-east-1.amazonaws.com/000000000000/bench",
		"HERALD_DLQ_URL":             "https://sqs.us-east-1.amazonaws.com/000000000000/bench-dlq",
		"HERALD_WEBHOOK_SECRET":      benchSecret,
		"HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
	}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := config.LoadDeliver(func(k string) string { return vars[k] })
	if err != nil {
		return nil, err
	}
	// One JSON line per record, as in the Lambda, but not on the terminal.
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	return app.NewDeliver(cfg, awsCfg, app.DeliverOptions{WebhookTLS: rcv.tlsConfig(), Logger: logger})
}

// webhookBody is one notification to base+path, with a payload of about
// 1 KiB.
func webhookBody(id, url string) string {
	payload, _ := json.Marshal(map[string]string{"invoice_id": "INV-2026-0042", "note": strings.Repeat("x", 900)})
	return fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":%q,"event_type":"invoice.paid","payload":%s}}`, id, url, payload)
}

// webhookEvent is an SQS event of n webhooks to rcv; the first fail
// records go to /fail/ (503).
func webhookEvent(prefix string, n, fail int, base string, receiveCount int) events.SQSEvent {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, n)}
	for i := range ev.Records {
		path := "/ok/"
		if i < fail {
			path = "/fail/"
		}
		id := fmt.Sprintf("%s-%d", prefix, i)
		ev.Records[i] = events.SQSMessage{
			MessageId: id, ReceiptHandle: "rh-" + id, Body: webhookBody(id, base+path+id),
			EventSource: "aws:sqs", AWSRegion: "us-east-1",
			EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:bench",
			Attributes: map[string]string{
				"ApproximateReceiveCount": fmt.Sprint(receiveCount),
				"SentTimestamp":           fmt.Sprint(time.Now().UnixMilli()),
			},
		}
	}
	return ev
}

// timeHandle runs one batch and returns its wall time.
func timeHandle(ctx context.Context, p *processor.Processor, ev events.SQSEvent) (time.Duration, error) {
	t0 := time.Now()
	resp, err := p.Handle(ctx, ev)
	d := time.Since(t0)
	if err != nil {
		return d, err
	}
	if len(resp.BatchItemFailures) > 0 {
		return d, fmt.Errorf("%d of %d records failed", len(resp.BatchItemFailures), len(ev.Records))
	}
	return d, nil
}
