package main

import (
	"context"
	"crypto/hmac"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/webhook"
)

// scale shrinks sections 2–4 so that a unit test runs each against
// local fakes in a fraction of a second; a zero field keeps `make bench`'s
// figure.
type scale struct {
	// fanDelay is how long the fan-out receiver takes to answer. Defaults
	// to fanDelay (100 ms).
	fanDelay time.Duration
	// large is the large batch of sections 2 and 3, in records. Defaults
	// to 100.
	large int
	// storeTable names the store's DynamoDB table. Defaults to the local
	// stack's (needStoreTable).
	storeTable string
	// latN is how many notifications a paced stream of section 4 times.
	// Defaults to latSample.
	latN int
	// events is the larger tenant of the events section, in endpoints;
	// endpointKey the endpoint store's KMS key. Default to 100 and 1,000,
	// and the local stack's key (HERALD_ENDPOINT_KEY_ID).
	events      int
	endpointKey string
}

// stdout is where sections 2–4 print.
func (o opts) stdout() io.Writer {
	if o.out == nil {
		return os.Stdout
	}
	return o.out
}

// receiverDelay is the fan-out receiver's delay.
func (o opts) receiverDelay() time.Duration {
	if o.small.fanDelay > 0 {
		return o.small.fanDelay
	}
	return fanDelay
}

// largeBatch is the large batch of sections 2 and 3, in records.
func (o opts) largeBatch() int {
	if o.small.large > 0 {
		return o.small.large
	}
	return 100
}

// sectionStoreTable is the store's table the sections use: a test's, or
// needStoreTable's.
func (o opts) sectionStoreTable() (string, error) {
	if o.small.storeTable != "" {
		return o.small.storeTable, nil
	}
	return needStoreTable()
}

// benchSecret signs the bench's webhooks (a throwaway key).
const benchSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// receiver is a local HTTPS webhook receiver that answers every request
// after a fixed delay: 401 when the Standard Webhooks signature verifies
// neither with benchSecret (the peers' shared key) nor with herald's key for
// the receiver's origin (webhook.DeriveSecret, herald's default scope), 503 for paths under /fail/, 410 under /gone/,
// else 200. It records when each webhook-id arrived, and counts requests,
// bad signatures and new (TLS) connections.
type receiver struct {
	srv    *httptest.Server
	keys   [][]byte // benchKey and the key derived for srv's origin
	delay  time.Duration
	count  atomic.Int64
	badSig atomic.Int64
	conns  atomic.Int64

	mu      sync.Mutex
	arrived map[string]time.Time
	onHit   func(id string, at time.Time)
}

// newReceiver starts an HTTP/1.1 receiver (every peer speaks HTTP/1.1).
func newReceiver(delay time.Duration) *receiver { return startReceiver(delay, false) }

// startReceiver starts a receiver, offering HTTP/2 in ALPN when h2 is set.
func startReceiver(delay time.Duration, h2 bool) *receiver {
	r := &receiver{delay: delay, arrived: map[string]time.Time{}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.EnableHTTP2 = h2
	r.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
	r.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	r.srv.StartTLS()
	derived, err := webhook.DeriveSecret(benchSecret, r.srv.URL)
	if err != nil {
		panic(err)
	}
	dk, err := webhook.DecodeSecret(derived)
	if err != nil {
		panic(err)
	}
	r.keys = [][]byte{benchKey, dk}
	return r
}

// benchKey is benchSecret decoded.
var benchKey = func() []byte {
	k, err := webhook.DecodeSecret(benchSecret)
	if err != nil {
		panic(err)
	}
	return k
}()

// verified reports whether one of the request's webhook-signature values
// is the Standard Webhooks signature of its id, timestamp and body under
// one of keys.
func verified(keys [][]byte, h http.Header, body []byte) bool {
	ts, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		return false
	}
	for _, key := range keys {
		want := webhook.Sign(key, h.Get("webhook-id"), time.Unix(ts, 0), body)
		for _, sig := range strings.Fields(h.Get("webhook-signature")) {
			if hmac.Equal([]byte(sig), []byte(want)) {
				return true
			}
		}
	}
	return false
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if !verified(r.keys, req.Header, body) {
		r.badSig.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
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
	logger := app.LoggerTo(io.Discard, slog.LevelInfo)
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
