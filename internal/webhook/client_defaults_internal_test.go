package webhook

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
