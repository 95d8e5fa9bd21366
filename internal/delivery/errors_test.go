package delivery_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"short", 6, "short"},
		{"", 0, ""},
		{"abcdef", 5, "ab…"},
		{"abcdef", 6, "abcdef"},
		{"abcdef", 4, "a…"},
		{"abcdef", 3, "…"},  // the mark alone
		{"abcdef", 2, "ab"}, // below the mark's 3 bytes: cut, unmarked
		{"abcdef", 1, "a"},
		{"abcdef", 0, ""},
		{"abcdef", -1, ""},
		{"", -5, ""},
		{"aüb", 4, "aüb"},
		{"aübc", 4, "a…"},     // ü is two bytes: never half of it
		{"aübcdef", 6, "aü…"}, // 1 + 2 + 3
		{"日本語", 5, "…"},       // no whole rune fits beside the mark
		{"日本語", 2, ""},        // nor without it
		{"日本語", 3, "…"},       // the mark, not 日: the text was cut
		{"日本語テキスト", 6, "日…"},
		{"😀😀", 7, "😀…"},
		{"😀😀", 3, "…"},
		{"😀😀", 2, ""},
		// Invalid UTF-8: each run of bad bytes is one U+FFFD (3 bytes),
		// as a JSON encoder would write it, so the text before it is kept
		// and the result stays within n bytes once encoded.
		{"\x80\x80\x80\x80", 3, "\uFFFD"},
		{"\x80\x80\x80\x80", 2, ""},
		{"a\x80\x80\x80\x80", 4, "a\uFFFD"},
		{"abc\xffxxxxxxxxxx", 10, "abc\uFFFDx…"},
		{"answered 502: " + strings.Repeat("\x80", 300), 64, "answered 502: \uFFFD"},
		{"answered 502: " + strings.Repeat("\xbf", 300) + strings.Repeat("z", 100), 24, "answered 502: \uFFFDzzzz…"},
		{"\xe6\x97", 8, "\uFFFD"}, // a rune cut by its sender
		{"…………", 7, "……"},
	} {
		got := delivery.Truncate(tt.s, tt.n)
		require.Equal(t, tt.want, got, "Truncate(%q, %d)", tt.s, tt.n)
		require.LessOrEqual(t, len(got), max(tt.n, 0), "Truncate(%q, %d) is at most n bytes", tt.s, tt.n)
	}
}

// TestTruncateAtMostNBytes: over every n from -1 to past the end of texts
// of 1- to 4-byte runes, the result is at most n bytes (never negative),
// valid UTF-8 when the text is, and the text itself or a prefix of it with
// or without the mark.
func TestTruncateAtMostNBytes(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"plain ascii text", "ünïcödé ✓ 日本 😀 done", "😀😀😀😀", "a\x80b\xffc", delivery.Ellipsis + delivery.Ellipsis} {
		for n := -1; n <= len(s)+1; n++ {
			got := delivery.Truncate(s, n)
			require.LessOrEqual(t, len(got), max(n, 0), "Truncate(%q, %d)", s, n)
			require.True(t, utf8.ValidString(got), "Truncate(%q, %d) = %q", s, n, got)
			s := strings.ToValidUTF8(s, "\uFFFD")
			if got == s {
				require.LessOrEqual(t, len(s), max(n, 0))
				continue
			}
			prefix := strings.TrimSuffix(got, delivery.Ellipsis)
			require.True(t, strings.HasPrefix(s, prefix), "Truncate(%q, %d) = %q", s, n, got)
			if n >= len(delivery.Ellipsis) {
				require.True(t, strings.HasSuffix(got, delivery.Ellipsis), "a cut is marked when the mark fits: Truncate(%q, %d) = %q", s, n, got)
			}
		}
	}
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
