package receiver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/docs/examples/receiver"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// captured is one request herald made to an endpoint.
type captured struct {
	header http.Header
	body   []byte
}

// register is a register of endpoints as the deliver function's cache
// returns them, with their secrets' keys.
type register map[string]endpoint.Endpoint

func (r register) Get(_ context.Context, id string) (endpoint.Endpoint, error) {
	if ep, ok := r[id]; ok {
		return ep, nil
	}
	return endpoint.Endpoint{}, endpoint.ErrNotFound
}

// heraldRequest delivers the fan-out's delivery of an invoice.paid event to
// a webhook endpoint holding secrets (the current one first) through the
// deliver function's sender (endpointsend over the webhook sender), and
// returns the request the endpoint got, on the real clock.
func heraldRequest(t *testing.T, secrets ...endpoint.Secret) captured {
	t.Helper()
	var mu sync.Mutex
	var got []captured
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, captured{header: r.Header.Clone(), body: b})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	next, err := webhook.NewSender(webhook.Config{
		Secret:          "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // the deployment's; never signs an endpoint's
		Timeout:         5 * time.Second,
		AllowCIDRs:      []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig,
	})
	require.NoError(t, err)
	ep := endpoint.Endpoint{
		ID: endpoint.NewID(), Tenant: "acme", Kind: endpoint.KindWebhook, URL: srv.URL + "/hooks/herald",
		EventTypes: []string{"invoice.*"}, Headers: map[string]string{"X-Acme-Route": "billing"}, Secrets: secrets,
	}
	s := endpointsend.ForWebhook(next, endpointsend.Config{Endpoints: register{ep.ID: ep}})
	err = s.Send(context.Background(), &notification.Message{
		Version: notification.Version, ID: endpoint.DeliveryID("evt_01jh7q3", ep.ID), Channel: notification.ChannelWebhook,
		Tenant: "acme", EventID: "evt_01jh7q3",
		Webhook: &notification.Webhook{Endpoint: ep.ID, EventType: "invoice.paid", Payload: json.RawMessage(`{"invoice_id":"INV-2026-0042","amount":4200}`)},
	})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1)
	require.Equal(t, endpoint.DeliveryID("evt_01jh7q3", ep.ID), got[0].header.Get("webhook-id"))
	return got[0]
}

func secret(t *testing.T, version int, until time.Time) endpoint.Secret {
	t.Helper()
	s := endpoint.NewSecret(time.Now().Add(-time.Hour))
	s.Version, s.Until = version, until
	return s
}

// verifiers are the guide's receivers: each verifies the request with the
// secret and returns the event's type and payload, or an error. The Python
// and JavaScript ones (receiver_lang_test.go, build tag integration: they
// run the reference libraries that make test-integration installs) join
// the Go one there.
var verifiers = map[string]func(t *testing.T, secret string, req captured) (string, json.RawMessage, error){
	"go": func(t *testing.T, secret string, req captured) (string, json.RawMessage, error) {
		var got *receiver.Event
		h, err := receiver.Handler(secret, func(id string, e receiver.Event) error {
			require.Equal(t, req.header.Get("webhook-id"), id)
			got = &e
			return nil
		})
		require.NoError(t, err)
		r := httptest.NewRequest(http.MethodPost, "/hooks/herald", bytes.NewReader(req.body))
		r.Header = req.header.Clone()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusNoContent {
			return "", nil, errors.New(w.Body.String())
		}
		return got.Type, got.Data, nil
	},
}

// TestGuideReceiversVerifyHerald: each receiver of the guide (Go, Python,
// JavaScript, each over its Standard Webhooks reference library) accepts a
// request herald made to an endpoint with that endpoint's secret and reads
// the event's type and payload from it; it refuses the request with another
// endpoint's secret, with the deployment's secret, and with a changed body.
func TestGuideReceiversVerifyHerald(t *testing.T) {
	t.Parallel()
	cur := secret(t, 1, time.Time{})
	req := heraldRequest(t, cur)
	require.Equal(t, "invoice.paid", req.header.Get("herald-event-type"))
	require.Equal(t, "billing", req.header.Get("X-Acme-Route"), "the endpoint's custom header")
	other := secret(t, 1, time.Time{})
	tampered := req
	tampered.body = bytes.Replace(req.body, []byte("4200"), []byte("4201"), 1)
	for lang, verify := range verifiers {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			typ, data, err := verify(t, cur.String(), req)
			require.NoError(t, err)
			require.Equal(t, "invoice.paid", typ)
			require.JSONEq(t, `{"invoice_id":"INV-2026-0042","amount":4200}`, string(data))
			for name, bad := range map[string]struct {
				secret string
				req    captured
			}{
				"another endpoint's secret": {other.String(), req},
				"the deployment's secret":   {"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", req},
				"a changed body":            {cur.String(), tampered},
			} {
				_, _, err := verify(t, bad.secret, bad.req)
				require.Error(t, err, name)
			}
		})
	}
}

// TestGuideReceiversDuringRotation: during a rotation's grace period the
// request carries a signature per secret, so a receiver holding the old
// secret and one holding the new one both accept it; after the grace period
// only the new one does.
func TestGuideReceiversDuringRotation(t *testing.T) {
	t.Parallel()
	newer, older := secret(t, 2, time.Time{}), secret(t, 1, time.Now().Add(24*time.Hour))
	during := heraldRequest(t, newer, older)
	require.Len(t, strings.Fields(during.header.Get("webhook-signature")), 2)
	expired := older
	expired.Until = time.Now().Add(-time.Minute)
	after := heraldRequest(t, newer, expired)
	require.Len(t, strings.Fields(after.header.Get("webhook-signature")), 1)
	for lang, verify := range verifiers {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			for _, s := range []endpoint.Secret{newer, older} {
				_, _, err := verify(t, s.String(), during)
				require.NoError(t, err, "version %d during the grace period", s.Version)
			}
			_, _, err := verify(t, newer.String(), after)
			require.NoError(t, err)
			_, _, err = verify(t, older.String(), after)
			require.Error(t, err, "the old secret after the grace period")
		})
	}
}
