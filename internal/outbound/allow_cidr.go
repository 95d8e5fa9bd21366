package outbound

import (
	"errors"
	"net/netip"
	"strings"
)

// ParseAllowCIDR reads one entry of [ClientConfig.AllowCIDRs] written as text,
// such as "10.20.0.0/16" or "fd00:1::/64". It returns an error, naming the
// rule, for text that is not a CIDR prefix, and for the prefixes
// [CheckAllowPrefix] refuses: a host address with a prefix length (10.1.2.3/8,
// likely a typo) and an IPv4-mapped IPv6 prefix (write IPv4 as IPv4).
func ParseAllowCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, errors.New("want a CIDR network address such as 10.20.0.0/16 or fd00:1::/64")
	}
	if err := CheckAllowPrefix(p); err != nil {
		return netip.Prefix{}, err
	}
	return p, nil
}
