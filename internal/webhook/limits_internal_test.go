package webhook

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
)

// TestValidateRangeEnds: the ends of the timeout and response-size ranges
// are valid, one step past them is not.
func TestValidateRangeEnds(t *testing.T) {
	t.Parallel()
	base := Config{Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}.WithDefaults()
	for name, tc := range map[string]struct {
		mutate func(*Config)
		ok     bool
	}{
		"timeout at the minimum":        {func(c *Config) { c.Timeout = outbound.MinTimeout }, true},
		"timeout under the minimum":     {func(c *Config) { c.Timeout = outbound.MinTimeout - time.Nanosecond }, false},
		"timeout at the maximum":        {func(c *Config) { c.Timeout = outbound.MaxTimeout }, true},
		"timeout over the maximum":      {func(c *Config) { c.Timeout = outbound.MaxTimeout + time.Nanosecond }, false},
		"one response byte":             {func(c *Config) { c.MaxResponseBytes = 1 }, true},
		"no response bytes":             {func(c *Config) { c.MaxResponseBytes = 0 }, false},
		"response bytes at the limit":   {func(c *Config) { c.MaxResponseBytes = MaxMaxResponseBytes }, true},
		"response bytes over the limit": {func(c *Config) { c.MaxResponseBytes = MaxMaxResponseBytes + 1 }, false},
	} {
		c := base
		tc.mutate(&c)
		if tc.ok {
			require.NoError(t, c.Validate(), name)
		} else {
			require.Error(t, c.Validate(), name)
		}
	}
}

// TestScrubRemovesEverySecretPiece: scrub, the second line of defence for
// texts herald did not write, removes the userinfo, password, path and its
// segments, the query and each value raw and decoded, longest first, and
// any piece of 4 bytes or more; shorter pieces stay.
func TestScrubRemovesEverySecretPiece(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("https://al:pa55word@h.example.com/hook/s3cr3tpath?token=abcd%2Fefgh&x=ab#frag-ment")
	require.NoError(t, err)
	tg := target{u: u}
	for in, want := range map[string]string{
		"echo /hook/s3cr3tpath end": "echo [redacted] end",
		"segment s3cr3tpath":        "segment [redacted]",
		"short hook":                "short [redacted]",
		"password pa55word":         "password [redacted]",
		"userinfo al:pa55word@":     "userinfo [redacted]@",
		"decoded abcd/efgh":         "decoded [redacted]",
		"raw abcd%2Fefgh":           "raw [redacted]",
		"fragment frag-ment":        "fragment [redacted]",
		"tiny ab al x":              "tiny ab al x",
	} {
		require.Equal(t, want, tg.scrub(in), in)
	}
	require.Equal(t, "untouched s3cr3tpath", target{}.scrub("untouched s3cr3tpath"), "no URL, nothing to scrub")
}

// TestTransportErrorSaysTimedOut: a timeout names the attempt timeout;
// other failures do not claim one.
func TestTransportErrorSaysTimedOut(t *testing.T) {
	t.Parallel()
	tg := target{id: "n-1", endpoint: "https://h.example.com"}
	err := tg.transportError(&url.Error{Op: "Post", URL: "https://h.example.com/x", Err: context.DeadlineExceeded}, 3*time.Second)
	require.ErrorContains(t, err, "timed out (attempt timeout 3s)")
	err = tg.transportError(&url.Error{Op: "Post", URL: "https://h.example.com/x", Err: errors.New("connection reset by peer")}, 3*time.Second)
	require.NotContains(t, err.Error(), "timed out")
}

// TestDeriveSecretKeySizeEnds: keys of exactly MinKeyBytes and MaxKeyBytes
// derive; one byte outside either end does not.
func TestDeriveSecretKeySizeEnds(t *testing.T) {
	t.Parallel()
	secret := func(n int) string { return "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n)) }
	for n, ok := range map[int]bool{MinKeyBytes: true, MaxKeyBytes: true, MinKeyBytes - 1: false, MaxKeyBytes + 1: false} {
		_, err := DeriveSecret(secret(n), "https://h.example.com/x")
		if ok {
			require.NoError(t, err, n)
		} else {
			require.Error(t, err, n)
		}
	}
}

// TestOriginDropsOnlyTheSchemesDefaultPort: 443 is left out of an https
// origin and 80 of an http one; any other port, or the other scheme's
// default, stays.
func TestOriginDropsOnlyTheSchemesDefaultPort(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://h.example.com:443/x": "https://h.example.com",
		"http://h.example.com:80/x":   "http://h.example.com",
		"https://h.example.com:80/x":  "https://h.example.com:80",
		"http://h.example.com:443/x":  "http://h.example.com:443",
		"https://h.example.com:8443":  "https://h.example.com:8443",
	} {
		got, err := Origin(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
}
