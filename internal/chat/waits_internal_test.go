package chat

import (
	"net/http"
	"net/url"
	"testing"
)

// FuzzDiscordWaits: whatever Discord's headers and 429 body say, the wait
// herald takes from them lies within 0–MaxRetryAfter (a value beyond
// time.Duration's range once overflowed to a negative wait).
func FuzzDiscordWaits(f *testing.F) {
	for _, s := range []string{"0.4", "3.25", "43201", "1e10", "1e400", "Inf", "-Inf", "NaN", "-5", "0x1p40", "9223372036.854775807", ""} {
		f.Add(s, `{"retry_after": `+s+`}`)
	}
	f.Fuzz(func(t *testing.T, resetAfter, body string) {
		h := http.Header{}
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset-After", resetAfter)
		if w := discordBucketWait(h); w < 0 || w > MaxRetryAfter {
			t.Fatalf("X-RateLimit-Reset-After %q: wait %v", resetAfter, w)
		}
		for _, v := range []int{6, 7, 8, 10} {
			h.Set("Retry-After", resetAfter)
			if w := discordRetryAfter(h, []byte(body), v); w < 0 || w > MaxRetryAfter {
				t.Fatalf("v%d 429 Retry-After %q body %q: wait %v", v, resetAfter, body, w)
			}
		}
	})
}

// A Discord URL on the legacy host discordapp.com is posted to discord.com
// (Discord rate-limits discordapp.com globally, discord-api-docs
// discussion 6490), in any case and with a trailing dot; Discord's other
// hosts, and hosts that are not Discord's, keep theirs.
func TestDiscordappComIsPostedToDiscordCom(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://discordapp.com/api/webhooks/1/tok":            "https://discord.com/api/v10/webhooks/1/tok",
		"https://DiscordApp.com./api/v9/webhooks/1/tok?wait=1": "https://discord.com/api/v9/webhooks/1/tok?wait=1",
		"https://discordapp.com:443/api/webhooks/1/tok/slack":  "https://discord.com:443/api/v10/webhooks/1/tok",
		"https://canary.discord.com/api/webhooks/1/tok":        "https://canary.discord.com/api/v10/webhooks/1/tok",
		"https://ptb.discord.com/api/webhooks/1/tok":           "https://ptb.discord.com/api/v10/webhooks/1/tok",
		"https://discord.com/api/webhooks/1/tok":               "https://discord.com/api/v10/webhooks/1/tok",
		"https://127.0.0.1:8443/api/webhooks/1/tok":            "https://127.0.0.1:8443/api/v10/webhooks/1/tok",
		"https://discordapp.com/api/webhooks/1/tok/messages/2": "https://discordapp.com/api/webhooks/1/tok/messages/2",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := discordVersioned(u); got.String() != want {
			t.Errorf("%s: posted to %s, want %s", in, got, want)
		}
	}
}
