package chat_test

import (
	"context"
	"net/http"
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

// A Discord webhook's 429 is read in the unit of the API version the post
// ran on, so herald's wait is the receiver's: the receiver's bucket is
// emptied by other posts (five at once), then herald's post meets its 429
// as each version writes it (milliseconds on the default version 6 and on
// 7, seconds from 8 on), and the next send waits exactly that long and is
// taken. A URL copied from Discord, without a version, is posted to
// DiscordAPIVersion.
func TestDiscordWaitEqualsDiscordsInEveryVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prefix, posted string // the URL's path prefix, the path posted to
	}{
		{"/api/webhooks/", "/api/v10/webhooks/"},
		{"/api/v6/webhooks/", "/api/v6/webhooks/"},
		{"/api/v7/webhooks/", "/api/v7/webhooks/"},
		{"/api/v8/webhooks/", "/api/v8/webhooks/"},
		{"/api/v9/webhooks/", "/api/v9/webhooks/"},
		{"/api/v10/webhooks/", "/api/v10/webhooks/"},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			path := b.discord.Create("90", "tok")
			u := b.discord.URL() + strings.Replace(path, "/api/webhooks/", tc.prefix, 1)
			direct := b.discord.URL() + strings.Replace(path, "/api/webhooks/", tc.posted, 1)
			b.clock.t = b.clock.t.Add(300 * time.Millisecond)
			for range 5 { // another client empties the bucket at this instant
				resp, err := b.discord.TLSClient().Post(direct, "application/json", strings.NewReader(`{"content":"x"}`))
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusNoContent, resp.StatusCode)
			}
			err := b.sender.Send(context.Background(), message(t, "v", notification.Chat{Service: "discord", URL: u, Text: "x"}))
			_, class, after := delivery.Classify(err)
			require.Equal(t, delivery.Class("discord_rate_limited"), class, "%v", err)
			require.Equal(t, 400*time.Millisecond, after, "one token back in 400 ms, as the receiver said it")
			require.NoError(t, b.sender.Send(context.Background(), message(t, "v2", notification.Chat{Service: "discord", URL: u, Text: "x"})))
			require.Equal(t, []time.Duration{400 * time.Millisecond}, b.clock.Slept())
			got := b.discord.Received()
			require.Len(t, got, 6)
			require.Equal(t, tc.posted+"90/tok", got[5].Path)
		})
	}
}

// 429s as each version writes them, the ones of the field included: the
// default version's Retry-After: 1500 with {"retry_after": 1500} is 1.5 s
// (read as seconds it held the webhook 25 minutes), and 65,000 ms is 65 s
// (not the 12 h cap). The exact retry_after is preferred to the header,
// which version 8 on rounds up; a header alone is read in the version's
// unit; a bucket emptied for longer holds it longer.
func TestDiscordRetryAfterUnits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name, prefix, body string
		header             []string
		want               time.Duration
	}{
		{"v6 1500 ms", "/api/v6/", `{"global": false, "message": "You are being rate limited.", "retry_after": 1500}`, []string{"Retry-After", "1500"}, 1500 * time.Millisecond},
		{"v6 65000 ms", "/api/v6/", `{"global": false, "message": "You are being rate limited.", "retry_after": 65000}`, []string{"Retry-After", "65000"}, 65 * time.Second},
		{"v7 header only", "/api/v7/", `{"message": "You are being rate limited."}`, []string{"Retry-After", "2750", "X-RateLimit-Scope", "user"}, 2750 * time.Millisecond},
		{"v6 1 ms", "/api/v6/", `{"retry_after": 1}`, []string{"Retry-After", "1"}, time.Millisecond},
		{"v8 fractional", "/api/v8/", `{"retry_after": 0.25, "global": false}`, []string{"Retry-After", "1"}, 250 * time.Millisecond},
		{"v9 65 s", "/api/v9/", `{"retry_after": 65.0, "global": false}`, []string{"Retry-After", "65"}, 65 * time.Second},
		{"v10 header only", "/api/v10/", `{"message": "You are being rate limited."}`, []string{"Retry-After", "3", "X-RateLimit-Scope", "user"}, 3 * time.Second},
		{"unversioned, posted to v10", "/api/", `{"retry_after": 1.5, "global": false}`, []string{"Retry-After", "2"}, 1500 * time.Millisecond},
		{"v10 bucket longer", "/api/v10/", `{"retry_after": 0.5}`, []string{"Retry-After", "1", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "4.5", "X-RateLimit-Limit", "5"}, 4500 * time.Millisecond},
		{"v10 beyond the cap", "/api/v10/", `{"retry_after": 1e12}`, nil, chat.MaxRetryAfter},
		{"v6 beyond the cap", "/api/v6/", `{"retry_after": 43200001}`, nil, chat.MaxRetryAfter},
		{"v10 nonsense", "/api/v10/", `{"retry_after": -4}`, []string{"Retry-After", "soon", "X-RateLimit-Scope", "user"}, 0},
	}
	for i, tt := range tests {
		id := strings.Repeat("9", i+1)
		path := strings.Replace(b.discord.Create(id, "tok"), "/api/", tt.prefix, 1)
		b.discord.Answer(id, http.StatusTooManyRequests, tt.body, tt.header...)
		err := b.sender.Send(context.Background(), message(t, "u", notification.Chat{Service: "discord", URL: b.discord.URL() + path, Text: "x"}))
		_, class, after := delivery.Classify(err)
		require.Equal(t, delivery.Class("discord_rate_limited"), class, "%s: %v", tt.name, err)
		require.Equal(t, tt.want, after, tt.name)
	}
}

