package outbound

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedactCutCredential: an excerpt cut short in the middle of a
// credential keeps none of its head.
func TestRedactCutCredential(t *testing.T) {
	t.Parallel()
	const secret = "sk_live_0123456789abcdef"
	for _, text := range []string{
		"key=" + secret[:10],
		"key=" + secret[:10] + "…",
		"key=" + secret[:len(secret)-1],
	} {
		got := redact(text, credentialForms(secret))
		require.NotContains(t, got, secret[:4], text)
		require.True(t, strings.HasPrefix(got, "key="+redacted), got)
	}
	require.Equal(t, "key=sk_", redact("key=sk_", credentialForms(secret)), "fewer than 4 bytes of it are kept")
	require.Equal(t, "unrelated text", redact("unrelated text", credentialForms(secret)))
}

// TestBase64InnerFindsTheCredentialInsideLongerBase64: whatever the
// credential's offset in an echoed text, the base64 of that text contains
// one of its inner forms.
func TestBase64InnerFindsTheCredentialInsideLongerBase64(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-PASS-word"
	for prefix := range 6 {
		for suffix := range 3 {
			text := strings.Repeat("x", prefix) + secret + strings.Repeat("y", suffix)
			enc := base64.StdEncoding.EncodeToString([]byte(text))
			found := false
			for _, f := range credentialForms(secret) {
				if len(f) >= 8 && strings.Contains(enc, f) {
					found = true
				}
			}
			require.True(t, found, "prefix %d, suffix %d: %s", prefix, suffix, enc)
			require.Contains(t, redact(enc, credentialForms(secret)), redacted)
		}
	}
}
