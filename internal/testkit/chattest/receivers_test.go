package chattest_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/chattest"
	"github.com/heraldhq/herald/internal/testkit/testclock"
)

// newClock is a settable clock for the receivers' rate limits.
func newClock() *testclock.Clock { return testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)) }

// answer is what a receiver answered.
type answer struct {
	status int
	header http.Header
	body   string
}

// post sends body to url with a client trusting r, as JSON unless ctype
// says otherwise.
func post(t *testing.T, r *chattest.Receiver, method, url, ctype, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := r.TLSClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, resp.Header, string(raw)}
}

func postJSON(t *testing.T, r *chattest.Receiver, url, body string) answer {
	t.Helper()
	return post(t, r, http.MethodPost, url, "application/json", body)
}

func slack(t *testing.T) (*chattest.Slack, *testclock.Clock) {
	t.Helper()
	s := chattest.NewSlack()
	t.Cleanup(s.Close)
	c := newClock()
	s.Now = c.Now
	return s, c
}

func discord(t *testing.T) (*chattest.Discord, *testclock.Clock) {
	t.Helper()
	d := chattest.NewDiscord()
	t.Cleanup(d.Close)
	c := newClock()
	d.Now = c.Now
	return d, c
}

func teams(t *testing.T) (*chattest.Teams, *testclock.Clock) {
	t.Helper()
	tm := chattest.NewTeams()
	t.Cleanup(tm.Close)
	c := newClock()
	tm.Now = c.Now
	return tm, c
}

// TestSlackAcceptsWhatSlackAccepts: text, blocks (up to 50) or both, with
// the members Slack knows, answered 200 "ok" and recorded with the token
// as the hook, the body, the headers and the receiver's clock.
func TestSlackAcceptsWhatSlackAccepts(t *testing.T) {
	t.Parallel()
	s, c := slack(t)
	hook := s.URL() + "/services/T1/B1/tok"
	blocks50 := `[` + strings.TrimSuffix(strings.Repeat(`{"type":"divider"},`, 50), ",") + `]`
	for _, body := range []string{
		`{"text":"hi"}`,
		`{"blocks":[{"type":"section"}]}`,
		`{"blocks":` + blocks50 + `}`,
		`{"text":"hi","blocks":[{"type":"section"}],"attachments":[],"thread_ts":"1.2","mrkdwn":true,"unfurl_links":false,"unfurl_media":false}`,
		`{"text":"hi","channel":"#x","username":"u","icon_emoji":":x:","icon_url":"https://example.com/i.png"}`,
	} {
		c.Advance(time.Second)
		a := post(t, s.Receiver, http.MethodPost, hook, "application/json; charset=utf-8", body)
		require.Equal(t, http.StatusOK, a.status, body)
		require.Equal(t, "ok", a.body)
		require.Equal(t, "text/html", a.header.Get("Content-Type"))
	}
	got := s.Received()
	require.Len(t, got, 5)
	require.Equal(t, "tok", got[0].Hook)
	require.Equal(t, `{"text":"hi"}`, string(got[0].Body))
	require.Equal(t, c.Now(), got[4].At)
	require.Equal(t, "application/json; charset=utf-8", got[0].Header.Get("Content-Type"))
	require.Empty(t, s.Refused())
}

