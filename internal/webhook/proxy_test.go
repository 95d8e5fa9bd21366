package webhook_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/webhook"
)

// TestSendIgnoresTheEnvironmentsProxy: with HTTPS_PROXY and HTTP_PROXY set,
// the sender still dials the destination itself, so the destination check
// judges the destination, not the proxy. net/http reads the proxy variables
// once per process, so the send runs in a child process of this test binary
// started with them set; the proxy here counts what reaches it.
func TestSendIgnoresTheEnvironmentsProxy(t *testing.T) {
	if os.Getenv("HERALD_PROXY_CHILD") == "1" {
		// A name that is not special-use and does not resolve here: sent
		// directly it fails at DNS; through a proxy it reaches the proxy.
		s := newSender(t, nil, func(c *webhook.Config) { c.Timeout = 2 * time.Second })
		_ = s.Send(t.Context(), message("https://hooks.herald-proxy-check.net/x"))
		_ = s.Send(t.Context(), message("https://203.0.113.7/x"))
		return
	}
	t.Parallel()
	var hits atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(proxy.Close)
	// The child ends by itself (-test.timeout) even if this process is killed.
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSendIgnoresTheEnvironmentsProxy$", "-test.count=1", "-test.timeout=30s")
	cmd.Env = append(os.Environ(), "HERALD_PROXY_CHILD=1",
		"HTTPS_PROXY="+proxy.URL, "https_proxy="+proxy.URL, "HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL,
		"NO_PROXY=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)
	require.Contains(t, string(out), "PASS")
	require.Zero(t, hits.Load(), "the environment's proxy was used")
}