// Cloudflare's ban of the sending address (429 without rate-limit headers,
// {"code": 0, …} or an HTML page) holds every Discord webhook of the
// Sender for the ban's pause, its Retry-After or DiscordBanPause: the posts
// after it are not made. Another service is not held.
func TestDiscordBanHoldsEveryDiscordWebhook(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		header     []string
		pause      time.Duration
	}{
		{"json", chattest.DiscordBanJSON, nil, chat.DiscordBanPause},
		{"html", chattest.DiscordBanHTML, nil, chat.DiscordBanPause},
		{"html with Retry-After", chattest.DiscordBanHTML, []string{"Retry-After", "600"}, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			// The invocation's deadline is the wall clock's (a minute
			// away); the pacer compares its clock's turns with it, so the
			// clock starts at the wall clock's now.
			b.clock.t = time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			one := b.discord.URL() + b.discord.Create("81", "tok")
			two := b.discord.URL() + b.discord.Create("82", "tok")
			b.discord.Ban(tc.body, tc.header...)
			err := b.sender.Send(ctx, message(t, "b1", notification.Chat{Service: "discord", URL: one, Text: "x"}))
			permanent, class, after := delivery.Classify(err)
			require.False(t, permanent)
			require.Equal(t, delivery.Class("discord_banned"), class, "%v", err)
			require.Equal(t, tc.pause, after)
			requireNoSecret(t, err, one)
			for _, u := range []string{one, two, two} {
				err := b.sender.Send(ctx, message(t, "b2", notification.Chat{Service: "discord", URL: u, Text: "x"}))
				_, class, after := delivery.Classify(err)
				require.Equal(t, delivery.Class("discord_rate_limited"), class, "%v", err)
				require.Equal(t, tc.pause, after)
			}
			require.Len(t, b.discord.Refused(), 1, "one request met the ban; none after it")
			require.NoError(t, b.sender.Send(ctx, message(t, "s", notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T/B/free", Text: "x"})))
			// After the pause, Discord is posted to again.
			b.discord.Unban()
			b.clock.t = b.clock.t.Add(tc.pause)
			require.NoError(t, b.sender.Send(ctx, message(t, "b3", notification.Chat{Service: "discord", URL: two, Text: "x"})))
		})
	}
}

// A 429 with rate-limit headers, or with a retry_after, is a rate limit,
// not a ban: only its webhook is held.
func TestDiscordRateLimitIsNoBan(t *testing.T) {
	t.Parallel()
	b := setup(t)
	one := b.discord.URL() + b.discord.Create("83", "tok")
	two := b.discord.URL() + b.discord.Create("84", "tok")
	for i, header := range [][]string{
		{"X-RateLimit-Scope", "shared", "Retry-After", "5"},
		{"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "5"},
		nil, // the body's retry_after
	} {
		b.discord.Answer("83", http.StatusTooManyRequests, `{"message": "You are being rate limited.", "retry_after": 5, "code": 0}`, header...)
		err := b.sender.Send(context.Background(), message(t, "r", notification.Chat{Service: "discord", URL: one, Text: "x"}))
		_, class, _ := delivery.Classify(err)
		require.Equal(t, delivery.Class("discord_rate_limited"), class, "%d: %v", i, err)
		require.NoError(t, b.sender.Send(context.Background(), message(t, "r2", notification.Chat{Service: "discord", URL: two, Text: "x"})), i)
	}
}

// Concurrent posts to a webhook that has not answered in this process go
// one at a time until it answers: 30 at once to a deleted Discord webhook
// (a burst of 5 is Discord's) make one request, whose answer is permanent
// and says the webhook is gone; the others return its class without a
// request, retried once GoneFor has passed (when the deliver function's
// health store decides: disabled, dead-lettered; enabled again, sent).
// Another webhook is not held.
func TestConcurrentPostsToAGoneWebhookMakeOneRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	deleted := b.discord.URL() + b.discord.Create("95", "tokGone7Q")
	b.discord.Delete("95")
	errs := make(chan error, 30)
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			errs <- b.sender.Send(context.Background(), message(t, "c", notification.Chat{Service: "discord", URL: deleted, Text: "x"}))
		})
	}
	wg.Wait()
	close(errs)
	gone := 0
	for err := range errs {
		permanent, class, after := delivery.Classify(err)
		require.Equal(t, delivery.Class("discord_unknown_webhook"), class, "%v", err)
		if delivery.DestinationGone(err) {
			require.True(t, permanent)
			gone++
		} else {
			require.False(t, permanent, "%v", err)
			require.Equal(t, chat.GoneFor, after, "retried when the health store has the answer")
			require.Contains(t, err.Error(), "not sent: the webhook answered discord_unknown_webhook")
		}
		requireNoSecret(t, err, deleted)
	}
	require.Equal(t, 1, gone, "the one answer")
	require.Len(t, b.discord.Refused(), 1, "one request to the deleted webhook")
	live := b.discord.URL() + b.discord.Create("96", "tokLive")
	require.NoError(t, b.sender.Send(context.Background(), message(t, "l", notification.Chat{Service: "discord", URL: live, Text: "x"})))
}

