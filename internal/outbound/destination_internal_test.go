package outbound

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHostAddr pins the host spellings read as IP addresses: those of
// net/netip, and the WHATWG URL Standard's IPv4 forms.
func TestHostAddr(t *testing.T) {
	t.Parallel()

	tests := []struct {
		host      string
		want      string // empty: not an address
		canonical bool
	}{
		{host: "127.0.0.1", want: "127.0.0.1", canonical: true},
		{host: "::1", want: "::1", canonical: true},
		{host: "::ffff:127.0.0.1", want: "::ffff:127.0.0.1", canonical: true},
		{host: "fe80::1%eth0", want: "fe80::1%eth0", canonical: true},
		{host: "2130706433", want: "127.0.0.1"},
		{host: "0x7f000001", want: "127.0.0.1"},
		{host: "0X7F000001", want: "127.0.0.1"},
		{host: "017700000001", want: "127.0.0.1"},
		{host: "0x7f.1", want: "127.0.0.1"},
		{host: "127.1", want: "127.0.0.1"},
		{host: "127.0.1", want: "127.0.0.1"},
		{host: "0177.0.0.01", want: "127.0.0.1"},
		{host: "127.000.000.001", want: "127.0.0.1"},
		{host: "127.0.0.1.", want: "127.0.0.1"},
		{host: "0x", want: "0.0.0.0"},
		{host: "0", want: "0.0.0.0"},
		{host: "4294967295", want: "255.255.255.255"},
		{host: "1.16777215", want: "1.255.255.255"},
		{host: "1.2.65535", want: "1.2.255.255"},
		{host: "169.254.43518", want: "169.254.169.254"},
		{host: "4294967296"},
		{host: "0x100000000"},
		{host: "1.16777216"},
		{host: "1.2.65536"},
		{host: "256.0.0.1"},
		{host: "1.2.3.4.5"},
		{host: "1..2"},
		{host: "."},
		{host: ""},
		{host: "08"},
		{host: "0x1g"},
		{host: "+1"},
		{host: "-1"},
		{host: "1_000"},
		{host: "example.com"},
		{host: "foo.123"},
		{host: "localhost"},
		{host: "127.0.0.1.."},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			t.Parallel()
			addr, canonical, ok := HostAddr(tt.host)
			if tt.want == "" {
				require.False(t, ok, "read %q as %s", tt.host, addr)
				return
			}
			require.True(t, ok)
			require.Equal(t, netip.MustParseAddr(tt.want), addr)
			require.Equal(t, tt.canonical, canonical)
		})
	}
}
