package outbound_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
)

// TestClientDialsWithTCPKeepAlive30s: a connection the client's transport
// dials has TCP keep-alive on, its first probe after 30 s idle (Linux's
// TCP_KEEPIDLE, read back from the socket), not net.Dialer's 15 s default.
func TestClientDialsWithTCPKeepAlive30s(t *testing.T) {
	t.Parallel()
	port, _ := countingListener(t)
	client := outbound.NewClient(outbound.ClientConfig{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	conn, err := client.Transport.(*http.Transport).DialContext(context.Background(), "tcp", "127.0.0.1:"+port)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	raw, err := conn.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	var on, idle int
	var sockErr error
	require.NoError(t, raw.Control(func(fd uintptr) {
		on, sockErr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
		if sockErr == nil {
			idle, sockErr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE)
		}
	}))
	require.NoError(t, sockErr)
	require.Equal(t, 1, on, "SO_KEEPALIVE")
	require.Equal(t, 30, idle, "TCP_KEEPIDLE in seconds")
}
