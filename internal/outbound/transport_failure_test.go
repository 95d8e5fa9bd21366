package outbound_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
)

// TestTransportFailureLooksThroughTheURLError: a plain HTTP server that
// answers an https request is a TLS failure, which net/http reports only
// by the text of the error inside its *url.Error: TransportFailure looks
// through that wrapper (whose text quotes the URL) to sort it.
func TestTransportFailureLooksThroughTheURLError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	client := outbound.NewClient(outbound.ClientConfig{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, strings.Replace(srv.URL, "http://", "https://", 1)+"/secret-path", nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	kind, what := outbound.TransportFailure(err)
	require.Equal(t, outbound.FailureTLS, kind, "error: %v", err)
	require.Equal(t, "TLS failed", what)
}
