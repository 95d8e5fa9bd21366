package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/eventbridgetest"
	"github.com/heraldhq/herald/internal/webhook"
)

// oneEndpoint serves DynamoDB and EventBridge on one URL, as an account's
// endpoint resolution gives each client its own: both speak the JSON
// protocol, so the X-Amz-Target header names the service.
func oneEndpoint(t *testing.T, dynamoURL, eventsURL string) string {
	t.Helper()
	proxy := func(raw string) *httputil.ReverseProxy {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		return httputil.NewSingleHostReverseProxy(u)
	}
	dyn, eb := proxy(dynamoURL), proxy(eventsURL)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch target := r.Header.Get("X-Amz-Target"); {
		case strings.HasPrefix(target, "DynamoDB_20120810."):
			dyn.ServeHTTP(w, r)
		case strings.HasPrefix(target, "AWSEvents."):
			eb.ServeHTTP(w, r)
		default:
			http.Error(w, "no service for X-Amz-Target "+target, http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDeliverAnnouncesADisabledDestination: with a store (the circuit on by
// default) and HERALD_EVENT_BUS, the deliver function disables an origin
// failing for longer than the disable-after default and publishes
// destination.disabled on the bus.
func TestDeliverAnnouncesADisabledDestination(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	dyn := dynamotest.New(t)
	dyn.AddTable("herald", store.AttrPK, store.AttrSK)
	eb := eventbridgetest.New(t)
	eb.AddBus("ops")
	awsCfg := aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}, BaseEndpoint: aws.String(oneEndpoint(t, dyn.URL(), eb.URL()))}

	// The origin's circuit is open (the default threshold of failures) and
	// it has failed since longer ago than the default disable-after (5
	// days); its last failure is older than the probe interval, so the next
	// record to it is the probe.
	origin, err := webhook.Origin(srv.URL + "/h")
	require.NoError(t, err)
	st, err := store.New(dynamodb.NewFromConfig(awsCfg), store.Config{Table: "herald"})
	require.NoError(t, err)
	now := time.Now()
	_, wrote, err := st.UpdateHealth(context.Background(), store.Health{Origin: origin}, func(h *store.Health) bool {
		h.Failures, h.FailureClass = 10, "webhook_http_5xx"
		h.FailingSince, h.LastFailure = now.Add(-6*24*time.Hour), now.Add(-2*time.Minute)
		return true
	})
	require.NoError(t, err)
	require.True(t, wrote)

	env := map[string]string{
		"HERALD_QUEUE_URL": "http://127.0.0.1:1/000000000000/q", "HERALD_DLQ_URL": "http://127.0.0.1:1/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": secretA, "HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
		"HERALD_STORE_TABLE": "herald", "HERALD_EVENT_BUS": "ops",
	}
	cfg, err := config.LoadDeliver(func(k string) string { return env[k] })
	require.NoError(t, err)
	p, err := app.NewDeliver(cfg, awsCfg, app.DeliverOptions{
		WebhookTLS: srv.Client().Transport.(*http.Transport).TLSClientConfig,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	resp, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: "m-1", ReceiptHandle: "rh-1",
		Body:       `{"version":1,"id":"probe-1","channel":"webhook","webhook":{"url":"` + srv.URL + `/h","event_type":"t","payload":{}}}`,
		Attributes: map[string]string{"ApproximateReceiveCount": "2"},
	}}})
	require.NoError(t, err)
	require.Len(t, resp.BatchItemFailures, 1, "the failed probe is retried")

	h, err := st.Health(context.Background(), origin)
	require.NoError(t, err)
	require.True(t, h.Disabled(), "failing for 6 days: disabled")
	evs := eb.Events()
	require.Len(t, evs, 1)
	require.Equal(t, "ops", evs[0].Bus)
	require.Equal(t, "destination.disabled", evs[0].DetailType)
	require.Equal(t, origin, evs[0].Detail["origin"])
}
