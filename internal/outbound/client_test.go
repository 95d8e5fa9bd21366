package outbound_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
)

// countingListener accepts TCP connections on 127.0.0.1, counts them and
// closes them at once.
func countingListener(t *testing.T) (port string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	accepted = new(atomic.Int64)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, accepted
}

// TestClientChecksEveryDial: the client itself, with no check of the URL
// before it, refuses at dial time every address the destination check
// blocks, whatever its spelling, so that nothing reaches the listener
// there; the error chain holds the *BlockedError and the Dialed hook sees
// the verdict. With the address allowed, the same listener is reached: its
// zero count means something.
func TestClientChecksEveryDial(t *testing.T) {
	t.Parallel()
	port, accepted := countingListener(t)
	for _, host := range []string{"127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]"} {
		var mu sync.Mutex
		var verdicts []error
		client := outbound.NewClient(outbound.ClientConfig{Dialed: func(_ string, err error) {
			mu.Lock()
			defer mu.Unlock()
			verdicts = append(verdicts, err)
		}})
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://"+host+":"+port+"/hook", nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		var blocked *outbound.BlockedError
		require.True(t, errors.As(err, &blocked), "%s: %v", host, err)
		require.Equal(t, netip.MustParseAddr("127.0.0.1"), blocked.Addr, host)
		require.Zero(t, accepted.Load(), "%s: a blocked address accepted a connection", host)
		mu.Lock()
		require.NotEmpty(t, verdicts, host)
		for _, v := range verdicts {
			require.ErrorAs(t, v, &blocked, host)
		}
		mu.Unlock()
	}

	allowed := outbound.NewClient(outbound.ClientConfig{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://127.0.0.1:"+port+"/hook", nil)
	require.NoError(t, err)
	resp, err := allowed.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err, "the listener closes every connection")
	var blocked *outbound.BlockedError
	require.False(t, errors.As(err, &blocked), "%v", err)
	require.Positive(t, accepted.Load(), "the allowed address was reached")
}
