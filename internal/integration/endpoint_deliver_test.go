//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// endpointReceiver is a TLS receiver that records each request's headers
// and body and answers code.
type endpointReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []http.Header
	body [][]byte
	code int
}

func newEndpointReceiver(t *testing.T) *endpointReceiver {
	t.Helper()
	r := &endpointReceiver{code: http.StatusNoContent}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.body = append(r.got, req.Header.Clone()), append(r.body, b)
		code := r.code
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// last is the newest request; verifiedBy reports, per secret, whether the
// Standard Webhooks reference library holding it accepts that request.
func (r *endpointReceiver) verifiedBy(t *testing.T, secrets ...endpoint.Secret) []bool {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.got)
	h, b := r.got[len(r.got)-1], r.body[len(r.body)-1]
	out := make([]bool, len(secrets))
	for i, s := range secrets {
		ref, err := standardwebhooks.NewWebhook(s.String())
		require.NoError(t, err)
		out[i] = ref.Verify(b, h) == nil
	}
	return out
}

func (r *endpointReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// TestEndpointDelivery: the deliver function's endpoint middleware over
// the real endpoint store (the local stack's DynamoDB and KMS; secrets
// sealed and unsealed): a delivery reaches the endpoint's URL signed with
// the secret the store made at creation; after a rotation with a grace
// period both secrets sign, after one without only the new; a failed
// attempt is one of the endpoint's failures; a disabled endpoint and a
// deleted one are refused with their classes, nothing sent.
func TestEndpointDelivery(t *testing.T) {
	s := newEndpointStore(t)
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	tbl, err := endpoint.NewTable(endpoint.TableConfig{Table: s.table, KeyID: readEnvKeyID(t), DB: s.db, KMS: s.kms,
		URLRules: endpoint.URLRules{AllowCIDRs: loopback}})
	require.NoError(t, err)
	st, err := store.New(s.db, store.Config{Table: s.table})
	require.NoError(t, err)
	recv := newEndpointReceiver(t)
	hook, err := webhook.NewSender(webhook.Config{
		Secret: webhook.NewSecret(), Timeout: 10 * time.Second, AllowCIDRs: loopback,
		TLSClientConfig: recv.srv.Client().Transport.(*http.Transport).TLSClientConfig,
	})
	require.NoError(t, err)
	// No cache between the steps: each reads what the store holds now
	// (the deliver function's Cache lags by at most its TTL).
	sender := endpointsend.ForWebhook(hook, endpointsend.Config{Endpoints: tbl, Failures: tbl, Pace: st})

	ep, err := tbl.Create(s.ctx, endpoint.Endpoint{Tenant: "acme", Kind: endpoint.KindWebhook, URL: recv.srv.URL + "/hooks/acme",
		Headers: map[string]string{"X-Acme-Route": "billing"}, RateLimit: 50})
	require.NoError(t, err)
	require.Len(t, ep.Secrets, 1)
	first := ep.Secrets[0]
	deliver := func() error {
		m := &notification.Message{Version: notification.Version, ID: endpoint.DeliveryID("evt_1", ep.ID), Channel: notification.ChannelWebhook,
			Tenant: "acme", EventID: "evt_1",
			Webhook: &notification.Webhook{Endpoint: ep.ID, EventType: "invoice.paid", Payload: json.RawMessage(`{"invoice":"in_1"}`)}}
		ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
		defer cancel()
		return sender.Send(delivery.WithAttempt(ctx, 3), m)
	}

	require.NoError(t, deliver())
	require.Equal(t, []bool{true}, recv.verifiedBy(t, first))

	_, second, err := tbl.RotateSecret(s.ctx, ep.ID, time.Hour)
	require.NoError(t, err)
	require.NoError(t, deliver())
	require.Equal(t, []bool{true, true}, recv.verifiedBy(t, second, first), "in the grace period both sign")

	_, third, err := tbl.RotateSecret(s.ctx, ep.ID, 0)
	require.NoError(t, err)
	require.NoError(t, deliver())
	require.Equal(t, []bool{true, false, false}, recv.verifiedBy(t, third, second, first), "a rotation without grace: only the new signs")

	recv.mu.Lock()
	recv.code = http.StatusBadGateway
	recv.mu.Unlock()
	err = deliver()
	_, class, _ := delivery.Classify(err)
	require.Equal(t, webhook.ClassHTTP5xx, class)
	fs, err := tbl.Failures(s.ctx, ep.ID, 10)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	require.Equal(t, string(webhook.ClassHTTP5xx), fs[0].Class)
	require.Equal(t, 3, fs[0].Attempt)
	require.Equal(t, "evt_1", fs[0].EventID)
	require.NotContains(t, fs[0].Reason, "/hooks/acme")

	sent := recv.count()
	_, err = tbl.SetDisabled(s.ctx, ep.ID, &endpoint.Disabled{Reason: "customer asked", At: time.Now(), By: "operator"})
	require.NoError(t, err)
	permanent, class, _ := delivery.Classify(deliver())
	require.True(t, permanent)
	require.Equal(t, endpointsend.ClassDisabled, class)

	require.NoError(t, tbl.Delete(s.ctx, ep.ID, 0))
	permanent, class, _ = delivery.Classify(deliver())
	require.True(t, permanent)
	require.Equal(t, endpointsend.ClassNotFound, class)
	require.Equal(t, sent, recv.count(), "nothing sent to a disabled or deleted endpoint")
}

// readEnvKeyID is the local stack's endpoint key (provision.py).
func readEnvKeyID(t *testing.T) string {
	t.Helper()
	id := readEnvFile(t, filepath.Join(repoRoot, localenv.EnvFile))["HERALD_ENDPOINT_KEY_ID"]
	require.NotEmpty(t, id)
	return id
}
