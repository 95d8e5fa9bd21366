package chat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/testkit/chattest"
	"github.com/heraldhq/herald/notification"
)

// clock is a fake clock that sleeping advances.
type clock struct {
	mu      sync.Mutex
	t       time.Time
	slept   []time.Duration
	advance bool // whether Sleep moves the clock
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	if c.advance {
		c.t = c.t.Add(d)
	}
	return nil
}

func (c *clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.slept)
}

type bundle struct {
	slack   *chattest.Slack
	discord *chattest.Discord
	teams   *chattest.Teams
	clock   *clock
	sender  *chat.Sender
}

// setup starts the three receivers on the test's fake clock and a sender
// that may reach them (127.0.0.1 allowed as a host and as a destination).
func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{slack: chattest.NewSlack(), discord: chattest.NewDiscord(), teams: chattest.NewTeams(),
		clock: &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), advance: true}}
	for _, r := range []*chattest.Receiver{b.slack.Receiver, b.discord.Receiver, b.teams.Receiver} {
		r.Now = b.clock.Now
		t.Cleanup(r.Close)
	}
	var err error
	b.sender, err = chat.NewSender(chat.Config{
		TLSClientConfig: b.slack.TLSConfig(), // httptest servers share one certificate
		AllowCIDRs:      []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		AllowHosts:      []string{"127.0.0.1"},
		Now:             b.clock.Now,
	})
	require.NoError(t, err)
	chat.SetSleep(b.sender, b.clock.Sleep)
	return b
}

func message(t *testing.T, id string, c notification.Chat) *notification.Message {
	t.Helper()
	m := &notification.Message{Version: 1, ID: id, Channel: notification.ChannelChat, Chat: &c}
	require.NoError(t, m.Validate())
	return m
}

func TestDeliversEachServiceInItsShape(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	card := `{"type":"AdaptiveCard","version":"1.5","body":[{"type":"TextBlock","text":"Deploy **1042**"}]}`
	tests := []struct {
		name     string
		c        notification.Chat
		receiver *chattest.Receiver
		want     string // the exact body the service gets
	}{
		{"slack text", notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T1/B1/tok1", Text: "Deploy 1042 finished"},
			b.slack.Receiver, `{"text":"Deploy 1042 finished"}`},
		{"slack text and blocks", notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T1/B2/tok2", Text: "fallback",
			Blocks: json.RawMessage(`[{"type":"section","text":{"type":"mrkdwn","text":"*Deploy*"}}]`)},
			b.slack.Receiver, `{"text":"fallback","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Deploy*"}}]}`},
		{"discord content, mentions not pinged", notification.Chat{Service: "discord", URL: b.discord.URL() + b.discord.Create("11", "tokA"), Text: "Deploy done @everyone"},
			b.discord.Receiver, `{"content":"Deploy done @everyone","allowed_mentions":{"parse":[]}}`},
		{"discord embeds, wait=true", notification.Chat{Service: "discord", URL: b.discord.URL() + b.discord.Create("12", "tokB") + "?wait=true",
			Embeds: json.RawMessage(`[{"title":"billing","fields":[{"name":"env","value":"prod"}]}]`)},
			b.discord.Receiver, `{"embeds":[{"title":"billing","fields":[{"name":"env","value":"prod"}]}],"allowed_mentions":{"parse":[]}}`},
		{"teams workflow text", notification.Chat{Service: "teams", URL: b.teams.URL() + b.teams.Create("wf1", "sig1"), Text: "Deploy 1042 finished"},
			b.teams.Receiver, `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","body":[{"text":"Deploy 1042 finished","type":"TextBlock","wrap":true}],"type":"AdaptiveCard","version":"1.4"}}]}`},
		{"teams workflow card and summary", notification.Chat{Service: "teams", URL: b.teams.URL() + b.teams.Create("wf2", "sig2"), Text: "Deploy 1042", Card: json.RawMessage(card)},
			b.teams.Receiver, `{"type":"message","summary":"Deploy 1042","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":` + card + `}]}`},
		{"teams legacy webhook", notification.Chat{Service: "teams", URL: b.teams.URL() + "/webhookb2/g@t/IncomingWebhook/h/o", Card: json.RawMessage(card)},
			b.teams.Receiver, `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":` + card + `}]}`},
	}
	for i, tt := range tests {
		before := len(tt.receiver.Received())
		require.NoError(t, b.sender.Send(ctx, message(t, "n-"+tt.name[:4], tt.c)), tt.name)
		got := tt.receiver.Received()
		require.Len(t, got, before+1, tt.name)
		last := got[len(got)-1]
		require.Equal(t, tt.want, string(last.Body), "%d %s", i, tt.name)
		require.Equal(t, "application/json", last.Header.Get("Content-Type"))
		require.Equal(t, "herald/1", last.Header.Get("User-Agent"))
	}
	require.Empty(t, b.slack.Refused())
	require.Empty(t, b.discord.Refused())
	require.Empty(t, b.teams.Refused())
}