// TestSlackRefusesWhatSlackRefuses: each body Slack refuses, with its
// status and token, and what a removed webhook or another path answers.
func TestSlackRefusesWhatSlackRefuses(t *testing.T) {
	t.Parallel()
	s, _ := slack(t)
	hook := s.URL() + "/services/T1/B1/tok"
	blocks51 := `[` + strings.TrimSuffix(strings.Repeat(`{"type":"divider"},`, 51), ",") + `]`
	for _, tc := range []struct{ ctype, body, want string }{
		{"text/plain", `{"text":"hi"}`, "invalid_payload"},
		{"application/json", `{"text":`, "invalid_payload"},
		{"application/json", `null`, "invalid_payload"},
		{"application/json", `["text"]`, "invalid_payload"},
		{"application/json", `{"text":"hi","content":"discord's"}`, "invalid_payload"},
		{"application/json", `{"text":5}`, "invalid_payload"},
		{"application/json", `{"blocks":{}}`, "invalid_blocks"},
		{"application/json", `{"blocks":[]}`, "invalid_blocks"},
		{"application/json", `{"blocks":` + blocks51 + `}`, "invalid_blocks"},
		{"application/json", `{"blocks":[{"type":"section"},{"text":"no type"}]}`, "invalid_blocks"},
		{"application/json", `{"blocks":[{"type":""}]}`, "invalid_blocks"},
		{"application/json", `{"text":""}`, "no_text"},
		{"application/json", `{"attachments":[]}`, "no_text"},
	} {
		a := post(t, s.Receiver, http.MethodPost, hook, tc.ctype, tc.body)
		require.Equal(t, http.StatusBadRequest, a.status, tc.body)
		require.Equal(t, tc.want, a.body, tc.body)
		require.Equal(t, "text/html", a.header.Get("Content-Type"))
	}
	s.Remove("gone")
	for _, tc := range []struct{ method, path string }{
		{http.MethodPost, "/services/T1/B1/gone"},
		{http.MethodGet, "/services/T1/B1/tok"},
		{http.MethodPost, "/services/T1/tok"},
		{http.MethodPost, "/services/T1/B1/tok/x"},
		{http.MethodPost, "/hooks/T1/B1/tok"},
	} {
		a := post(t, s.Receiver, tc.method, s.URL()+tc.path, "application/json", `{"text":"hi"}`)
		require.Equal(t, http.StatusNotFound, a.status, tc.path)
		require.Equal(t, "no_service", a.body, tc.path)
	}
	require.Empty(t, s.Received())
	require.Len(t, s.Refused(), 18)
	require.Equal(t, http.StatusNotFound, s.Refused()[17])
}

// TestSlackRate: two posts at once, then one a second per webhook; beyond
// it 429 rate_limited with Retry-After in whole seconds, rounded up. Each
// webhook has its own rate; idle time refills at most the burst.
func TestSlackRate(t *testing.T) {
	t.Parallel()
	s, c := slack(t)
	send := func(tok string) answer {
		return postJSON(t, s.Receiver, s.URL()+"/services/T/B/"+tok, `{"text":"hi"}`)
	}
	require.Equal(t, http.StatusOK, send("a").status)
	require.Equal(t, http.StatusOK, send("a").status)
	a := send("a")
	require.Equal(t, http.StatusTooManyRequests, a.status)
	require.Equal(t, "rate_limited", a.body)
	require.Equal(t, "1", a.header.Get("Retry-After"))
	require.Equal(t, http.StatusOK, send("b").status, "another webhook has its own rate")

	c.Advance(300 * time.Millisecond)
	a = send("a")
	require.Equal(t, http.StatusTooManyRequests, a.status)
	require.Equal(t, "1", a.header.Get("Retry-After"), "0.7 s rounded up")
	c.Advance(700 * time.Millisecond)
	require.Equal(t, http.StatusOK, send("a").status, "exactly a second after: one token")
	require.Equal(t, http.StatusTooManyRequests, send("a").status)

	c.Advance(10 * time.Second)
	require.Equal(t, http.StatusOK, send("a").status)
	require.Equal(t, http.StatusOK, send("a").status)
	require.Equal(t, http.StatusTooManyRequests, send("a").status, "idle time refills the burst, no more")

	c.Advance(-5 * time.Second)
	require.Equal(t, http.StatusTooManyRequests, send("a").status, "a clock going back refills nothing")

	// The buckets allow a billionth of a token for float rounding, so a post
	// paced at the rate is never refused for it: 1 ns short of the second
	// is 0.999999999 of a token, taken as one; 2 ns short is not.
	c.Advance(5 * time.Second)
	for range 2 {
		send("c")
		send("d")
	}
	c.Advance(time.Second - 2*time.Nanosecond)
	require.Equal(t, http.StatusTooManyRequests, send("d").status, "2 ns short")
	c.Advance(time.Nanosecond)
	require.Equal(t, http.StatusOK, send("c").status, "1 ns short: within the rounding allowance")
	require.Equal(t, http.StatusTooManyRequests, send("c").status, "and that token is spent")
	require.Equal(t, []int{429, 429, 429, 429, 429, 429, 429}, s.Refused())
}