// Every way a Discord webhook URL is written is posted to Execute
// Webhook's own path, /api/vN/webhooks/ID/TOKEN, with its version (10 when
// it has none) and its query, and the message reaches the channel: a
// trailing /github (Discord's GitHub-compatible endpoint answers 204 to a
// body that is no GitHub event and posts nothing) or /slack (it reads
// Slack's text, not herald's content) is dropped, and a trailing slash
// with it. Uppercase hosts and a percent-encoded token are the same
// webhook.
func TestDiscordURLFormsArePostedToExecuteWebhook(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		suffix, posted, query string
	}{
		{"", "/api/v10/webhooks/70/tok-7Q", ""},
		{"/", "/api/v10/webhooks/70/tok-7Q", ""},
		{"/github", "/api/v10/webhooks/70/tok-7Q", ""},
		{"/github/", "/api/v10/webhooks/70/tok-7Q", ""},
		{"/slack", "/api/v10/webhooks/70/tok-7Q", ""},
		{"/slack?wait=true", "/api/v10/webhooks/70/tok-7Q", "wait=true"},
		{"?thread_id=55", "/api/v10/webhooks/70/tok-7Q", "thread_id=55"},
		{"/github?thread_id=55&wait=true", "/api/v10/webhooks/70/tok-7Q", "thread_id=55&wait=true"},
		{"v9:/slack", "/api/v9/webhooks/70/tok-7Q", ""},
		{"v7:/github", "/api/v7/webhooks/70/tok-7Q", ""},
		{"enc:", "/api/v10/webhooks/70/tok-7Q", ""},
	} {
		t.Run(tc.suffix, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			path := b.discord.Create("70", "tok-7Q")
			suffix := tc.suffix
			switch {
			case strings.HasPrefix(suffix, "enc:"):
				path, suffix = strings.Replace(path, "tok-7Q", "tok%2D7Q", 1), ""
			case strings.HasPrefix(suffix, "v"):
				v, rest, _ := strings.Cut(suffix, ":")
				path, suffix = strings.Replace(path, "/api/", "/api/"+v+"/", 1), rest
			}
			u := b.discord.URL() + path + suffix
			require.NoError(t, b.sender.Send(context.Background(), message(t, "f", notification.Chat{Service: "discord", URL: u, Text: "x"})))
			got := b.discord.Received()
			require.Len(t, got, 1, "the message reached the channel")
			require.Equal(t, tc.posted, got[0].Path)
			require.Equal(t, tc.query, got[0].Query)
			key, err := chat.Destination("discord", u)
			require.NoError(t, err)
			plain, err := chat.Destination("discord", b.discord.URL()+"/api/webhooks/70/tok-7Q")
			require.NoError(t, err)
			require.Equal(t, plain, key, "one webhook, one key")
		})
	}
}

