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
