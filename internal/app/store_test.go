package app_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
)

// TestDeliverWithAStoreSendsACopyOnce: with HERALD_STORE_TABLE the deliver
// function remembers what it delivered on the channels of
// HERALD_DELIVERED_ONCE_CHANNELS, so a copy SQS hands over again is not
// sent again, and keeps the destination's health for the circuit. By
// default webhooks are not among them: the copy is sent (its receiver
// deduplicates on webhook-id) and no delivery item is written.
func TestDeliverWithAStoreSendsACopyOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		channels string
		posts    int32
		kinds    map[string]bool
	}{
		{"", 2, map[string]bool{"origin_health": true}},
		{"email,chat", 2, map[string]bool{"origin_health": true}},
		{"webhook", 1, map[string]bool{"delivery": true, "delivery_batch": true, "origin_health": true}},
		{" Email , WEBHOOK ", 1, map[string]bool{"delivery": true, "delivery_batch": true, "origin_health": true}},
	} {
		var posts atomic.Int32
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			posts.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(srv.Close)
		dyn := dynamotest.New(t)
		dyn.AddTable("herald", store.AttrPK, store.AttrSK)

		env := map[string]string{
			"HERALD_QUEUE_URL": "http://127.0.0.1:1/000000000000/q", "HERALD_DLQ_URL": "http://127.0.0.1:1/000000000000/dlq",
			"HERALD_WEBHOOK_SECRET": secretA, "HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
			"HERALD_STORE_TABLE": "herald", "HERALD_DELIVERED_ONCE_CHANNELS": tc.channels,
		}
		cfg, err := config.LoadDeliver(func(k string) string { return env[k] })
		require.NoError(t, err)
		p, err := app.NewDeliver(cfg, aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}, BaseEndpoint: aws.String(dyn.URL())}, app.DeliverOptions{
			WebhookTLS: srv.Client().Transport.(*http.Transport).TLSClientConfig,
			Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		require.NoError(t, err)

		for i, rh := range []string{"rh-1", "rh-2"} {
			resp, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{
				MessageId: "m-1", ReceiptHandle: rh,
				Body:       `{"version":1,"id":"once-1","channel":"webhook","webhook":{"url":"` + srv.URL + `/h","event_type":"t","payload":{}}}`,
				Attributes: map[string]string{"ApproximateReceiveCount": "1"},
			}}})
			require.NoError(t, err)
			require.Empty(t, resp.BatchItemFailures, "copy %d", i+1)
		}
		require.Equal(t, tc.posts, posts.Load(), "channels %q", tc.channels)
		kinds := map[string]bool{}
		for _, item := range dyn.Items("herald") {
			kinds[item["type"].(map[string]any)["S"].(string)] = true
		}
		require.Equal(t, tc.kinds, kinds, "channels %q: the delivered-once lease and its batch's confirm when webhooks are delivered once; the destination's health (the circuit, on by default with a store) always", tc.channels)
	}
}

// TestDeliverLogsToTheGivenLogger: DeliverOptions.Logger takes the
// processor's log lines (a failed delivery's among them).
func TestDeliverLogsToTheGivenLogger(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{
		"HERALD_QUEUE_URL": "http://127.0.0.1:1/000000000000/q", "HERALD_DLQ_URL": "http://127.0.0.1:1/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": secretA, "HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
	}
	cfg, err := config.LoadDeliver(func(k string) string { return env[k] })
	require.NoError(t, err)
	var logs localenv.SyncBuffer
	p, err := app.NewDeliver(cfg, aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}}, app.DeliverOptions{
		WebhookTLS: srv.Client().Transport.(*http.Transport).TLSClientConfig,
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
	})
	require.NoError(t, err)
	_, _ = p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: "m-2", ReceiptHandle: "rh-2",
		Body:       `{"version":1,"id":"logged-2","channel":"webhook","webhook":{"url":"` + srv.URL + `/h","event_type":"t","payload":{}}}`,
		Attributes: map[string]string{"ApproximateReceiveCount": "1"},
	}}})
	require.Contains(t, logs.String(), "logged-2")
}

// TestDeliverCircuitBeforeDeliveredOnce: the circuit is the outer
// middleware, so a record its destination's open circuit holds back takes
// no delivered-once lease: of two notifications to an origin answering
// 503 (threshold 1), the first takes a lease and gives it up after its
// failure, the second is held back (destination_circuit_open) without
// one.
func TestDeliverCircuitBeforeDeliveredOnce(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		posts.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	dyn := dynamotest.New(t)
	dyn.AddTable("herald", store.AttrPK, store.AttrSK)
	env := map[string]string{
		"HERALD_QUEUE_URL": "http://127.0.0.1:1/000000000000/q", "HERALD_DLQ_URL": "http://127.0.0.1:1/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": secretA, "HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
		"HERALD_STORE_TABLE": "herald", "HERALD_DELIVERED_ONCE_CHANNELS": "webhook", "HERALD_CIRCUIT_THRESHOLD": "1",
	}
	cfg, err := config.LoadDeliver(func(k string) string { return env[k] })
	require.NoError(t, err)
	var logs bytes.Buffer // slog's handler serializes its writes
	p, err := app.NewDeliver(cfg, aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}, BaseEndpoint: aws.String(dyn.URL())}, app.DeliverOptions{
		WebhookTLS: srv.Client().Transport.(*http.Transport).TLSClientConfig,
		Logger:     slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	require.NoError(t, err)
	for _, id := range []string{"first", "second"} {
		resp, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{
			MessageId: "m-" + id, ReceiptHandle: "rh-" + id,
			Body:       `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + srv.URL + `/h","event_type":"t","payload":{}}}`,
			Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		}}})
		require.NoError(t, err)
		require.Len(t, resp.BatchItemFailures, 1, id)
	}
	require.Equal(t, int32(1), posts.Load(), "the second is held back")
	require.Equal(t, 1, dyn.Calls("DeleteItem"), "one lease taken and given up: the first's")
	require.Contains(t, logs.String(), `"error_class":"destination_circuit_open"`)
}
