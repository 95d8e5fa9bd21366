package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

func runEnv(extra map[string]string) func(string) string {
	m := map[string]string{
		"HERALD_QUEUE_URL":      "http://127.0.0.1:4566/000000000000/q",
		"HERALD_DLQ_URL":        "http://127.0.0.1:4566/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}
	for k, v := range extra {
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// TestLocalReceiversSwitch: --local-receivers alone lets a webhook reach a
// plain-http receiver on 127.0.0.1 through the same configuration loader and
// sender herald run uses; without it the dead letter's reason names every
// setting needed, and herald run's start line says what is allowed.
func TestLocalReceiversSwitch(t *testing.T) {
	t.Parallel()
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++ }))
	t.Cleanup(srv.Close)
	msg := &notification.Message{Version: 1, ID: "local-1", Channel: notification.ChannelWebhook,
		Webhook: &notification.Webhook{URL: srv.URL + "/hook", EventType: "t.x", Payload: []byte(`{}`)}}
	send := func(getenv func(string) string) (config.Deliver, error) {
		cfg, err := config.LoadDeliver(getenv)
		require.NoError(t, err)
		s, err := webhook.NewSender(webhook.Config{Secret: cfg.WebhookSecret, AllowCIDRs: cfg.WebhookAllowCIDRs, AllowHTTP: cfg.WebhookAllowHTTP})
		require.NoError(t, err)
		return cfg, s.Send(context.Background(), msg)
	}

	cfg, err := send(runEnv(nil))
	_, class, _ := delivery.Classify(err)
	require.Equal(t, webhook.ClassInvalidURL, class)
	for _, setting := range []string{"HERALD_WEBHOOK_ALLOW_HTTP=true", "HERALD_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,::1/128", "--local-receivers"} {
		require.Contains(t, err.Error(), setting)
	}
	require.Equal(t, "https only; private, loopback and other special-purpose addresses blocked (docs/security.md); "+
		"--local-receivers allows receivers on this machine", webhookPolicy(cfg))

	// Plain http alone: the loopback address is blocked, and the reason says what else is needed.
	_, err = send(runEnv(map[string]string{"HERALD_WEBHOOK_ALLOW_HTTP": "true"}))
	_, class, _ = delivery.Classify(err)
	require.Equal(t, webhook.ClassBlockedDestination, class)
	for _, setting := range []string{"HERALD_WEBHOOK_ALLOW_HTTP=true", "HERALD_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,::1/128", "--local-receivers"} {
		require.Contains(t, err.Error(), setting)
	}
	require.Zero(t, hits, "nothing sent without the switch")

	// The switch adds to the operator's own networks.
	cfg, err = send(withLocalReceivers(runEnv(map[string]string{"HERALD_WEBHOOK_ALLOW_CIDRS": "10.20.0.0/16"})))
	require.NoError(t, err)
	require.Equal(t, 1, hits)
	require.True(t, cfg.WebhookAllowHTTP)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("10.20.0.0/16")},
		cfg.WebhookAllowCIDRs)
	require.Equal(t, "https and plain http; private, loopback and other special-purpose addresses blocked (docs/security.md) "+
		"but for 127.0.0.0/8, ::1/128, 10.20.0.0/16 (HERALD_WEBHOOK_ALLOW_CIDRS); receivers on this machine allowed (http://127.0.0.1:PORT/...)",
		webhookPolicy(cfg))
}

// TestWebhookPolicyNeedsBothLoopbackNetworks: receivers on this machine are
// reported allowed only with plain http and all of 127.0.0.0/8 and ::1.
func TestWebhookPolicyNeedsBothLoopbackNetworks(t *testing.T) {
	t.Parallel()
	p := netip.MustParsePrefix
	for _, tt := range []struct {
		http  bool
		allow []netip.Prefix
		want  bool
	}{
		{true, []netip.Prefix{p("127.0.0.0/8"), p("::1/128")}, true},
		{true, []netip.Prefix{p("0.0.0.0/0"), p("::/0")}, true},
		{false, []netip.Prefix{p("127.0.0.0/8"), p("::1/128")}, false},
		{true, []netip.Prefix{p("127.0.0.1/32"), p("::1/128")}, false},
		{true, []netip.Prefix{p("127.0.0.0/8")}, false},
		{true, nil, false},
	} {
		policy := webhookPolicy(config.Deliver{WebhookAllowHTTP: tt.http, WebhookAllowCIDRs: tt.allow})
		require.Equal(t, tt.want, strings.Contains(policy, "receivers on this machine allowed"), "%v %v: %s", tt.http, tt.allow, policy)
		require.Equal(t, !tt.want, strings.Contains(policy, "--local-receivers allows"), "%v %v: %s", tt.http, tt.allow, policy)
	}
}

// --local-receivers lets chat webhooks name this machine too, beside the
// operator's own chat hosts.
func TestLocalReceiversAllowChatHosts(t *testing.T) {
	t.Parallel()
	cfg, err := config.LoadDeliver(withLocalReceivers(runEnv(map[string]string{"HERALD_CHAT_ALLOW_HOSTS": "chat-proxy.example.com"})))
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1", "::1", "chat-proxy.example.com"}, cfg.ChatAllowHosts)
	cfg, err = config.LoadDeliver(runEnv(nil))
	require.NoError(t, err)
	require.Empty(t, cfg.ChatAllowHosts)
}
