package webhook_test

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// The Standard Webhooks reference secret (a 24-byte key).
const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// testNow has nanoseconds and a zone to show that both are dropped.
var testNow = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

// newServer starts an httptest TLS server counting the requests it gets.
// Its handshake errors are not logged: some tests make them on purpose.
func newServer(t testing.TB, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	hits := new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, hits
}

// loopback is the network of the tests' servers (httptest listens on
// 127.0.0.1), which the destination check blocks unless allowed.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// newSender returns a Sender trusting srv (when not nil), at testNow, that
// may reach 127.0.0.1.
func newSender(t *testing.T, srv *httptest.Server, modify ...func(*webhook.Config)) *webhook.Sender {
	t.Helper()
	cfg := webhook.Config{
		Secret:     testSecret,
		Timeout:    5 * time.Second,
		Now:        func() time.Time { return testNow },
		AllowCIDRs: loopback,
	}
	if srv != nil {
		cfg.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	}
	for _, m := range modify {
		m(&cfg)
	}
	s, err := webhook.NewSender(cfg)
	require.NoError(t, err)
	return s
}

// shared signs with the configured secrets themselves, for the tests of
// the signature format (TestSendVector); per-destination keys have their
// own tests.
func shared(c *webhook.Config) { c.SecretScope = webhook.ScopeShared }

type bundle struct {
	srv    *httptest.Server
	hits   *atomic.Int64
	sender *webhook.Sender
}

// setup starts a server with handler h and a Sender trusting it.
func setup(t *testing.T, h http.HandlerFunc, modify ...func(*webhook.Config)) *bundle {
	t.Helper()
	srv, hits := newServer(t, h)
	return &bundle{srv: srv, hits: hits, sender: newSender(t, srv, modify...)}
}

func message(url string) *notification.Message {
	return &notification.Message{
		Version: notification.Version,
		ID:      "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W",
		Channel: notification.ChannelWebhook,
		Webhook: &notification.Webhook{
			URL:       url,
			EventType: "invoice.paid",
			Payload:   json.RawMessage(`{"invoice": "in_1", "amounts": [1, 2]}`),
		},
	}
}

// hang answers nothing until the client goes away (or 10 s pass, lest a
// bug hang the test). The server notices only once the body is read.
//
// It then aborts rather than answering: net/http's client uses a response
// that races its own cancellation (the TLS close_notify it sends first lets
// the server answer before the socket closes), and a 200 there would make
// the test flaky.
func hang(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
		panic(http.ErrAbortHandler)
	case <-time.After(10 * time.Second):
	}
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// requireOutcome checks that err is a delivery error of the given kind and
// class, and returns its RetryAfter.
func requireOutcome(t *testing.T, err error, permanent bool, class delivery.Class) time.Duration {
	t.Helper()
	require.Error(t, err)
	gotPermanent, gotClass, retryAfter := delivery.Classify(err)
	require.Equal(t, class, gotClass, "error: %v", err)
	require.Equal(t, permanent, gotPermanent, "error: %v", err)
	if permanent {
		var p *delivery.PermanentError
		require.ErrorAs(t, err, &p)
	} else {
		var tr *delivery.TransientError
		require.ErrorAs(t, err, &tr)
	}
	return retryAfter
}

// receivedBy returns what a test receiver's handler put on ch before it
// answered: once Send has returned it is there, unless the request never
// reached the receiver. It never blocks, so a broken Send fails the test
// at once instead of hanging it.
func receivedBy[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	default:
		t.Fatal("the request never reached the receiver")
		panic("unreachable")
	}
}
