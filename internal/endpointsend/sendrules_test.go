package endpointsend_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// countingTLS is a TLS receiver that counts the connections it accepts.
func countingTLS(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestSendTimeURLRules: the URL rules apply at send time to what the store
// holds, whatever was checked at creation (an item written under older
// rules or by hand, a deployment's allowances changed since): a webhook
// endpoint's URL naming a loopback name, a private or metadata address, or
// plain http, and a chat endpoint's URL on a host that is not its
// service's, are refused for good with their class, no connection is
// made, and the failure recorded for the endpoint quotes no token. A
// receiver's redirect is not followed (the Location's host sees nothing):
// webhook_redirect, retried.
func TestSendTimeURLRules(t *testing.T) {
	t.Parallel()
	const token = "tok-s3cret-91"
	inner, innerConns := countingTLS(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	portS := strings.TrimPrefix(inner.URL, "https://127.0.0.1")

	hook, err := webhook.NewSender(webhook.Config{Secret: deploymentSecret, Timeout: 5e9,
		TLSClientConfig: inner.Client().Transport.(*http.Transport).TLSClientConfig})
	require.NoError(t, err)
	cs, err := chat.NewSender(chat.Config{TLSClientConfig: inner.Client().Transport.(*http.Transport).TLSClientConfig,
		AllowCIDRs: loopback, AllowHosts: []string{"chat.allowed.example"}})
	require.NoError(t, err)

	for _, c := range []struct {
		name  string
		kind  endpoint.Kind
		url   string
		class delivery.Class
	}{
		{"loopback address", endpoint.KindWebhook, inner.URL + "/hook?token=" + token, webhook.ClassBlockedDestination},
		{"loopback name", endpoint.KindWebhook, "https://localhost" + portS + "/hook?token=" + token, webhook.ClassBlockedDestination},
		{"full-width loopback", endpoint.KindWebhook, "https://１２７．０．０．１" + portS + "/hook?token=" + token, webhook.ClassBlockedDestination},
		{"metadata address", endpoint.KindWebhook, "https://169.254.169.254/latest/" + token, webhook.ClassBlockedDestination},
		{"private address", endpoint.KindWebhook, "https://10.1.2.3/hook/" + token, webhook.ClassBlockedDestination},
		{"plain http", endpoint.KindWebhook, "http://hooks.acme.example.com/hook/" + token, webhook.ClassInvalidURL},
		{"slack endpoint on a loopback host", endpoint.KindSlack, inner.URL + "/services/T/B/" + token, "slack_host_not_allowed"},
		{"slack endpoint on discord's host", endpoint.KindSlack, "https://discord.com/api/webhooks/1/" + token, "slack_host_not_allowed"},
		{"discord endpoint on slack's host", endpoint.KindDiscord, "https://hooks.slack.com/services/T/B/" + token, "discord_host_not_allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			reg := &endpoints{}
			fails := &failures{}
			ep := endpoint.Endpoint{ID: ep1, Tenant: "acme", Kind: c.kind, URL: c.url, Headers: map[string]string{"Authorization": "Bearer " + token},
				Secrets: []endpoint.Secret{{Version: 1, Key: key('a')}}}
			if c.kind != endpoint.KindWebhook {
				ep.Headers = nil
			}
			reg.put(ep)
			cfg := endpointsend.Config{Endpoints: reg, Failures: fails}
			var s *endpointsend.Sender
			m := delivery1(ep1)
			if c.kind == endpoint.KindWebhook {
				s = endpointsend.ForWebhook(hook, cfg)
			} else {
				s = endpointsend.ForChat(cs, cfg)
				m = &notification.Message{Version: notification.Version, ID: endpoint.DeliveryID("evt_1", ep1), Channel: notification.ChannelChat,
					Tenant: "acme", EventID: "evt_1", Chat: &notification.Chat{Endpoint: ep1, Text: "invoice.paid for acme"}}
			}
			before := innerConns.Load()
			err := s.Send(t.Context(), m)
			requireClass(t, err, true, c.class)
			require.NotContains(t, err.Error(), token)
			require.Equal(t, before, innerConns.Load(), "no connection")
			ids, fs := fails.all()
			require.Equal(t, []string{ep1}, ids)
			require.Equal(t, string(c.class), fs[0].Class)
			require.NotContains(t, fs[0].Reason, token)
		})
	}

	t.Run("redirect", func(t *testing.T) {
		// The endpoint's receiver (allowed) redirects to another address
		// that the sender would also reach: not followed.
		redirector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, inner.URL+"/internal/"+token, http.StatusTemporaryRedirect)
		}))
		t.Cleanup(redirector.Close)
		allowed, err := webhook.NewSender(webhook.Config{Secret: deploymentSecret, Timeout: 5e9, AllowCIDRs: loopback,
			TLSClientConfig: redirector.Client().Transport.(*http.Transport).TLSClientConfig})
		require.NoError(t, err)
		reg := &endpoints{}
		fails := &failures{}
		reg.put(webhookEndpoint(ep1, redirector.URL+"/hook?token="+token, 'a'))
		s := endpointsend.ForWebhook(allowed, endpointsend.Config{Endpoints: reg, Failures: fails})
		before := innerConns.Load()
		err = s.Send(t.Context(), delivery1(ep1))
		requireClass(t, err, false, webhook.ClassRedirect)
		require.NotContains(t, err.Error(), token)
		require.Equal(t, before, innerConns.Load(), "the Location is not followed")
		_, fs := fails.all()
		require.Len(t, fs, 1)
		require.NotContains(t, fs[0].Reason, token)
	})
}
