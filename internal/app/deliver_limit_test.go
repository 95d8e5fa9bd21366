package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
)

// TestDeliverBoundsRequestsPerDestination: HERALD_WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION
// reaches the webhook sender, whatever the batch's concurrency (the
// default, 100): a batch of 6 to one receiver has at most 2 in flight.
func TestDeliverBoundsRequestsPerDestination(t *testing.T) {
	t.Parallel()

	var mu sync.Mutex
	inFlight, most := 0, 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond) // long enough for the others to arrive if let through
		mu.Lock()
		inFlight--
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)

	env := map[string]string{
		"HERALD_QUEUE_URL": "http://127.0.0.1:1/000000000000/q", "HERALD_DLQ_URL": "http://127.0.0.1:1/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": secretA, "HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
		"HERALD_WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION": "2",
	}
	cfg, err := config.LoadDeliver(func(k string) string { return env[k] })
	require.NoError(t, err)
	p, err := app.NewDeliver(cfg, aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}}, app.DeliverOptions{
		WebhookTLS: srv.Client().Transport.(*http.Transport).TLSClientConfig,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)

	var ev events.SQSEvent
	for i := range 6 {
		id := fmt.Sprintf("n%d", i)
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: "m" + id, ReceiptHandle: "rh" + id,
			Body:       fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":"%s/h","event_type":"t","payload":{}}}`, id, srv.URL),
			Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		})
	}
	resp, err := p.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.LessOrEqual(t, most, 2, "requests in flight to one destination")
}
