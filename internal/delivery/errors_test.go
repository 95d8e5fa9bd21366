package delivery_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	base := errors.New("410 Gone")
	tests := []struct {
		name       string
		err        error
		permanent  bool
		class      delivery.Class
		retryAfter time.Duration
	}{
		{"permanent", delivery.Permanent("webhook_gone", base), true, "webhook_gone", 0},
		{"wrapped permanent", fmt.Errorf("send: %w", delivery.Permanent("webhook_gone", base)), true, "webhook_gone", 0},
		{"transient", delivery.Transient("webhook_http_5xx", base), false, "webhook_http_5xx", 0},
		{"transient with retry-after", &delivery.TransientError{Class: "webhook_http_429", RetryAfter: time.Minute, Err: base}, false, "webhook_http_429", time.Minute},
		{"unforeseen error is retried", base, false, delivery.ClassUnknown, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, c, ra := delivery.Classify(tt.err)
			require.Equal(t, tt.permanent, p)
			require.Equal(t, tt.class, c)
			require.Equal(t, tt.retryAfter, ra)
			require.ErrorIs(t, tt.err, base)
		})
	}
}

func TestDetailDropsTheClassPrefix(t *testing.T) {
	t.Parallel()
	err := delivery.Permanent("webhook_gone", errors.New("410 Gone"))
	require.Equal(t, "webhook_gone: 410 Gone", err.Error())
	require.Equal(t, "410 Gone", delivery.Detail(err))
	require.Equal(t, "plain", delivery.Detail(errors.New("plain")))
}

func TestTruncateCutsOnARuneBoundary(t *testing.T) {
	t.Parallel()
	require.Equal(t, "short", delivery.Truncate("short", 5))
	require.Equal(t, "ab…", delivery.Truncate("abcdef", 2))
	require.Equal(t, "a…", delivery.Truncate("aüb", 2), "ü is two bytes: never half of it")
	require.Equal(t, "…", delivery.Truncate("\x80\x80\x80", 2), "no rune starts before the cut: nothing of it is kept")
	require.Equal(t, "…", delivery.Truncate("abc", 0))
}

// TestIsASCII: every byte below 0x80 is ASCII; 0x80 and above (any
// multi-byte UTF-8 sequence, any invalid byte) is not.
func TestIsASCII(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"":                  true,
		"example.com":       true,
		"\x00\x7f":          true,
		"\x80":              false,
		"bücher.example":    false,
		"ｅxample.com":       false, // full-width e
		"ok\xff":            false,
		"mail@example.com":  true,
		"xn--bcher-kva.com": true,
	} {
		require.Equal(t, want, delivery.IsASCII(s), "%q", s)
	}
}

// TestErrorTexts: both error types say their class before the cause.
func TestErrorTexts(t *testing.T) {
	t.Parallel()
	require.Equal(t, "webhook_http_5xx: 503", delivery.Transient("webhook_http_5xx", errors.New("503")).Error())
	require.Equal(t, "webhook_gone: 410", delivery.Permanent("webhook_gone", errors.New("410")).Error())
}
