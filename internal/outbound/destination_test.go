package outbound_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
)

func TestCheckDestination(t *testing.T) {
	t.Parallel()

	tests := []struct {
		addr  string
		allow []string
		why   string // empty: allowed
	}{
		// Public addresses.
		{addr: "1.1.1.1"},
		{addr: "93.184.216.34"},
		{addr: "2606:4700:4700::1111"},
		{addr: "::ffff:8.8.8.8"},
		{addr: "64:ff9b::808:808"}, // NAT64 of 8.8.8.8 (DNS64 in an IPv6-only subnet)
		{addr: "100.63.255.255"},
		{addr: "100.128.0.0"},
		{addr: "172.15.255.255"},
		{addr: "172.32.0.0"},
		{addr: "198.17.255.255"},
		{addr: "198.20.0.0"},
		{addr: "223.255.255.255"},
		{addr: "2001:200::1"}, // just past 2001::/23

		// IPv4 special-purpose ranges.
		{addr: "0.0.0.0", why: `a "this network" address (0.0.0.0/8`},
		{addr: "0.1.2.3", why: "0.0.0.0/8"},
		{addr: "10.0.0.1", why: "a private address (10.0.0.0/8, RFC 1918)"},
		{addr: "100.64.0.1", why: "a shared (carrier-grade NAT) address (100.64.0.0/10, RFC 6598)"},
		{addr: "100.127.255.255", why: "100.64.0.0/10"},
		{addr: "127.0.0.1", why: "a loopback address (127.0.0.0/8, RFC 1122 §3.2.1.3)"},
		{addr: "127.255.255.254", why: "a loopback address"},
		{addr: "169.254.169.254", why: "a link-local address (169.254.0.0/16, RFC 3927)"},
		{addr: "169.254.170.2", why: "a link-local address"}, // ECS task metadata
		{addr: "172.16.0.1", why: "172.16.0.0/12"},
		{addr: "172.31.255.255", why: "172.16.0.0/12"},
		{addr: "192.0.0.9", why: "an IETF protocol assignment (192.0.0.0/24"},
		{addr: "192.0.2.1", why: "TEST-NET-1"},
		{addr: "192.88.99.1", why: "6to4 relay"},
		{addr: "192.168.1.1", why: "192.168.0.0/16"},
		{addr: "198.18.0.1", why: "a benchmarking address (198.18.0.0/15, RFC 2544)"},
		{addr: "198.19.255.255", why: "198.18.0.0/15"},
		{addr: "198.51.100.7", why: "TEST-NET-2"},
		{addr: "203.0.113.7", why: "TEST-NET-3"},
		{addr: "224.0.0.1", why: "a multicast address (224.0.0.0/4"},
		{addr: "239.255.255.250", why: "a multicast address"},
		{addr: "240.0.0.1", why: "a reserved address (240.0.0.0/4"},
		{addr: "255.255.255.255", why: "the limited broadcast address"},

		// IPv4-mapped IPv6 is the IPv4 address it maps.
		{addr: "::ffff:127.0.0.1", why: "a loopback address"},
		{addr: "::ffff:169.254.169.254", why: "a link-local address"},
		{addr: "::ffff:0.0.0.0", why: "this network"},

		// IPv6.
		{addr: "::", why: "the unspecified address"},
		{addr: "::1", why: "the loopback address (::1/128"},
		{addr: "::127.0.0.1", why: "an IPv4-compatible address"},
		{addr: "::ffff:0:7f00:1", why: "outside the IPv6 global unicast space (2000::/3"}, // SIIT IPv4-translated
		{addr: "64:ff9b::7f00:1", why: "a NAT64 address (64:ff9b::/96, RFC 6052) embedding 127.0.0.1, a loopback address"},
		{addr: "64:ff9b::a9fe:a9fe", why: "embedding 169.254.169.254"},
		{addr: "64:ff9b::a00:1", why: "embedding 10.0.0.1"},
		{addr: "64:ff9b:1::808:808", why: "a local-use NAT64 address"},
		{addr: "100::1", why: "a discard-only address"},
		{addr: "2001::1", why: "Teredo"},
		{addr: "2001:2::1", why: "2001::/23"},
		{addr: "2001:db8::1", why: "a documentation address (2001:db8::/32"},
		{addr: "2002:7f00:1::1", why: "a 6to4 address"},
		{addr: "3fff::1", why: "3fff::/20"},
		{addr: "5f00::1", why: "SRv6"},
		{addr: "fc00::1", why: "a unique local address"},
		{addr: "fd00:ec2::254", why: "a unique local address (fc00::/7, RFC 4193)"},
		{addr: "fe80::1", why: "a link-local address (fe80::/10"},
		{addr: "fe80::1%eth0", why: "a link-local address"},
		{addr: "fec0::1", why: "site-local"},
		{addr: "ff02::1", why: "a multicast address (ff00::/8"},
		{addr: "4000::1", why: "outside the IPv6 global unicast space"},

		// The allowlist wins.
		{addr: "127.0.0.1", allow: []string{"127.0.0.1/32"}},
		{addr: "::ffff:127.0.0.1", allow: []string{"127.0.0.1/32"}},
		{addr: "127.0.0.2", allow: []string{"127.0.0.1/32"}, why: "a loopback address"},
		{addr: "::1", allow: []string{"127.0.0.1/32"}, why: "the loopback address"},
		{addr: "10.20.30.40", allow: []string{"10.20.0.0/16"}},
		{addr: "10.21.0.1", allow: []string{"10.20.0.0/16"}, why: "a private address"},
		{addr: "fd12:3456::1", allow: []string{"10.0.0.0/8", "fd12:3456::/32"}},
		{addr: "fe80::1%eth0", allow: []string{"fe80::/10"}},
		{addr: "169.254.169.254", allow: []string{"0.0.0.0/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.addr+" "+strings.Join(tt.allow, ","), func(t *testing.T) {
			t.Parallel()

			addr := netip.MustParseAddr(tt.addr)
			var allow []netip.Prefix
			for _, p := range tt.allow {
				allow = append(allow, netip.MustParsePrefix(p))
			}
			err := outbound.CheckDestination(addr, allow)
			if tt.why == "" {
				require.NoError(t, err)
				return
			}
			var blocked *outbound.BlockedError
			require.ErrorAs(t, err, &blocked)
			require.Equal(t, addr.Unmap().WithZone(""), blocked.Addr)
			require.Contains(t, blocked.Reason, tt.why)
			require.Equal(t, blocked.Addr.String()+" is "+blocked.Reason, err.Error())
		})
	}

	var blocked *outbound.BlockedError
	require.ErrorAs(t, outbound.CheckDestination(netip.Addr{}, nil), &blocked)
	require.Equal(t, "not an IP address", blocked.Error())
}

