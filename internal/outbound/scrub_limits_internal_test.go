package outbound

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCredentialFormsFromTheShortestScrubbed: a credential of exactly
// minRedacted bytes gets its forms; a shorter one none.
func TestCredentialFormsFromTheShortestScrubbed(t *testing.T) {
	t.Parallel()
	c := strings.Repeat("k", minRedacted)
	require.Contains(t, credentialForms(c), c)
	require.Nil(t, credentialForms(c[1:]))
}

// TestASCIIEscapesStartAtU0080: DEL stays as it is; U+0080, the first
// character beyond ASCII, becomes a \u escape, as does one beyond the BMP
// (a surrogate pair).
func TestASCIIEscapesStartAtU0080(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a\x7f\\u0080\\u00e9\\ud83d\\ude00", asciiEscapes("a\x7f\u0080é😀"))
}

// TestLowerHexEscapes: every %XX escape in lower case, A and F included; a
// "%" without two characters after it is left alone.
func TestLowerHexEscapes(t *testing.T) {
	t.Parallel()
	require.Equal(t, "%af%fa%2f%41", lowerHexEscapes("%AF%FA%2F%41"))
	require.Equal(t, "x%2fy%4", lowerHexEscapes("x%2Fy%4"))
	require.Equal(t, "x%", lowerHexEscapes("x%"))
	require.Equal(t, "GZ%gz", lowerHexEscapes("GZ%gz"), "only escapes, only A–F")
}

// TestRedactLongestFirst: a credential that contains another is replaced
// whole, whatever order they come in.
func TestRedactLongestFirst(t *testing.T) {
	t.Parallel()
	for _, parts := range [][]string{{"abcd", "abcdefgh"}, {"abcdefgh", "abcd"}, {"cdef", "abcd", "abcdefgh", "efgh"}} {
		got := redact("xx abcdefgh xx", parts)
		require.Equal(t, "xx [redacted] xx", got, "%q", parts)
	}
}

// TestRedactCutPrefixOfTheShortestScrubbed: a text that ends in the first
// minRedacted bytes of a credential has them redacted; fewer are kept.
func TestRedactCutPrefixOfTheShortestScrubbed(t *testing.T) {
	t.Parallel()
	require.Equal(t, "token [redacted]", redact("token abcd", []string{"abcdefgh"}))
	require.Equal(t, "token [redacted]…", redact("token abcd…", []string{"abcdefgh"}))
	require.Equal(t, "token abc", redact("token abc", []string{"abcdefgh"}))
}