// The receivers refuse what the services refuse: a Standard Webhooks
// envelope, or another service's body, is not a chat message.
func TestReceiversRefuseTheWrongShape(t *testing.T) {
	t.Parallel()
	b := setup(t)
	envelope := `{"type":"deploy.finished","timestamp":"2026-12-01T09:00:00Z","data":{"text":"x"}}`
	for _, tc := range []struct {
		url, body string
		want      int
	}{
		{b.slack.URL() + "/services/T/B/tok", envelope, http.StatusBadRequest},
		{b.slack.URL() + "/services/T/B/tok", `{"content":"discord's field"}`, http.StatusBadRequest},
		{b.slack.URL() + "/services/T/B/tok", `{"blocks":[{"text":"no type"}]}`, http.StatusBadRequest},
		{b.discord.URL() + b.discord.Create("21", "t"), `{"text":"slack's field"}`, http.StatusBadRequest},
		{b.discord.URL() + b.discord.Create("22", "t"), `{"content":"` + strings.Repeat("x", 2001) + `"}`, http.StatusBadRequest},
		{b.teams.URL() + b.teams.Create("wf", "s"), `{"text":"legacy text is not a workflow card"}`, http.StatusBadRequest},
		{b.teams.URL() + b.teams.Create("wf", "s"), `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"MessageCard"}}]}`, http.StatusBadRequest},
	} {
		resp, err := b.slack.Receiver.TLSClient().Post(tc.url, "application/json", strings.NewReader(tc.body))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, tc.want, resp.StatusCode, tc.body)
	}
}

func TestPermanentErrorsNameTheServicesReason(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	slackHook := func(token string) string { return b.slack.URL() + "/services/T9/B9/" + token }
	b.slack.Remove("xRemoved7Q")
	b.slack.Answer("xArch7Q", http.StatusGone, "channel_is_archived")
	b.slack.Answer("xMiss7Q", http.StatusNotFound, "channel_not_found")
	b.slack.Answer("xProh7Q", http.StatusForbidden, "action_prohibited")
	b.slack.Answer("xRevk7Q", http.StatusForbidden, "invalid_token")
	b.slack.Answer("xGenl7Q", http.StatusForbidden, "posting_to_general_channel_denied")
	b.slack.Answer("xUnkn7Q", http.StatusForbidden, "some_new_reason")
	deleted := b.discord.URL() + b.discord.Create("31", "tok")
	b.discord.Delete("31")
	noAccess := b.discord.URL() + b.discord.Create("32", "tok")
	b.discord.Answer("32", http.StatusForbidden, `{"message": "Missing Access", "code": 50001}`)
	gone := b.teams.URL() + b.teams.Create("wf-gone", "sig")
	b.teams.Disable("wf-gone")
	b.teams.Create("wf-sig", "right")
	tests := []struct {
		c     notification.Chat
		class delivery.Class
	}{
		{notification.Chat{Service: "slack", URL: slackHook("xRemoved7Q"), Text: "x"}, "slack_no_service"},
		{notification.Chat{Service: "slack", URL: slackHook("xArch7Q"), Text: "x"}, "slack_channel_is_archived"},
		{notification.Chat{Service: "slack", URL: slackHook("xMiss7Q"), Text: "x"}, "slack_channel_not_found"},
		{notification.Chat{Service: "slack", URL: slackHook("xProh7Q"), Text: "x"}, "slack_action_prohibited"},
		{notification.Chat{Service: "slack", URL: slackHook("xRevk7Q"), Text: "x"}, "slack_invalid_token"},
		{notification.Chat{Service: "slack", URL: slackHook("xGenl7Q"), Text: "x"}, "slack_posting_to_general_channel_denied"},
		{notification.Chat{Service: "slack", URL: slackHook("xUnkn7Q"), Text: "x"}, "slack_http_4xx"},
		{notification.Chat{Service: "discord", URL: deleted, Text: "x"}, "discord_unknown_webhook"},
		{notification.Chat{Service: "discord", URL: strings.Replace(noAccess, "/tok", "/regenerated", 1), Text: "x"}, "discord_invalid_webhook_token"},
		{notification.Chat{Service: "discord", URL: noAccess, Text: "x"}, "discord_missing_access"},
		{notification.Chat{Service: "teams", URL: gone, Text: "x"}, "teams_not_found"},
		{notification.Chat{Service: "teams", URL: b.teams.URL() + "/workflows/wf-sig/triggers/manual/paths/invoke?sig=wrong", Text: "x"}, "teams_unauthorized"},
	}
	for _, tt := range tests {
		err := b.sender.Send(ctx, message(t, "perm-1", tt.c))
		permanent, class, _ := delivery.Classify(err)
		require.True(t, permanent, "%s: %v", tt.class, err)
		require.Equal(t, tt.class, class, "%v", err)
		requireNoSecret(t, err, tt.c.URL)
		if reason, ok := strings.CutPrefix(string(tt.class), "slack_"); ok && reason != "http_4xx" {
			require.Contains(t, err.Error(), "body: "+reason, "the service's reason is quoted, not scrubbed")
		}
	}
}