// TestAnswerReplacesTheNormalAnswer: a canned answer carries its status,
// body and headers (given in pairs; an odd last name is ignored), typed
// JSON when the body is an object and HTML otherwise unless a
// Content-Type is given; it is counted as refused.
func TestAnswerReplacesTheNormalAnswer(t *testing.T) {
	t.Parallel()
	s, _ := slack(t)
	s.Answer("arch", http.StatusGone, "channel_is_archived", "X-One", "1", "X-Two", "2", "X-Odd")
	s.Answer("json", http.StatusInternalServerError, `{"ok":false}`)
	s.Answer("typed", http.StatusForbidden, "nope", "Content-Type", "text/plain")
	a := postJSON(t, s.Receiver, s.URL()+"/services/T/B/arch", `{"text":"hi"}`)
	require.Equal(t, http.StatusGone, a.status)
	require.Equal(t, "channel_is_archived", a.body)
	require.Equal(t, "1", a.header.Get("X-One"))
	require.Equal(t, "2", a.header.Get("X-Two"))
	require.NotContains(t, a.header, "X-Odd")
	require.Equal(t, "text/html", a.header.Get("Content-Type"))
	a = postJSON(t, s.Receiver, s.URL()+"/services/T/B/json", `not even json`)
	require.Equal(t, http.StatusInternalServerError, a.status, "the canned answer comes before the body's checks")
	require.Equal(t, "application/json", a.header.Get("Content-Type"))
	a = postJSON(t, s.Receiver, s.URL()+"/services/T/B/typed", `{"text":"hi"}`)
	require.Equal(t, "text/plain", a.header.Get("Content-Type"))
	require.Equal(t, []int{410, 500, 403}, s.Refused())
	require.Empty(t, s.Received())
}

