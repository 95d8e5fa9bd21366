package outbound

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNewClientHealthCheck: the HTTP/2 PING interval and timeout are
// ClientConfig.HealthCheck, and DefaultHealthCheck when it is 0 (0 in
// net/http's HTTP2Config would turn the health check off).
func TestNewClientHealthCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ set, want time.Duration }{
		{0, DefaultHealthCheck},
		{-time.Second, DefaultHealthCheck},
		{time.Second, time.Second},
	} {
		client := NewClient(ClientConfig{HealthCheck: c.set})
		h2 := client.Transport.(*http.Transport).HTTP2
		require.Equal(t, c.want, h2.SendPingTimeout, "HealthCheck %s", c.set)
		require.Equal(t, c.want, h2.PingTimeout, "HealthCheck %s", c.set)
	}
}

// TestNewClientTimeouts: the transport's step timeouts: a dial and a TLS
// handshake 10 s each, an idle pooled connection kept 90 s and the HTTP/2
// health check's default 2 s (the last two as docs/reliability.md gives them).
// A dial's timeout lives inside the dialer's closure, so its constant is
// pinned here; the others are read from the transport NewClient builds.
func TestNewClientTimeouts(t *testing.T) {
	t.Parallel()
	tr := NewClient(ClientConfig{}).Transport.(*http.Transport)
	require.Equal(t, 10*time.Second, tr.TLSHandshakeTimeout)
	require.Equal(t, 90*time.Second, tr.IdleConnTimeout)
	require.Equal(t, 10*time.Second, dialTimeout)
	require.Equal(t, 2*time.Second, DefaultHealthCheck)
}
