// Command floor is the bench's Go floor: the least a Go Lambda can do for
// herald's webhook path, built and run under the emulator like herald's
// bootstrap. Per record of an SQS batch, all records at once: one
// encoding/json decode of the body into a struct, the Standard Webhooks
// envelope and HMAC-SHA256 signature, one POST on a kept-alive TLS
// connection; a failed POST or a non-2xx answer is a batch item failure. No
// validation beyond that, no logging, no destination check: what is left of
// herald's CPU per record above this is the cost of what herald does more.
package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

type notification struct {
	ID      string `json:"id"`
	Webhook struct {
		URL       string          `json:"url"`
		EventType string          `json:"event_type"`
		Payload   json.RawMessage `json:"payload"`
	} `json:"webhook"`
}

func main() {
	handle, err := start(os.Getenv)
	if err != nil {
		panic(err)
	}
	lambda.Start(handle)
}

// handler answers one SQS batch with its partial batch response.
type handler = func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// newClient is the floor's one HTTP client: a request times out after
// 15 s, herald's default webhook timeout (HERALD_WEBHOOK_TIMEOUT_MS 15000),
// so that a slow receiver holds both alike; connections are kept for reuse
// (up to 1,000 per host, idle for 90 s as in net/http's DefaultTransport),
// HTTP/2 when the receiver offers it.
func newClient() *http.Client {
	return &http.Client{
		Timeout: 15 * time.Second,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 1000,
			IdleConnTimeout:     90 * time.Second,
			ForceAttemptHTTP2:   true,
		},
	}
}

// start builds the handler from getenv: the signing key of
// PEER_WEBHOOK_SECRET ("whsec_" and base64, as herald's) and one HTTP
// client kept for every invocation. It fails when the secret is not
// base64.
func start(getenv func(string) string) (handler, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(getenv("PEER_WEBHOOK_SECRET"), "whsec_"))
	if err != nil {
		return nil, fmt.Errorf("PEER_WEBHOOK_SECRET: %w", err)
	}
	client := newClient()
	post := func(ctx context.Context, body string) error {
		var n notification
		if err := json.Unmarshal([]byte(body), &n); err != nil {
			return err
		}
		now := time.Now().Unix()
		env := make([]byte, 0, 64+len(n.Webhook.Payload))
		env = append(env, `{"type":`...)
		env = strconv.AppendQuote(env, n.Webhook.EventType)
		env = append(env, `,"timestamp":"`...)
		env = time.Unix(now, 0).UTC().AppendFormat(env, time.RFC3339)
		env = append(env, `","data":`...)
		env = append(env, n.Webhook.Payload...)
		env = append(env, '}')
		ts := strconv.FormatInt(now, 10)
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(n.ID + "." + ts + "."))
		mac.Write(env)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.Webhook.URL, bytes.NewReader(env))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("webhook-id", n.ID)
		req.Header.Set("webhook-timestamp", ts)
		req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, r := range ev.Records {
			wg.Go(func() {
				if post(ctx, r.Body) != nil {
					mu.Lock()
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return resp, nil
	}, nil
}
