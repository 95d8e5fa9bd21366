package chat

import (
	"net/http"
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