// TestDiscordAcceptsWhatDiscordAccepts: content up to 2,000 characters
// (not bytes), embeds up to 10, or both; 204, or 200 with the message for
// ?wait=true; the rate-limit headers on each answer.
func TestDiscordAcceptsWhatDiscordAccepts(t *testing.T) {
	t.Parallel()
	d, c := discord(t)
	url := d.URL() + d.Create("41", "tok")
	require.Equal(t, "/api/webhooks/41/tok", strings.TrimPrefix(url, d.URL()))
	embeds10 := `[` + strings.TrimSuffix(strings.Repeat(`{"title":"t"},`, 10), ",") + `]`
	for _, body := range []string{
		`{"content":"hi"}`,
		`{"content":"` + strings.Repeat("é", 2000) + `"}`,
		`{"embeds":` + embeds10 + `}`,
		`{"content":"hi","embeds":[{"title":"t"}],"username":"herald"}`,
	} {
		c.Advance(time.Second)
		a := postJSON(t, d.Receiver, url, body)
		require.Equal(t, http.StatusNoContent, a.status, body[:min(len(body), 40)])
		require.Empty(t, a.body)
	}
	c.Advance(time.Minute)
	a := postJSON(t, d.Receiver, url+"?wait=true", `{"content":"hi"}`)
	require.Equal(t, http.StatusOK, a.status)
	require.Equal(t, "application/json", a.header.Get("Content-Type"))
	var msg struct {
		ID        string `json:"id"`
		WebhookID string `json:"webhook_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.body), &msg))
	require.Equal(t, "41", msg.WebhookID)
	require.NotEmpty(t, msg.ID)
	require.Equal(t, "5", a.header.Get("X-RateLimit-Limit"))
	require.Equal(t, "4", a.header.Get("X-RateLimit-Remaining"))
	require.Equal(t, "0.400", a.header.Get("X-RateLimit-Reset-After"))
	require.Equal(t, "b-41", a.header.Get("X-RateLimit-Bucket"))
	got := d.Received()
	require.Len(t, got, 5)
	require.Equal(t, "41", got[0].Hook)
	require.Empty(t, d.Refused())
}

// TestDiscordCompatibleEndpoints: /github (Execute GitHub-Compatible
// Webhook) answers 204 to a body that is no GitHub event and posts nothing
// (discord-api-docs issues 6957 and 7385); /slack (Execute Slack-Compatible
// Webhook) reads Slack's text, answers 200 "ok", and refuses a body with
// Discord's content only as empty (50006).
func TestDiscordCompatibleEndpoints(t *testing.T) {
	t.Parallel()
	d, c := discord(t)
	url := d.URL() + d.Create("42", "tok")
	a := postJSON(t, d.Receiver, url+"/github", `{"content":"hi"}`)
	require.Equal(t, http.StatusNoContent, a.status)
	require.Empty(t, d.Received(), "nothing posted")
	c.Advance(time.Second)
	a = postJSON(t, d.Receiver, url+"/slack", `{"content":"hi"}`)
	require.Equal(t, http.StatusBadRequest, a.status)
	require.Contains(t, a.body, "50006")
	c.Advance(time.Second)
	a = postJSON(t, d.Receiver, d.URL()+"/api/v10"+strings.TrimPrefix(url, d.URL()+"/api")+"/slack", `{"text":"hi"}`)
	require.Equal(t, http.StatusOK, a.status)
	require.Equal(t, "ok", a.body)
	got := d.Received()
	require.Len(t, got, 1)
	require.Equal(t, "/api/v10/webhooks/42/tok/slack", got[0].Path)
}

// TestDiscordRefusesWhatDiscordRefuses: Discord's JSON errors, each with
// its status and code.
func TestDiscordRefusesWhatDiscordRefuses(t *testing.T) {
	t.Parallel()
	d, c := discord(t)
	url := d.URL() + d.Create("41", "tok")
	embeds11 := `[` + strings.TrimSuffix(strings.Repeat(`{"title":"t"},`, 11), ",") + `]`
	type discordErr struct {
		Message string `json:"message"`
		Code    int    `json:"code"`
	}
	check := func(a answer, status, code int, what string) {
		t.Helper()
		require.Equal(t, status, a.status, what)
		require.Equal(t, "application/json", a.header.Get("Content-Type"), what)
		var e discordErr
		require.NoError(t, json.Unmarshal([]byte(a.body), &e), what)
		require.Equal(t, code, e.Code, what)
		require.NotEmpty(t, e.Message, what)
	}
	for _, tc := range []struct {
		ctype, body string
		code        int
	}{
		{"text/plain", `{"content":"hi"}`, 50109},
		{"application/json", `{"content":`, 50109},
		{"application/json", `null`, 50109},
		{"application/json", `{"content":5}`, 50035},
		{"application/json", `{"embeds":{}}`, 50035},
		{"application/json", `{"embeds":` + embeds11 + `}`, 50035},
		{"application/json", `{"content":"` + strings.Repeat("x", 2001) + `"}`, 50035},
		{"application/json", `{"content":""}`, 50006},
		{"application/json", `{"text":"slack's field"}`, 50006},
	} {
		c.Advance(time.Second)
		check(post(t, d.Receiver, http.MethodPost, url, tc.ctype, tc.body), http.StatusBadRequest, tc.code, tc.body[:min(len(tc.body), 40)])
	}
	check(postJSON(t, d.Receiver, d.URL()+"/api/webhooks/99/tok", `{"content":"hi"}`), http.StatusNotFound, 10015, "unknown id")
	check(postJSON(t, d.Receiver, d.URL()+"/api/webhooks/41/wrong", `{"content":"hi"}`), http.StatusUnauthorized, 50027, "wrong token")
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/api/webhooks/41/tok"},
		{http.MethodPost, "/api/webhooks/41"},
		{http.MethodPost, "/api/webhooks/41/tok/teams"},
		{http.MethodPost, "/v9/webhooks/41/tok"},
		{http.MethodPost, "/api/hooks/41/tok"},
	} {
		check(post(t, d.Receiver, tc.method, d.URL()+tc.path, "application/json", `{"content":"hi"}`), http.StatusNotFound, 0, tc.method+" "+tc.path)
	}
	d.Answer("41", http.StatusForbidden, `{"message": "Missing Access", "code": 50001}`)
	check(postJSON(t, d.Receiver, url, `{"content":"hi"}`), http.StatusForbidden, 50001, "canned")
	d.Delete("41")
	check(postJSON(t, d.Receiver, url, `{"content":"hi"}`), http.StatusNotFound, 10015, "deleted")
	require.Empty(t, d.Received())
	require.Len(t, d.Refused(), 18)
}

// TestDiscordRate: 5 posts per 2 seconds per webhook, counted down in
// X-RateLimit-Remaining with X-RateLimit-Reset-After (seconds in every
// version); beyond it 429 with retry_after and Retry-After in the unit of
// the version the path runs on: milliseconds on the default version (6,
// a path without one) and 7, seconds from 8 on (retry_after fractional,
// Retry-After rounded up). Discord's change log, "API and Gateway V8".
func TestDiscordRate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prefix     string
		retryAfter string  // the header of a 300 ms wait
		body       float64 // retry_after of a 300 ms wait
	}{
		{"/api/webhooks/", "300", 300},
		{"/api/v6/webhooks/", "300", 300},
		{"/api/v7/webhooks/", "300", 300},
		{"/api/v8/webhooks/", "1", 0.3},
		{"/api/v9/webhooks/", "1", 0.3},
		{"/api/v10/webhooks/", "1", 0.3},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			t.Parallel()
			d, c := discord(t)
			url := d.URL() + strings.Replace(d.Create("7", "tok"), "/api/webhooks/", tc.prefix, 1)
			for i := range 5 {
				a := postJSON(t, d.Receiver, url, `{"content":"hi"}`)
				require.Equal(t, http.StatusNoContent, a.status, i)
				require.Equal(t, fmt.Sprint(4-i), a.header.Get("X-RateLimit-Remaining"), i)
				require.Equal(t, fmt.Sprintf("%.3f", 0.4*float64(i+1)), a.header.Get("X-RateLimit-Reset-After"), i)
			}
			c.Advance(100 * time.Millisecond)
			a := postJSON(t, d.Receiver, url, `{"content":"hi"}`)
			require.Equal(t, http.StatusTooManyRequests, a.status)
			require.Equal(t, "0", a.header.Get("X-RateLimit-Remaining"))
			require.Equal(t, "0.300", a.header.Get("X-RateLimit-Reset-After"))
			require.Equal(t, tc.retryAfter, a.header.Get("Retry-After"))
			var e struct {
				RetryAfter float64 `json:"retry_after"`
				Global     bool    `json:"global"`
			}
			require.NoError(t, json.Unmarshal([]byte(a.body), &e))
			require.InDelta(t, tc.body, e.RetryAfter, 1e-9)
			require.False(t, e.Global)
			c.Advance(300 * time.Millisecond)
			a = postJSON(t, d.Receiver, url, `{"content":"hi"}`)
			require.Equal(t, http.StatusNoContent, a.status, "one token back after 400 ms")
			require.Equal(t, "0", a.header.Get("X-RateLimit-Remaining"))
			c.Advance(399 * time.Millisecond)
			require.Equal(t, http.StatusTooManyRequests, postJSON(t, d.Receiver, url, `{"content":"hi"}`).status, "a millisecond short of the next")
			got := d.Received()
			require.Equal(t, strings.TrimSuffix(tc.prefix, "/")+"/7/tok", got[len(got)-1].Path)
		})
	}
}

// TestDiscordVersions: versions 3 to 5 are discontinued (400), versions
// Discord never had are not found (404), as the API Reference's table says.
func TestDiscordVersions(t *testing.T) {
	t.Parallel()
	d, _ := discord(t)
	d.Create("7", "tok")
	for path, want := range map[string]int{
		"/api/v3/webhooks/7/tok": http.StatusBadRequest, "/api/v5/webhooks/7/tok": http.StatusBadRequest,
		"/api/v1/webhooks/7/tok": http.StatusNotFound, "/api/v11/webhooks/7/tok": http.StatusNotFound,
		"/api/vx/webhooks/7/tok": http.StatusNotFound, "/api/v10/webhooks/7/tok": http.StatusNoContent,
	} {
		require.Equal(t, want, postJSON(t, d.Receiver, d.URL()+path, `{"content":"hi"}`).status, path)
	}
}

// TestDiscordBan: while banned, every request, to any webhook or none, is
// answered 429 with Cloudflare's body and no X-RateLimit-* header
// (discord-api-docs issue 5810).
func TestDiscordBan(t *testing.T) {
	t.Parallel()
	d, _ := discord(t)
	url := d.URL() + d.Create("7", "tok")
	for _, body := range []string{chattest.DiscordBanJSON, chattest.DiscordBanHTML} {
		d.Ban(body)
		for _, u := range []string{url, d.URL() + "/api/v10/webhooks/8/other"} {
			a := postJSON(t, d.Receiver, u, `{"content":"hi"}`)
			require.Equal(t, http.StatusTooManyRequests, a.status)
			require.Equal(t, body, a.body)
			for name := range a.header {
				require.False(t, strings.HasPrefix(name, "X-Ratelimit-"), name)
			}
		}
	}
	d.Unban()
	require.Equal(t, http.StatusNoContent, postJSON(t, d.Receiver, url, `{"content":"hi"}`).status)
}

// teamsCard is a message activity with one Adaptive Card.
const teamsCard = `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard","body":[]}}]}`

// TestTeamsAcceptsWhatTeamsAccepts: a workflow takes a message activity of
// Adaptive Cards (202); a legacy webhook takes the same or a MessageCard
// with a summary or text (200 "1"); a body of exactly 28 KB goes through.
func TestTeamsAcceptsWhatTeamsAccepts(t *testing.T) {
	t.Parallel()
	tm, c := teams(t)
	flow := tm.URL() + tm.Create("wf1", "sig1")
	require.Contains(t, flow, "/workflows/wf1/triggers/manual/paths/invoke?")
	require.True(t, strings.HasSuffix(flow, "&sig=sig1"))
	a := postJSON(t, tm.Receiver, flow, teamsCard)
	require.Equal(t, http.StatusAccepted, a.status)
	require.Empty(t, a.body)
	two := `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard"}},{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard"}}]}`
	require.Equal(t, http.StatusAccepted, postJSON(t, tm.Receiver, flow, two).status)

	legacy := tm.URL() + "/webhookb2/g@t/IncomingWebhook/x/y"
	for _, body := range []string{
		teamsCard,
		`{"@type":"MessageCard","text":"hi"}`,
		`{"@type":"MessageCard","summary":"hi","sections":[]}`,
	} {
		c.Advance(time.Second)
		a = postJSON(t, tm.Receiver, legacy, body)
		require.Equal(t, http.StatusOK, a.status, body)
		require.Equal(t, "1", a.body)
		require.Equal(t, "text/plain", a.header.Get("Content-Type"))
	}
	c.Advance(time.Second)
	pad := 28<<10 - len(teamsCard) + len(`"body":[]`) - len(`"body":""`)
	big := strings.Replace(teamsCard, `"body":[]`, `"body":"`+strings.Repeat("x", pad)+`"`, 1)
	require.Len(t, big, 28<<10)
	require.Equal(t, http.StatusAccepted, postJSON(t, tm.Receiver, flow, big).status)
	got := tm.Received()
	require.Len(t, got, 6)
	require.Equal(t, "wf1", got[0].Hook)
	require.Equal(t, "webhookb2/g@t/IncomingWebhook/x/y", got[2].Hook)
	require.Empty(t, tm.Refused())
}

// TestTeamsRefusesWhatTeamsRefuses: each shape Teams refuses, as a Logic
// Apps JSON error for a workflow and as text for a legacy webhook; an
// unknown, disabled or wrongly signed workflow; a body over 28 KB.
func TestTeamsRefusesWhatTeamsRefuses(t *testing.T) {
	t.Parallel()
	tm, c := teams(t)
	flow := tm.URL() + tm.Create("wf1", "sig1")
	legacy := tm.URL() + "/webhookb2/g/IncomingWebhook/x/y"
	logic := func(a answer, status int, code, what string) {
		t.Helper()
		require.Equal(t, status, a.status, what)
		require.Equal(t, "application/json", a.header.Get("Content-Type"), what)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(a.body), &e), what)
		require.Equal(t, code, e.Error.Code, what)
		require.NotEmpty(t, e.Error.Message, what)
	}
	card := func(att string) string { return `{"type":"message","attachments":[` + att + `]}` }
	for _, body := range []string{
		`{"text":"legacy text"}`,
		`null`,
		`{"type":"event","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard"}}]}`,
		`{"type":"message"}`,
		card(``),
		`{"type":"message","attachments":{}}`,
		card(`{"contentType":"application/vnd.microsoft.card.hero","content":{"type":"AdaptiveCard"}}`),
		card(`{"contentType":"application/vnd.microsoft.card.adaptive"}`),
		card(`{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"MessageCard"}}`),
		card(`{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard"}},{"contentType":"application/vnd.microsoft.card.adaptive","content":{}}`),
		`{"@type":"MessageCard","text":"a workflow takes no MessageCard"}`,
	} {
		c.Advance(time.Second)
		logic(postJSON(t, tm.Receiver, flow, body), http.StatusBadRequest, "InvalidRequestContent", body)
		a := postJSON(t, tm.Receiver, legacy, body)
		if strings.Contains(body, "@type") {
			require.Equal(t, http.StatusOK, a.status, body)
			continue
		}
		require.Equal(t, http.StatusBadRequest, a.status, body)
		require.Equal(t, "Bad payload received by generic incoming webhook.", a.body, body)
	}
	logic(post(t, tm.Receiver, http.MethodPost, flow, "text/plain", teamsCard), http.StatusBadRequest, "InvalidRequestContent", "not JSON")
	a := postJSON(t, tm.Receiver, legacy, `{"@type":"SwiftCard","text":"hi"}`)
	require.Equal(t, "Bad payload received by generic incoming webhook.", a.body, "another @type is no MessageCard")
	for _, body := range []string{`{"@type":"MessageCard"}`, `{"@type":"MessageCard","text":"","summary":""}`, `{"@type":"MessageCard","text":5}`} {
		a := postJSON(t, tm.Receiver, legacy, body)
		require.Equal(t, http.StatusBadRequest, a.status, body)
		require.Equal(t, "Summary or Text is required.", a.body, body)
	}

	c.Advance(time.Second)
	big := strings.Replace(teamsCard, `"body":[]`, `"body":"`+strings.Repeat("x", 28<<10)+`"`, 1)
	logic(postJSON(t, tm.Receiver, flow, big), http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "over 28 KB")
	logic(postJSON(t, tm.Receiver, strings.Replace(flow, "sig1", "bad", 1), teamsCard), http.StatusUnauthorized, "DirectApiInvalidAuthorizationSignature", "wrong sig")
	logic(postJSON(t, tm.Receiver, strings.Replace(flow, "wf1", "wf2", 1), teamsCard), http.StatusNotFound, "WorkflowNotFound", "unknown workflow")
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, strings.TrimPrefix(flow, tm.URL())},
		{http.MethodPost, "/workflows/wf1/triggers/manual/paths"},
		{http.MethodPost, "/workflows/wf1/triggers/manual/paths/invoke/x"},
		{http.MethodPost, "/flows/wf1/triggers/manual/paths/invoke"},
		{http.MethodPost, "/workflows/wf1/triggers/other/paths/invoke"},
		{http.MethodPost, "/webhookb2"},
	} {
		logic(post(t, tm.Receiver, tc.method, tm.URL()+tc.path, "application/json", teamsCard), http.StatusNotFound, "WorkflowNotFound", tc.method+" "+tc.path)
	}
	tm.Answer("wf1", http.StatusBadGateway, `{"error":{"code":"BadGateway","message":"x"}}`)
	logic(postJSON(t, tm.Receiver, flow, teamsCard), http.StatusBadGateway, "BadGateway", "canned")
	tm.Disable("wf1")
	logic(postJSON(t, tm.Receiver, flow, teamsCard), http.StatusNotFound, "WorkflowNotFound", "disabled")
	got := tm.Received()
	require.Len(t, got, 1, "only the MessageCard, on the legacy webhook")
	require.Equal(t, "webhookb2/g/IncomingWebhook/x/y", got[0].Hook)
}

