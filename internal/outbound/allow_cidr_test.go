package outbound_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
)

func TestParseAllowCIDR(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"10.20.0.0/16":    "10.20.0.0/16",
		" fd00:1::/64 ":   "fd00:1::/64",
		"127.0.0.1/32":    "127.0.0.1/32",
		"0.0.0.0/0":       "0.0.0.0/0",
		"2001:db8::1/128": "2001:db8::1/128",
	} {
		p, err := outbound.ParseAllowCIDR(in)
		require.NoError(t, err, in)
		require.Equal(t, want, p.String())
	}
	for in, wantErr := range map[string]string{
		"10.0.0.1":            "want a CIDR network address",
		"10.0.0.0/33":         "want a CIDR network address",
		"fe80::1%eth0/64":     "want a CIDR network address",
		"":                    "want a CIDR network address",
		"10.1.2.3/8":          "10.1.2.3/8 is not a network address: did you mean 10.0.0.0/8 or 10.1.2.3/32?",
		"::ffff:10.0.0.0/104": "IPv4-mapped",
	} {
		p, err := outbound.ParseAllowCIDR(in)
		require.ErrorContains(t, err, wantErr, in)
		require.False(t, p.IsValid(), in)
	}
}
