package chat_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/notification"
)

// TestNewSenderTimeoutRange: the attempt timeout's ends are outbound's,
// as webhook's are.
func TestNewSenderTimeoutRange(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{outbound.MinTimeout, outbound.MaxTimeout} {
		_, err := chat.NewSender(chat.Config{Timeout: d})
		require.NoError(t, err, "%v", d)
	}
	for _, d := range []time.Duration{-time.Second, outbound.MinTimeout - time.Nanosecond, outbound.MaxTimeout + time.Nanosecond} {
		_, err := chat.NewSender(chat.Config{Timeout: d})
		require.ErrorContains(t, err, "chat timeout", "%v", d)
	}
}

// TestAnswersAtTheEdges: every 2xx is delivered, 299 included; an error
// text gives the status with its text when it has one, and a Teams 200
// that reports a failure as both; a legacy Teams 200 reporting HTTP 400
// is that 400.
func TestAnswersAtTheEdges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	hook := func(token string) string { return b.slack.URL() + "/services/T9/B9/" + token }
	b.slack.Answer("x2997Q", 299, "")
	b.slack.Answer("x4047Q", http.StatusNotFound, "channel_not_found")
	b.slack.Answer("x5997Q", 599, "")
	b.teams.Answer("webhookb2/legacy/bad", http.StatusOK, "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 400 with ContextId tcid=0")

	require.NoError(t, b.sender.Send(ctx, message(t, "e-299", notification.Chat{Service: "slack", URL: hook("x2997Q"), Text: "x"})))

	err := b.sender.Send(ctx, message(t, "e-404", notification.Chat{Service: "slack", URL: hook("x4047Q"), Text: "x"}))
	require.ErrorContains(t, err, ": HTTP 404 Not Found; body: channel_not_found")

	err = b.sender.Send(ctx, message(t, "e-599", notification.Chat{Service: "slack", URL: hook("x5997Q"), Text: "x"}))
	_, class, _ := delivery.Classify(err)
	require.Equal(t, delivery.Class("slack_http_5xx"), class)
	require.ErrorContains(t, err, ": HTTP 599") // no status text to add
	require.NotContains(t, err.Error(), "reporting")

	err = b.sender.Send(ctx, message(t, "e-t400", notification.Chat{Service: "teams", URL: b.teams.URL() + "/webhookb2/legacy/bad", Text: "x"}))
	permanent, class, _ := delivery.Classify(err)
	require.True(t, permanent, "%v", err)
	require.Equal(t, delivery.Class("teams_bad_request"), class, "%v", err)
	require.ErrorContains(t, err, ": HTTP 200 reporting HTTP 400;")
}

// TestErrorTextsHoldNoCredential: a service's answer that quotes the
// webhook's path has it scrubbed, and a failed connection's text is not
// net/http's, which quotes the whole URL.
func TestErrorTextsHoldNoCredential(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.slack.URL() + "/services/T0ECHO1/B0ECHO2/xEchoTok7Q"
	b.slack.Answer("xEchoTok7Q", http.StatusNotFound, "no webhook at /services/T0ECHO1/B0ECHO2/xEchoTok7Q")
	err := b.sender.Send(ctx, message(t, "echo", notification.Chat{Service: "slack", URL: u, Text: "x"}))
	require.Error(t, err)
	requireNoSecret(t, err, u)
	require.ErrorContains(t, err, "no webhook at /services[redacted]")

	closed := "https://127.0.0.1:1/services/T0ECHO1/B0ECHO2/xClosed7Q"
	err = b.sender.Send(ctx, message(t, "closed", notification.Chat{Service: "slack", URL: closed, Text: "x"}))
	_, class, _ := delivery.Classify(err)
	require.Equal(t, delivery.Class("slack_connection"), class, "%v", err)
	require.NotContains(t, err.Error(), `Post "`)
	requireNoSecret(t, err, closed)
}