// TestTeamsRate: a workflow takes 4 posts in any second, then 429
// WorkflowRequestsThrottled with Retry-After; a legacy webhook the rows of
// "Rate limiting for connectors", each in a sliding span, then a 200 with
// Teams' 429 in its text.
func TestTeamsRate(t *testing.T) {
	t.Parallel()
	tm, c := teams(t)
	flow := tm.URL() + tm.Create("wf", "s")
	for i := range 4 {
		require.Equal(t, http.StatusAccepted, postJSON(t, tm.Receiver, flow, teamsCard).status, i)
		c.Advance(200 * time.Millisecond)
	}
	a := postJSON(t, tm.Receiver, flow, teamsCard)
	require.Equal(t, http.StatusTooManyRequests, a.status, "the fifth within a second")
	require.Equal(t, "1", a.header.Get("Retry-After"))
	require.Contains(t, a.body, "WorkflowRequestsThrottled")
	c.Advance(199 * time.Millisecond)
	require.Equal(t, http.StatusTooManyRequests, postJSON(t, tm.Receiver, flow, teamsCard).status, "still within the first post's second")
	c.Advance(time.Millisecond)
	require.Equal(t, http.StatusAccepted, postJSON(t, tm.Receiver, flow, teamsCard).status, "a second after the first")
	require.Equal(t, []int{429, 429}, tm.Refused())

	legacy := tm.URL() + "/webhookb2/g/IncomingWebhook/x/y"
	post := func() answer { return postJSON(t, tm.Receiver, legacy, teamsCard) }
	for i := range 60 { // 60 in 30 s, 4 a second
		require.Equal(t, "1", post().body, i)
		c.Advance(250 * time.Millisecond)
	}
	a = post()
	require.Equal(t, http.StatusOK, a.status)
	require.Equal(t, chattest.TeamsLegacyThrottled, a.body, "the 61st within 30 s")
	c.Advance(15 * time.Second) // 30 s after the first
	for i := range 40 {         // 100 in the hour
		require.Equal(t, "1", post().body, i)
		c.Advance(time.Second)
	}
	require.Equal(t, chattest.TeamsLegacyThrottled, post().body, "the 101st within the hour")
	c.Advance(time.Hour)
	require.Equal(t, "1", post().body, "an hour after the first")
}