// requireNoSecret fails when err's text holds any part of u's path or query
// longer than 3 bytes (the webhook's credential).
func requireNoSecret(t *testing.T, err error, u string) {
	t.Helper()
	text := err.Error()
	_, rest, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://"), "/")
	for _, part := range strings.FieldsFunc(rest, func(r rune) bool { return strings.ContainsRune("/?&=", r) }) {
		if len(part) > 3 && !slices.Contains([]string{"services", "workflows", "triggers", "manual", "paths", "invoke", "webhooks", "api-version", "webhookb2"}, part) {
			require.NotContains(t, text, part, "the URL's %q leaked into %q", part, text)
		}
	}
}

func TestTransientErrorsRetry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.slack.Answer("xRoll7Q", http.StatusInternalServerError, "rollup_error")
	b.slack.Answer("xBusy7Q", http.StatusServiceUnavailable, "", "Retry-After", "30")
	b.slack.Answer("xLim7Q", http.StatusTooManyRequests, "rate_limited", "Retry-After", "7")
	limited := b.discord.URL() + b.discord.Create("41", "tok")
	b.discord.Answer("41", http.StatusTooManyRequests, `{"message": "You are being rate limited.", "retry_after": 1.337, "global": false}`, "Retry-After", "1")
	b.teams.Answer("webhookb2/legacy/throttled", http.StatusOK, "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 429 with ContextId tcid=0")
	tests := []struct {
		c     notification.Chat
		class delivery.Class
		after time.Duration
	}{
		{notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T/B/xRoll7Q", Text: "x"}, "slack_rollup_error", 0},
		{notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T/B/xBusy7Q", Text: "x"}, "slack_http_5xx", 30 * time.Second},
		{notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T/B/xLim7Q", Text: "x"}, "slack_rate_limited", 7 * time.Second},
		{notification.Chat{Service: "discord", URL: limited, Text: "x"}, "discord_rate_limited", 1337 * time.Millisecond},
		{notification.Chat{Service: "teams", URL: b.teams.URL() + "/webhookb2/legacy/throttled", Text: "x"}, "teams_rate_limited", 0},
		{notification.Chat{Service: "slack", URL: "https://127.0.0.1:1/services/T/B/closed", Text: "x"}, "slack_connection", 0},
	}
	for _, tt := range tests {
		err := b.sender.Send(ctx, message(t, "tr-1", tt.c))
		permanent, class, after := delivery.Classify(err)
		require.False(t, permanent, "%v", err)
		require.Equal(t, tt.class, class, "%v", err)
		require.Equal(t, tt.after, after, "%v", err)
		requireNoSecret(t, err, tt.c.URL)
	}
}

// A 429 holds the webhook: the next send to it waits out the Retry-After
// (Discord: the JSON retry_after, fractional seconds on the version herald
// posts to, which the header rounds up) instead of failing.
func TestRateLimitedWebhookWaitsItsRetryAfter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.discord.URL() + b.discord.Create("51", "tok")
	b.discord.Answer("51", http.StatusTooManyRequests, `{"message": "You are being rate limited.", "retry_after": 2.5, "global": false}`, "Retry-After", "3")
	err := b.sender.Send(ctx, message(t, "rl-1", notification.Chat{Service: "discord", URL: u, Text: "x"}))
	_, class, after := delivery.Classify(err)
	require.Equal(t, delivery.Class("discord_rate_limited"), class)
	require.Equal(t, 2500*time.Millisecond, after, "retry_after, exact; Retry-After is it rounded up")
	b.discord.Create("51", "tok") // answers normally again (a new canned-free hook id is not needed)
	b.discord.Answer("51", http.StatusNoContent, "")
	require.NoError(t, b.sender.Send(ctx, message(t, "rl-2", notification.Chat{Service: "discord", URL: u, Text: "x"})))
	require.Equal(t, []time.Duration{2500 * time.Millisecond}, b.clock.Slept(), "the second send waited out the 429")
}

// Fifty posts to one Slack webhook go out one second apart, never as a
// burst: the receiver, which refuses more than one per second, takes them
// all.
func TestSlackPacesFiftyPostsOnePerSecond(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.slack.URL() + "/services/T/B/burst"
	for i := range 50 {
		require.NoError(t, b.sender.Send(ctx, message(t, "burst", notification.Chat{Service: "slack", URL: u, Text: "alert"})), i)
	}
	got := b.slack.Received()
	require.Len(t, got, 50)
	require.Empty(t, b.slack.Refused())
	for i := 1; i < len(got); i++ {
		require.Equal(t, time.Second, got[i].At.Sub(got[i-1].At), i)
	}
	// Another webhook is not held by the first one's pace.
	require.NoError(t, b.sender.Send(ctx, message(t, "other", notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T/B/other", Text: "x"})))
	require.Len(t, b.clock.Slept(), 49)
}

// Concurrent sends to one webhook take successive turns: 0 s, 1 s, … 9 s.
func TestConcurrentSendsTakeTurns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.clock.advance = false // every send sees the same instant
	b.slack.Now = func() time.Time { return time.Now() }
	ctx := context.Background()
	u := b.slack.URL() + "/services/T/B/concurrent"
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_ = b.sender.Send(ctx, message(t, "c", notification.Chat{Service: "slack", URL: u, Text: "x"}))
		})
	}
	wg.Wait()
	slept := b.clock.Slept()
	slices.Sort(slept)
	want := make([]time.Duration, 9)
	for i := range want {
		want[i] = time.Duration(i+1) * time.Second
	}
	require.Equal(t, want, slept, "nine waited, one per second after the first")
}