// TestAllowHostSuffixNeedsAName: ".example.com" allows the names under
// example.com, not a host spelled ".example.com".
func TestAllowHostSuffixNeedsAName(t *testing.T) {
	t.Parallel()
	s, err := chat.NewSender(chat.Config{AllowHosts: []string{".example.com"}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing may be sent
	_, class, _ := delivery.Classify(s.Send(ctx, message(t, "h", notification.Chat{Service: "slack", URL: "https://proxy.example.com/services/T/B/s", Text: "x"})))
	require.Equal(t, delivery.ClassDeadline, class, "a name under the suffix passes")
	for _, u := range []string{"https://.example.com/services/T/B/s", "https://example.com/services/T/B/s"} {
		_, class, _ := delivery.Classify(s.Send(ctx, &notification.Message{Version: 1, ID: "h", Channel: notification.ChannelChat,
			Chat: &notification.Chat{Service: "slack", URL: u, Text: "x"}}))
		require.Equal(t, delivery.Class("slack_host_not_allowed"), class, u)
	}
}

// TestTeamsBodyOfExactlyTheLimit: a Teams request body of exactly
// notification.MaxTeamsMessageBytes is sent; a byte more is not.
func TestTeamsBodyOfExactlyTheLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	small, err := chat.TeamsBody(&notification.Chat{Service: "teams", Text: "a"})
	require.NoError(t, err)
	text := strings.Repeat("a", notification.MaxTeamsMessageBytes-(len(small)-1))
	full, err := chat.TeamsBody(&notification.Chat{Service: "teams", Text: text})
	require.NoError(t, err)
	require.Len(t, full, notification.MaxTeamsMessageBytes)

	u := b.teams.URL() + b.teams.Create("wf-edge", "s")
	require.NoError(t, b.sender.Send(context.Background(), message(t, "edge", notification.Chat{Service: "teams", URL: u, Text: text})))
	err = b.sender.Send(context.Background(), message(t, "edge-1", notification.Chat{Service: "teams", URL: u, Text: text + "a"}))
	_, class, _ := delivery.Classify(err)
	require.Equal(t, delivery.ClassInvalidMessage, class, "%v", err)
	require.Len(t, b.teams.Received(), 1)
}

// TestAttemptTimeoutIsNamed: a receiver that does not answer within the
// attempt timeout is a transient <service>_timeout naming that timeout.
func TestAttemptTimeoutIsNamed(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-done }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes the timeout cuts
	srv.StartTLS()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })
	s, err := chat.NewSender(chat.Config{Timeout: outbound.MinTimeout, TLSClientConfig: &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs},
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, AllowHosts: []string{"127.0.0.1"}})
	require.NoError(t, err)
	err = s.Send(context.Background(), message(t, "slow", notification.Chat{Service: "slack", URL: srv.URL + "/services/T/B/xSlow7Q", Text: "x"}))
	permanent, class, _ := delivery.Classify(err)
	require.False(t, permanent)
	require.Equal(t, delivery.Class("slack_timeout"), class, "%v", err)
	require.ErrorContains(t, err, "timed out (attempt timeout 1ms)")
}

// TestDefaultHosts: each service's own hosts, as a copy; none for an
// unknown service.
func TestDefaultHosts(t *testing.T) {
	t.Parallel()
	hosts := chat.DefaultHosts("slack")
	require.Equal(t, []string{"hooks.slack.com"}, hosts)
	hosts[0] = "evil.example"
	require.Equal(t, []string{"hooks.slack.com"}, chat.DefaultHosts("slack"), "a copy")
	require.Contains(t, chat.DefaultHosts("discord"), "discord.com")
	require.Nil(t, chat.DefaultHosts("irc"))
}

// TestStatusClassesAtTheirEnds: the status ranges classify answers no
// service names a reason for at both ends of each: 300 and 399 are
// redirects (retried: the URL may be fixed), 400 and 499 permanent, 500
// retried.
func TestStatusClassesAtTheirEnds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, tc := range []struct {
		status    int
		class     delivery.Class
		permanent bool
	}{
		{300, "slack_redirect", false},
		{302, "slack_redirect", false},
		{399, "slack_redirect", false},
		{400, "slack_http_4xx", true},
		{499, "slack_http_4xx", true},
		{500, "slack_http_5xx", false},
	} {
		token := fmt.Sprintf("x%d7Q", tc.status)
		b.slack.Answer(token, tc.status, "")
		err := b.sender.Send(ctx, message(t, fmt.Sprintf("e-%d", tc.status), notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T9/B9/" + token, Text: "x"}))
		permanent, class, _ := delivery.Classify(err)
		require.Equal(t, tc.class, class, "HTTP %d: %v", tc.status, err)
		require.Equal(t, tc.permanent, permanent, "HTTP %d: %v", tc.status, err)
	}
}