// TestRouteSendsEachServiceToItsReceiver: Route points a chat body's URL
// at its service's receiver, path and query kept, creating the Discord
// webhook or Teams workflow it names, so that a post to the routed URL is
// accepted; other bodies are returned unchanged.
func TestRouteSendsEachServiceToItsReceiver(t *testing.T) {
	t.Parallel()
	rs := chattest.NewReceivers()
	t.Cleanup(rs.Close)
	routed := func(body string) string {
		var m struct {
			Chat struct{ URL string } `json:"chat"`
		}
		require.NoError(t, json.Unmarshal([]byte(rs.Route(body)), &m))
		return m.Chat.URL
	}
	slackURL := routed(`{"chat":{"service":"slack","url":"https://hooks.slack.com/services/T0/B0/tok"}}`)
	require.Equal(t, rs.Slack.URL()+"/services/T0/B0/tok", slackURL)
	require.Equal(t, http.StatusOK, postJSON(t, rs.Slack.Receiver, slackURL, `{"text":"hi"}`).status)

	discordURL := routed(`{"chat":{"service":"discord","url":"https://discord.com/api/webhooks/123/tok"}}`)
	require.Equal(t, rs.Discord.URL()+"/api/webhooks/123/tok", discordURL)
	require.Equal(t, http.StatusNoContent, postJSON(t, rs.Discord.Receiver, discordURL, `{"content":"hi"}`).status)
	odd := routed(`{"chat":{"service":"discord","url":"https://discord.com/api/webhooks/124"}}`)
	require.Equal(t, http.StatusNotFound, postJSON(t, rs.Discord.Receiver, odd+"/tok", `{"content":"hi"}`).status, "a path without a token creates nothing")

	flow := "https://x.logic.azure.com/workflows/wf9/triggers/manual/paths/invoke?api-version=2016-06-01&sig=s9"
	teamsURL := routed(`{"chat":{"service":"teams","url":"` + flow + `"}}`)
	require.Equal(t, rs.Teams.URL()+"/workflows/wf9/triggers/manual/paths/invoke?api-version=2016-06-01&sig=s9", teamsURL)
	require.Equal(t, http.StatusAccepted, postJSON(t, rs.Teams.Receiver, teamsURL, teamsCard).status)
	legacyURL := routed(`{"chat":{"service":"teams","url":"https://x.webhook.office.com/webhookb2/a/IncomingWebhook/b/c"}}`)
	require.Equal(t, rs.Teams.URL()+"/webhookb2/a/IncomingWebhook/b/c", legacyURL, "no query: no ?")
	require.Equal(t, http.StatusOK, postJSON(t, rs.Teams.Receiver, legacyURL, teamsCard).status)
	require.Equal(t, http.StatusNotFound, postJSON(t, rs.Teams.Receiver, rs.Teams.URL()+"/workflows/webhookb2/triggers/manual/paths/invoke", teamsCard).status, "a legacy URL creates no workflow")
	short := routed(`{"chat":{"service":"teams","url":"https://x.logic.azure.com/workflows"}}`)
	require.Equal(t, rs.Teams.URL()+"/workflows", short)

	for _, body := range []string{
		`{"chat":{"service":"matrix","url":"https://matrix.example.com/hook"}}`,
		`{"chat":{"service":"slack","url":"https://hooks.slack.com/\x7f"}}`,
		`{"type":"webhook","url":"https://example.com"}`,
		`not json`,
	} {
		require.Equal(t, body, rs.Route(body))
	}
}

// TestTLSConfigTrustsTheReceivers: a client built from Receivers.TLSConfig
// (or a receiver's own) reaches every receiver; one without it does not.
func TestTLSConfigTrustsTheReceivers(t *testing.T) {
	t.Parallel()
	rs := chattest.NewReceivers()
	t.Cleanup(rs.Close)
	for _, cfg := range []*tls.Config{rs.TLSConfig(), rs.Teams.TLSConfig()} {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		for _, u := range []string{rs.Slack.URL(), rs.Discord.URL(), rs.Teams.URL()} {
			resp, err := client.Post(u, "application/json", strings.NewReader(`{}`))
			require.NoError(t, err, u)
			resp.Body.Close()
		}
	}
	_, err := (&http.Client{Transport: &http.Transport{}}).Get(rs.Slack.URL())
	require.ErrorContains(t, err, "certificate")
	rs.Slack.Close()
	_, err = rs.Discord.TLSClient().Get(rs.Slack.URL())
	require.Error(t, err, "a closed receiver answers nothing")
}
