package outbound_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
)

// TestClientUsesTheGivenTLSConfig: a ClientConfig.TLSClientConfig is the
// one the client's TLS handshakes use: with the test server's certificate
// as its only root the request succeeds (the system roots know no such
// certificate). It is cloned, never modified: the transport adds "h2" to
// the clone's NextProtos, not to the caller's.
func TestClientUsesTheGivenTLSConfig(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	given := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}

	client := outbound.NewClient(outbound.ClientConfig{
		TLSClientConfig: given,
		AllowCIDRs:      []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/hook", nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err, "the handshake trusts the given roots")
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.NotNil(t, resp.TLS)
	require.Nil(t, given.NextProtos, "the caller's config is not modified")
}