// A turn after the caller's deadline is not waited for: nothing is sent,
// and the error asks for a retry after the wait. The deadline is real time,
// whatever day the Sender's clock reads: a clock years behind must not send
// into a deadline it cannot meet, nor one years ahead refuse a send that
// has time. A refused turn is given back, so the next send's turn is not
// pushed later.
func TestTurnAfterDeadlineRetriesLater(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		clock time.Time
	}{
		{"clock years behind", time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)},
		{"clock years ahead", time.Date(2101, 2, 3, 4, 5, 6, 0, time.UTC)},
		{"clock at real now", time.Now()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.clock.t = tt.clock
			u := b.slack.URL() + "/services/T/B/paced"
			send := func(ctx context.Context, id string) error {
				return b.sender.Send(ctx, message(t, id, notification.Chat{Service: "slack", URL: u, Text: "x"}))
			}
			// A 429 holds the webhook for 2 h.
			b.slack.Answer("paced", http.StatusTooManyRequests, "", "Retry-After", "7200")
			_, class, after := delivery.Classify(send(context.Background(), "s1"))
			require.Equal(t, delivery.Class("slack_rate_limited"), class)
			require.Equal(t, 2*time.Hour, after)
			b.slack.Answer("paced", http.StatusOK, "ok")

			// An hour left: the turn in 2 h is not waited for, twice.
			for _, id := range []string{"s2", "s3"} {
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				err := send(ctx, id)
				cancel()
				permanent, class, after := delivery.Classify(err)
				require.False(t, permanent, id)
				require.Equal(t, delivery.Class("slack_rate_limited"), class, "%s: %v", id, err)
				require.Equal(t, 2*time.Hour, after, "%s: the turns refused before were given back", id)
				requireNoSecret(t, err, u)
			}
			require.Empty(t, b.clock.Slept(), "nothing waited for")
			require.Equal(t, []int{http.StatusTooManyRequests}, b.slack.Refused(), "nothing sent")

			// Three hours left: the send waits its turn, 2 h (not 2 h 2 s:
			// the refused turns were given back), and is sent.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
			defer cancel()
			require.NoError(t, send(ctx, "s4"))
			require.Equal(t, []time.Duration{2 * time.Hour}, b.clock.Slept())
			require.Equal(t, []int{http.StatusTooManyRequests, http.StatusOK}, b.slack.Refused(), "sent once more")
		})
	}
}

