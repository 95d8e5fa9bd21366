package outbound_test

import (
	"encoding/base64"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
)

// TestScrubWithoutURL: u may be nil; what the request carried is scrubbed
// all the same.
func TestScrubWithoutURL(t *testing.T) {
	t.Parallel()
	require.Equal(t, "bad key [redacted] given", outbound.Scrub("bad key sk_test_0123456789 given", nil, "sk_test_0123456789"))
}

// TestScrubUserinfo: the URL's user name and password are scrubbed,
// together and alone.
func TestScrubUserinfo(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("https://alice:hunter22@h.example.com/hook")
	require.NoError(t, err)
	require.Equal(t, "denied [redacted]: [redacted] is not [redacted]'s password",
		outbound.Scrub("denied alice:hunter22: hunter22 is not alice's password", u))
}

// TestScrubDecodedQueryValue: a query value is scrubbed also as its
// percent-decoded text and that text's encodings (here base64), as a
// receiver that decoded the query echoes it.
func TestScrubDecodedQueryValue(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("https://h.example.com/hook?token=s3cr3t%2Bvalue")
	require.NoError(t, err)
	b64 := base64.StdEncoding.EncodeToString([]byte("s3cr3t+value"))
	require.Equal(t, "token [redacted] rejected ([redacted])",
		outbound.Scrub("token s3cr3t+value rejected ("+b64+")", u))
}

// TestScrubFromFourBytes: a credential of 4 bytes, the shortest scrubbed,
// is scrubbed; one of 3 bytes is kept.
func TestScrubFromFourBytes(t *testing.T) {
	t.Parallel()
	require.Equal(t, "echo [redacted] here", outbound.Scrub("echo wxyz here", nil, "wxyz"))
	require.Equal(t, "echo xyz here", outbound.Scrub("echo xyz here", nil, "xyz"))
}

// TestScrubHTMLEscapedJSON: a credential echoed in JSON as encoding/json
// writes it by default, "<", ">" and "&" as \u escapes, is scrubbed.
func TestScrubHTMLEscapedJSON(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"error":"key k<e>y&secret rejected"}`,
		`{"error":"key k\u003ce\u003ey\u0026secret rejected"}`,
	} {
		require.Equal(t, `{"error":"key [redacted] rejected"}`, outbound.Scrub(body, nil, "k<e>y&secret"), body)
	}
}
