package endpointsend

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
)

// TestScrub: a reason keeps the host but none of the endpoint's URL path
// or query (a chat URL's token), header values or keys, and is bounded.
func TestScrub(t *testing.T) {
	t.Parallel()
	ep := endpoint.Endpoint{
		URL:     "https://hooks.slack.com/services/T1/B1/xTokenABC?x=qSecret#frag",
		Headers: map[string]string{"Authorization": "Bearer hdrSecret"},
		Secrets: []endpoint.Secret{{Key: []byte("keySecretBytes")}},
	}
	got := scrub("POST https://hooks.slack.com/services/T1/B1/xTokenABC?x=qSecret failed; echo: x=qSecret Bearer hdrSecret keySecretBytes /services/T1/B1/xTokenABC", ep)
	for _, s := range []string{"xTokenABC", "qSecret", "hdrSecret", "keySecretBytes"} {
		require.NotContains(t, got, s)
	}
	require.Contains(t, got, "hooks.slack.com")
	require.LessOrEqual(t, len(scrub(strings.Repeat("é", 2000), ep)), maxReasonBytes)
}

// TestScrubLongestFirst: a secret that holds another (a header value that
// quotes the URL's query value, with more after it) is replaced whole,
// never left half in view after the shorter one was replaced within it,
// whichever of them comes first.
func TestScrubLongestFirst(t *testing.T) {
	t.Parallel()
	ep := endpoint.Endpoint{
		URL:     "https://hooks.acme.example/h?token=tok-1234",
		Headers: map[string]string{"Authorization": "Bearer tok-1234-SECRETTAIL"},
	}
	got := scrub("echo: Authorization: Bearer tok-1234-SECRETTAIL; token=tok-1234", ep)
	require.Equal(t, "echo: Authorization: [redacted]; [redacted]", got)
}

// TestScrubShortValues: a value of 4 bytes or more is replaced; a shorter
// one (the path "/", a header "on" or "503") is not: replacing it would
// garble the text and hide little.
func TestScrubShortValues(t *testing.T) {
	t.Parallel()
	ep := endpoint.Endpoint{
		URL:     "https://hooks.acme.example/",
		Headers: map[string]string{"X-Tag": "Q7x9", "X-Debug": "on", "X-Code": "503"},
	}
	got := scrub("POST https://hooks.acme.example/ answered 503 (debug on, tag Q7x9)", ep)
	require.Equal(t, "POST https://hooks.acme.example/ answered 503 (debug on, tag [redacted])", got)
}