func TestHostsAndDestinations(t *testing.T) {
	t.Parallel()
	strict, err := chat.NewSender(chat.Config{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing may be sent: every case fails before the request
	for _, tc := range []struct {
		c     notification.Chat
		class delivery.Class
	}{
		{notification.Chat{Service: "slack", URL: "https://hooks.slack.com.evil.example/services/T/B/secret1", Text: "x"}, "slack_host_not_allowed"},
		{notification.Chat{Service: "slack", URL: "https://evil.example/services/T/B/secret2", Text: "x"}, "slack_host_not_allowed"},
		{notification.Chat{Service: "slack", URL: "https://discord.com/api/webhooks/1/secret3", Text: "x"}, "slack_host_not_allowed"},
		{notification.Chat{Service: "discord", URL: "https://hooks.slack.com/services/T/B/secret4", Text: "x"}, "discord_host_not_allowed"},
		{notification.Chat{Service: "teams", URL: "https://logic.azure.com/workflows/w/triggers/manual/paths/invoke?sig=secret5", Text: "x"}, "teams_host_not_allowed"},
		{notification.Chat{Service: "teams", URL: "https://logic.azure.com.evil.example/workflows/w?sig=secret6", Text: "x"}, "teams_host_not_allowed"},
		{notification.Chat{Service: "slack", URL: "http://hooks.slack.com/services/T/B/secret7", Text: "x"}, "slack_invalid_url"},
		{notification.Chat{Service: "slack", URL: "https://127.0.0.1/services/T/B/secret8", Text: "x"}, "slack_host_not_allowed"},
	} {
		err := strict.Send(ctx, message(t, "h", tc.c))
		permanent, class, _ := delivery.Classify(err)
		require.True(t, permanent, "%v", err)
		require.Equal(t, tc.class, class, "%v", err)
		require.NotContains(t, err.Error(), "secret")
	}
	// The services' own hosts pass the host rule (and then meet ctx's end).
	for _, tc := range []notification.Chat{
		{Service: "slack", URL: "https://hooks.slack.com/services/T/B/s", Text: "x"},
		{Service: "slack", URL: "https://HOOKS.SLACK.COM./services/T/B/s", Text: "x"},
		{Service: "discord", URL: "https://discord.com/api/webhooks/1/s", Text: "x"},
		{Service: "discord", URL: "https://discordapp.com/api/webhooks/1/s", Text: "x"},
		{Service: "teams", URL: "https://acme.webhook.office.com/webhookb2/g/IncomingWebhook/h/o", Text: "x"},
		{Service: "teams", URL: "https://prod-12.westeurope.logic.azure.com:443/workflows/w/triggers/manual/paths/invoke?sig=s", Text: "x"},
		{Service: "teams", URL: "https://default0123.ab.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/w/triggers/manual/paths/invoke?sig=s", Text: "x"},
	} {
		_, class, _ := delivery.Classify(strict.Send(ctx, message(t, "h", tc)))
		require.Equal(t, delivery.ClassDeadline, class, tc.URL)
	}

	// An allowed host still meets the destination check at dial time.
	b := setup(t)
	open, err := chat.NewSender(chat.Config{AllowHosts: []string{"127.0.0.1"}, TLSClientConfig: b.slack.TLSConfig()})
	require.NoError(t, err)
	err = open.Send(context.Background(), message(t, "h", notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T/B/secret9", Text: "x"}))
	permanent, class, _ := delivery.Classify(err)
	require.True(t, permanent)
	require.Equal(t, delivery.Class("slack_blocked_destination"), class, "%v", err)
	require.Empty(t, b.slack.Received())
}

func TestTeamsBodyOver28KB(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Text within the contract's 28,672 bytes, but the card built around it
	// is larger.
	text := strings.Repeat("a", notification.MaxTeamsMessageBytes-100)
	err := b.sender.Send(context.Background(), message(t, "big", notification.Chat{Service: "teams", URL: b.teams.URL() + b.teams.Create("wf-big", "s"), Text: text}))
	permanent, class, _ := delivery.Classify(err)
	require.True(t, permanent)
	require.Equal(t, delivery.ClassInvalidMessage, class)
	require.ErrorContains(t, err, "chat.card")
	require.Empty(t, b.teams.Received(), "nothing sent")
}

func TestNewSenderChecksAllowHosts(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"127.0.0.1", "::1", "chat-proxy.example.com", ".example.com", "localhost"} {
		require.NoError(t, chat.CheckAllowHost(h), h)
	}
	for _, h := range []string{"", ".", "https://x.example", "x.example:443", "x.example/path", "*.example.com", "a..b", "x.example."} {
		require.Error(t, chat.CheckAllowHost(h), h)
		_, err := chat.NewSender(chat.Config{AllowHosts: []string{h}})
		require.Error(t, err, h)
	}
}

// Discord announces an empty bucket in its headers: the next send to that
// webhook waits X-RateLimit-Reset-After (fractional seconds).
func TestDiscordBucketHeadersHoldTheWebhook(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.discord.URL() + b.discord.Create("61", "tok")
	b.discord.Answer("61", http.StatusNoContent, "", "X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "3.25")
	require.NoError(t, b.sender.Send(ctx, message(t, "d1", notification.Chat{Service: "discord", URL: u, Text: "x"})))
	require.Empty(t, b.clock.Slept())
	require.NoError(t, b.sender.Send(ctx, message(t, "d2", notification.Chat{Service: "discord", URL: u, Text: "x"})))
	require.Equal(t, []time.Duration{3250 * time.Millisecond}, b.clock.Slept())
}

// An absurd X-RateLimit-Reset-After holds the webhook for MaxRetryAfter, the
// longest delay herald honours, like a Retry-After of that size; values that
// say nothing (negative, zero, not a number) hold it not at all. A value
// beyond time.Duration's range once overflowed to a negative wait and let
// the next send go at once.
func TestDiscordBucketResetAfterOutOfRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		resetAfter string
		wait       time.Duration // before the next send
	}{
		{"43201", chat.MaxRetryAfter},
		{"1e10", chat.MaxRetryAfter}, // 1e19 ns: beyond time.Duration
		{"1e300", chat.MaxRetryAfter},
		{"1e400", chat.MaxRetryAfter}, // strconv.ErrRange, +Inf
		{"Inf", chat.MaxRetryAfter},
		{"+Inf", chat.MaxRetryAfter},
		{"9223372036.854775807", chat.MaxRetryAfter},
		{"-5", 0},
		{"-Inf", 0},
		{"NaN", 0},
		{"0", 0},
		{"soon", 0},
	}
	for i, tt := range tests {
		t.Run(tt.resetAfter, func(t *testing.T) {
			t.Parallel()
			// The clock moves as the Sender sleeps: a send that waited
			// out a hold looks again (a hold met meanwhile) and finds none.
			b := setup(t)
			id := strconv.Itoa(70 + i)
			u := b.discord.URL() + b.discord.Create(id, "tok")
			b.discord.Answer(id, http.StatusNoContent, "", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", tt.resetAfter)
			require.NoError(t, b.sender.Send(context.Background(), message(t, "d1", notification.Chat{Service: "discord", URL: u, Text: "x"})))
			// A real deadline (the fake clock reads another day), far
			// beyond the capped wait.
			ctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
			defer cancel()
			err := b.sender.Send(ctx, message(t, "d2", notification.Chat{Service: "discord", URL: u, Text: "x"}))
			require.NoError(t, err)
			var slept time.Duration
			for _, d := range b.clock.Slept() {
				slept += d
			}
			require.Equal(t, tt.wait, slept)
		})
	}
}

// The Teams body says the producer's text and card as written: characters
// that HTML gives meaning to (<, >, &) stay themselves, not \u003c escapes six
// bytes long, so a text of "<" well inside the contract's 28 KB is sent and
// not refused as a body over it.
func TestTeamsBodyKeepsHTMLCharacters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name string
		c    notification.Chat
		want string // in the body Teams gets
	}{
		{"text", notification.Chat{Text: strings.Repeat("<&>", 2000)}, `"text":"` + strings.Repeat("<&>", 2000) + `"`},
		{"card", notification.Chat{Text: "a<b", Card: json.RawMessage(`{"type":"AdaptiveCard","body":[{"type":"TextBlock","text":"x & y <z>"}]}`)},
			`"summary":"a<b","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"type":"AdaptiveCard","body":[{"type":"TextBlock","text":"x & y <z>"}]}}]`},
	}
	for i, tt := range tests {
		tt.c.Service, tt.c.URL = "teams", b.teams.URL()+b.teams.Create("wf-html"+strconv.Itoa(i), "s")
		require.NoError(t, b.sender.Send(context.Background(), message(t, "html", tt.c)), tt.name)
		got := b.teams.Received()
		require.Len(t, got, i+1)
		require.Contains(t, string(got[i].Body), tt.want, tt.name)
		require.NotContains(t, string(got[i].Body), `\u003c`, tt.name)
	}
}

// Plain http, allowed for receivers on this machine (HERALD_WEBHOOK_ALLOW_HTTP,
// which `herald run --local-receivers` sets), never reaches a service's own
// host: the URL is the webhook's credential and would cross the network in
// clear text. The http URL fails before any lookup or connection; the same
// URL over https and a local stand-in over http pass the rule.
func TestPlainHTTPNeverToAServicesOwnHost(t *testing.T) {
	t.Parallel()
	s, err := chat.NewSender(chat.Config{AllowHTTP: true, AllowHosts: []string{"127.0.0.1", ".chat-proxy.example"}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a case that passes the rules meets ctx's end before the request
	for _, tc := range []notification.Chat{
		{Service: "slack", URL: "http://hooks.slack.com/services/T0001/B0001/secret1", Text: "x"},
		{Service: "slack", URL: "http://HOOKS.slack.com./services/T0001/B0001/secret2", Text: "x"},
		{Service: "discord", URL: "http://discord.com/api/webhooks/1/secret3", Text: "x"},
		{Service: "discord", URL: "http://canary.discord.com:80/api/webhooks/1/secret4", Text: "x"},
		{Service: "teams", URL: "http://prod-12.westeurope.logic.azure.com/workflows/w/triggers/manual/paths/invoke?sig=secret5", Text: "x"},
		{Service: "teams", URL: "http://acme.webhook.office.com/webhookb2/g/IncomingWebhook/h/secret6", Text: "x"},
	} {
		err := s.Send(ctx, message(t, "h", tc))
		permanent, class, _ := delivery.Classify(err)
		require.True(t, permanent, "%v", err)
		require.Equal(t, delivery.Class(string(tc.Service)+"_invalid_url"), class, "%v", err)
		require.ErrorContains(t, err, "https only")
		require.NotContains(t, err.Error(), "secret")
	}
	for _, tc := range []notification.Chat{
		{Service: "slack", URL: "https://hooks.slack.com/services/T0001/B0001/s", Text: "x"},
		{Service: "slack", URL: "http://127.0.0.1:8080/services/T0001/B0001/s", Text: "x"},
		{Service: "discord", URL: "http://relay.chat-proxy.example/api/webhooks/1/s", Text: "x"},
	} {
		_, class, _ := delivery.Classify(s.Send(ctx, message(t, "h", tc)))
		require.Equal(t, delivery.ClassDeadline, class, tc.URL)
	}
}

// Seven posts to one Discord webhook that announces no bucket: herald's own
// pace holds them to five at once, then one per 400 ms (5 per 2 seconds).
func TestDiscordPacesFivePerTwoSeconds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.discord.URL() + b.discord.Create("12", "pace")
	b.discord.Answer("12", http.StatusNoContent, "") // no X-RateLimit-* headers
	for i := range 7 {
		require.NoError(t, b.sender.Send(ctx, message(t, "pace", notification.Chat{Service: "discord", URL: u, Text: "alert"})), i)
	}
	require.Equal(t, []time.Duration{400 * time.Millisecond, 400 * time.Millisecond}, b.clock.Slept())
}

// A post waiting for its turn when another post to the same webhook meets
// a 429 waits out that 429's Retry-After too, when it ends within the
// invocation: one 429, not two, and the post is made.
func TestA429MetWhileAPostWaitsForItsTurn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	u := b.slack.URL() + "/services/T1/B1/xWait7Q"
	require.NoError(t, b.sender.Send(context.Background(), message(t, "a", notification.Chat{Service: "slack", URL: u, Text: "x"})))
	var limitedErr error
	var first atomic.Bool
	chat.SetSleep(b.sender, func(ctx context.Context, d time.Duration) error {
		if first.CompareAndSwap(false, true) { // while the second post waits, a third meets a 429
			b.slack.Answer("xWait7Q", http.StatusTooManyRequests, "rate_limited", "Retry-After", "30")
			limitedErr = b.sender.Send(ctx, message(t, "c", notification.Chat{Service: "slack", URL: u, Text: "x"}))
			b.slack.Unanswer("xWait7Q")
		}
		return b.clock.Sleep(ctx, d)
	})
	start := b.clock.Now()
	require.NoError(t, b.sender.Send(context.Background(), message(t, "b", notification.Chat{Service: "slack", URL: u, Text: "x"})))
	_, class, _ := delivery.Classify(limitedErr)
	require.Equal(t, delivery.Class("slack_rate_limited"), class, "%v", limitedErr)
	require.Len(t, b.slack.Refused(), 1, "one 429")
	got := b.slack.Received()
	require.Len(t, got, 2)
	// The third post's turn was at +2 s, its 429 holds the webhook 30 s
	// from then: the second post goes at +32 s.
	require.Equal(t, start.Add(32*time.Second), got[1].At)
}

// herald's pace of a Teams webhook keeps under every limit Teams documents
// for its kind, with the receiver counting each in a sliding span: a
// workflow 4 in any second (herald: at most 3), a legacy connector 4 in a
// second, 60 in 30 s, 100 in an hour, 150 in 2 hours and 1,800 in a day.
// Paced at 4 a second (burst 4), the legacy connector was throttled from
// its 61st post on, and the workflow took 8 posts in one second.
func TestTeamsPaceKeepsUnderEveryTeamsLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		posts  int
		limits []chattest.Limit
		url    func(tm *chattest.Teams) string
	}{
		{"workflow", 40, chattest.TeamsWorkflowsLimits, func(tm *chattest.Teams) string { return tm.URL() + tm.Create("wf-pace", "sig") }},
		{"legacy connector", 160, chattest.TeamsLegacyLimits, func(tm *chattest.Teams) string { return tm.URL() + "/webhookb2/g/IncomingWebhook/pace/o" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			u := tc.url(b.teams)
			for i := range tc.posts {
				require.NoError(t, b.sender.Send(context.Background(), message(t, "p", notification.Chat{Service: "teams", URL: u, Text: "x"})), i)
			}
			require.Empty(t, b.teams.Refused())
			got := b.teams.Received()
			require.Len(t, got, tc.posts)
			for _, l := range tc.limits {
				for i := range got { // with a post of margin in the busiest second
					n := 0
					for _, r := range got[i:] {
						if r.At.Sub(got[i].At) < l.Span {
							n++
						}
					}
					limit := l.Max
					if l.Span == time.Second {
						limit--
					}
					require.LessOrEqual(t, n, limit, "%d posts in %v from post %d", n, l.Span, i)
				}
			}
		})
	}
}
