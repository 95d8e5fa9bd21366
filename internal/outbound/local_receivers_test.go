package outbound_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
)

// TestBlockedAdviceNamesWhatAllowsIt: a blocked loopback address or the
// name localhost is told every setting a receiver on this machine needs;
// any other blocked destination is told the allow list.
func TestBlockedAdviceNamesWhatAllowsIt(t *testing.T) {
	t.Parallel()
	local := []*outbound.BlockedError{
		{Addr: netip.MustParseAddr("127.0.0.1")},
		{Addr: netip.MustParseAddr("127.255.0.9")},
		{Addr: netip.MustParseAddr("::1")},
		{Name: "localhost"},
		{Name: "api.localhost"},
	}
	for _, b := range local {
		advice := b.Advice()
		for _, s := range []string{"HERALD_WEBHOOK_ALLOW_HTTP=true", "HERALD_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,::1/128", "--local-receivers", "not localhost"} {
			require.Contains(t, advice, s, "%v", b)
		}
	}
	other := []*outbound.BlockedError{
		{Addr: netip.MustParseAddr("169.254.169.254")},
		{Addr: netip.MustParseAddr("10.0.0.1")},
		{Addr: netip.MustParseAddr("fe80::1")},
		{Name: "printer.local"},
		{Name: "notlocalhost"},
	}
	for _, b := range other {
		advice := b.Advice()
		require.Contains(t, advice, "unless HERALD_WEBHOOK_ALLOW_CIDRS lists it", "%v", b)
		require.NotContains(t, advice, "--local-receivers", "%v", b)
	}
}