// A post waiting for its turn when another post meets Discord's ban is not
// made: the ban came after its turn was given. Its wait is the ban's, past
// the invocation: it is retried then, and only the one request met the ban.
func TestDiscordBanMetWhileAPostWaitsForItsTurn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The invocation's deadline is the wall clock's (ten minutes away);
	// the pacer compares its clock's turns with it, so the clock starts at
	// the wall clock's now.
	b.clock.t = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	one := b.discord.URL() + b.discord.Create("85", "tok")
	two := b.discord.URL() + b.discord.Create("86", "tok")
	for range 5 { // Discord's burst: the sixth post waits
		require.NoError(t, b.sender.Send(ctx, message(t, "a", notification.Chat{Service: "discord", URL: one, Text: "x"})))
	}
	var banErr error
	var first atomic.Bool
	chat.SetSleep(b.sender, func(ctx context.Context, d time.Duration) error {
		if first.CompareAndSwap(false, true) { // while the sixth post waits, another meets the ban
			b.discord.Ban(chattest.DiscordBanJSON)
			banErr = b.sender.Send(ctx, message(t, "b", notification.Chat{Service: "discord", URL: two, Text: "x"}))
		}
		return b.clock.Sleep(ctx, d)
	})
	err := b.sender.Send(ctx, message(t, "a6", notification.Chat{Service: "discord", URL: one, Text: "x"}))
	_, class, _ := delivery.Classify(banErr)
	require.Equal(t, delivery.Class("discord_banned"), class, "%v", banErr)
	permanent, class, after := delivery.Classify(err)
	require.False(t, permanent)
	require.Equal(t, delivery.Class("discord_rate_limited"), class, "%v", err)
	require.InDelta(t, chat.DiscordBanPause.Seconds(), after.Seconds(), 3)
	requireNoSecret(t, err, one)
	require.Len(t, b.discord.Refused(), 1, "only the post that met the ban")
	require.Len(t, b.discord.Received(), 5)
}

// Discord's global rate limit (X-RateLimit-Global, X-RateLimit-Scope:
// global, or "global": true) counts every request of the address, not one
// webhook's: every Discord webhook of the Sender waits its retry_after,
// instead of meeting another global 429. A per-webhook 429 holds only its
// webhook.
func TestDiscordGlobalRateLimitHoldsEveryDiscordWebhook(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		header     []string
		global     bool
	}{
		{"header global", `{"message": "You are being rate limited.", "retry_after": 2.5, "global": true}`, []string{"X-RateLimit-Global", "true", "X-RateLimit-Scope", "global", "Retry-After", "3"}, true},
		{"scope global", `{"message": "You are being rate limited.", "retry_after": 2.5}`, []string{"X-RateLimit-Scope", "global"}, true},
		{"body global", `{"message": "You are being rate limited.", "retry_after": 2.5, "global": true}`, nil, true},
		{"webhook's own", `{"message": "You are being rate limited.", "retry_after": 2.5, "global": false}`, []string{"X-RateLimit-Scope", "shared", "Retry-After", "3"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			one := b.discord.URL() + b.discord.Create("87", "tok")
			two := b.discord.URL() + b.discord.Create("88", "tok")
			b.discord.Answer("87", http.StatusTooManyRequests, tc.body, tc.header...)
			err := b.sender.Send(context.Background(), message(t, "g1", notification.Chat{Service: "discord", URL: one, Text: "x"}))
			_, class, after := delivery.Classify(err)
			require.Equal(t, delivery.Class("discord_rate_limited"), class, "%v", err)
			require.Equal(t, 2500*time.Millisecond, after)
			require.NoError(t, b.sender.Send(context.Background(), message(t, "g2", notification.Chat{Service: "discord", URL: two, Text: "x"})))
			if tc.global {
				require.Equal(t, []time.Duration{2500 * time.Millisecond}, b.clock.Slept(), "the other webhook waited out the global limit")
			} else {
				require.Empty(t, b.clock.Slept(), "another webhook is not held")
			}
		})
	}
}