// FuzzDestinationCheck checks CheckDestination's invariants on any address:
// no spelling of an address (mapped, zoned, NAT64) changes the verdict, what
// net/netip calls loopback, private, link-local, multicast or not global
// unicast is blocked, and the allowlist always wins.
func FuzzDestinationCheck(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "10.1.2.3", "169.254.169.254", "100.64.0.1", "0.0.0.0", "255.255.255.255",
		"8.8.8.8", "1.1.1.1", "::1", "::", "fd00::1", "fe80::1", "ff02::1", "2606:4700::1111",
		"::ffff:127.0.0.1", "64:ff9b::7f00:1", "64:ff9b::808:808", "2002:a00:1::", "2001::1",
	} {
		a := netip.MustParseAddr(s)
		b := a.AsSlice()
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})

	f.Fuzz(func(t *testing.T, b []byte) {
		addr, ok := netip.AddrFromSlice(b)
		if !ok {
			require.Error(t, outbound.CheckDestination(addr, nil), "%v is not an address", b)
			return
		}
		err := outbound.CheckDestination(addr, nil)
		blocked := err != nil
		if blocked {
			var be *outbound.BlockedError
			require.ErrorAs(t, err, &be)
			require.NotEmpty(t, be.Reason)
			require.Equal(t, addr.Unmap(), be.Addr)
			require.True(t, strings.HasPrefix(err.Error(), addr.Unmap().String()+" is "), err.Error())
		}

		// Other spellings of the same address.
		v4 := addr.Unmap()
		if v4.Is4() {
			mapped := netip.AddrFrom16(v4.As16())
			require.Equal(t, blocked, outbound.CheckDestination(mapped, nil) != nil, "mapped %s", mapped)
			require.Equal(t, blocked, outbound.CheckDestination(v4, nil) != nil, "unmapped %s", v4)
			nat64 := netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 12: v4.As4()[0], v4.As4()[1], v4.As4()[2], v4.As4()[3]})
			require.Equal(t, blocked, outbound.CheckDestination(nat64, nil) != nil, "NAT64 %s", nat64)
			sixToFour := netip.AddrFrom16([16]byte{0x20, 0x02, v4.As4()[0], v4.As4()[1], v4.As4()[2], v4.As4()[3]})
			require.Error(t, outbound.CheckDestination(sixToFour, nil), "6to4 %s", sixToFour)
		} else {
			zoned := addr.WithZone("eth0")
			require.Equal(t, blocked, outbound.CheckDestination(zoned, nil) != nil, "zoned %s", zoned)
		}

		// net/netip's own classification.
		if v4.IsLoopback() || v4.IsPrivate() || v4.IsLinkLocalUnicast() || v4.IsLinkLocalMulticast() ||
			v4.IsInterfaceLocalMulticast() || v4.IsMulticast() || v4.IsUnspecified() || !v4.IsGlobalUnicast() {
			require.True(t, blocked, "%s is not a global unicast address", addr)
		}

		// The allowlist wins.
		require.NoError(t, outbound.CheckDestination(addr, []netip.Prefix{netip.PrefixFrom(v4, v4.BitLen())}))
		require.NoError(t, outbound.CheckDestination(addr, []netip.Prefix{
			netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0"),
		}))
	})
}
