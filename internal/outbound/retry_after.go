package outbound

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/backoff"
)

// MaxRetryAfter is the longest delay a Retry-After header can ask for: 12
// hours, the SQS limit on a message's visibility timeout
// (backoff.MaxVisibilityTimeout). Longer requests are cut to it.
const MaxRetryAfter = backoff.MaxVisibilityTimeout

// ParseRetryAfter reads a Retry-After header value (RFC 9110 §10.2.3): either
// delta-seconds ("120") or an HTTP-date in any of the three formats of RFC
// 9110 §5.6.7 ("Wed, 21 Oct 2015 07:28:00 GMT"), taken relative to now.
//
// It returns the delay, at most [MaxRetryAfter], and true; a date at or
// before now gives 0 and true. It returns 0 and false for an empty or
// malformed value, including negative or fractional seconds.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > uint64(MaxRetryAfter/time.Second) { // only overflow fails
			return MaxRetryAfter, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), MaxRetryAfter), true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
