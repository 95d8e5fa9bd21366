package outbound

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// BlockedError says why a destination address is blocked. Its text names
// the address and the reason ("127.0.0.1 is a loopback address (127.0.0.0/8,
// RFC 1122 §3.2.1.3)"), never the URL it came from.
type BlockedError struct {
	// Addr is the address checked, unmapped and without its IPv6 zone; the
	// zero Addr when what was to be dialled is not an IP address.
	Addr netip.Addr
	// Reason describes the range Addr is in and its source.
	Reason string
	// Name is the host name checked when the destination was judged by its
	// name (a special-use name such as localhost), before any resolution.
	Name string
}

func (e *BlockedError) Error() string {
	if e.Name != "" {
		return e.Name + " is " + e.Reason
	}
	if !e.Addr.IsValid() {
		return e.Reason
	}
	return e.Addr.String() + " is " + e.Reason
}

// blockedRange is one range of [blockedRanges].
type blockedRange struct {
	prefix netip.Prefix
	what   string // "a loopback address"
	source string // where the range is defined
}

// blockedRanges are the destinations an outbound request (a webhook, a chat
// post) may not reach unless ClientConfig.AllowCIDRs lists them: every range of the IANA IPv4 and IPv6
// Special-Purpose Address Registries (RFC 6890) that is not globally
// reachable, plus the multicast, reserved and deprecated ranges of the IANA
// IPv4 and IPv6 Address Space registries. The first range containing an
// address names its reason, so narrower ranges come before wider ones.
// docs/security.md lists them with the decisions behind them.
//
// Beyond this list, [CheckDestination] blocks any IPv6 address outside the
// global unicast space 2000::/3, checks the IPv4 address embedded in a NAT64
// address 64:ff9b::/96 and treats an IPv4-mapped IPv6 address
// (::ffff:a.b.c.d) as the IPv4 address it maps.
var blockedRanges = []blockedRange{
	// IPv4 (https://www.iana.org/assignments/iana-ipv4-special-registry).
	// 0.0.0.0 itself connects to this host on Linux; 169.254.0.0/16 holds
	// the EC2 instance metadata service (169.254.169.254) and the ECS task
	// metadata endpoint (169.254.170.2).
	{netip.MustParsePrefix("0.0.0.0/8"), `a "this network" address`, "RFC 791, RFC 1122 §3.2.1.3"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address", "RFC 1918"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address", "RFC 6598"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address", "RFC 1122 §3.2.1.3"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address", "RFC 3927"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address", "RFC 1918"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment", "RFC 6890 §2.1"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address (TEST-NET-1)", "RFC 5737"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a deprecated 6to4 relay anycast address", "RFC 7526"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address", "RFC 1918"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address", "RFC 2544"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address (TEST-NET-2)", "RFC 5737"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address (TEST-NET-3)", "RFC 5737"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address", "RFC 5771"},
	{netip.MustParsePrefix("255.255.255.255/32"), "the limited broadcast address", "RFC 919, RFC 8190"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address", "RFC 1112 §4"},

	// IPv6 (https://www.iana.org/assignments/iana-ipv6-special-registry).
	// fc00::/7 holds the EC2 IPv6 instance metadata service (fd00:ec2::254).
	{netip.MustParsePrefix("::/128"), "the unspecified address", "RFC 4291 §2.5.2"},
	{netip.MustParsePrefix("::1/128"), "the loopback address", "RFC 4291 §2.5.3"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address (deprecated)", "RFC 4291 §2.5.5.1"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address", "RFC 8215"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address", "RFC 6666"},
	{netip.MustParsePrefix("2001::/23"), "an IETF protocol assignment (Teredo 2001::/32 among them)", "RFC 2928, RFC 4380"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address", "RFC 3849"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address (it embeds an IPv4 address)", "RFC 3056, RFC 7526"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address", "RFC 9637"},
	{netip.MustParsePrefix("5f00::/16"), "an SRv6 segment identifier", "RFC 9602"},
	{netip.MustParsePrefix("fc00::/7"), "a unique local address", "RFC 4193"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address", "RFC 4291 §2.5.6"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (deprecated)", "RFC 3879"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address", "RFC 4291 §2.7"},
}

// Prefixes CheckDestination treats apart from blockedRanges.
var (
	nat64Prefix         = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052 §2.1
	globalUnicastPrefix = netip.MustParsePrefix("2000::/3")     // RFC 4291 §2.4, IANA IPv6 Address Space
)

// CheckDestination reports whether an outbound request may connect to
// addr: nil when it may, else a *[BlockedError] saying why not.
//
// addr is first unmapped (::ffff:127.0.0.1 is 127.0.0.1) and stripped of its
// IPv6 zone. It may be reached when a prefix of allow contains it; otherwise
// it is blocked when it lies in one of the special-purpose ranges listed in
// docs/security.md, when it is an IPv6 address outside 2000::/3, or when it
// is a NAT64 address (64:ff9b::/96, RFC 6052) whose embedded IPv4 address is
// blocked. The zero Addr is blocked.
func CheckDestination(addr netip.Addr, allow []netip.Prefix) error {
	if !addr.IsValid() {
		return &BlockedError{Reason: "not an IP address"}
	}
	addr = addr.Unmap().WithZone("")
	for _, p := range allow {
		if p.Contains(addr) {
			return nil
		}
	}
	if why := blockedReason(addr); why != "" {
		return &BlockedError{Addr: addr, Reason: why}
	}
	return nil
}

// blockedReason returns why addr, unmapped and without a zone, is blocked,
// or "".
func blockedReason(addr netip.Addr) string {
	for _, r := range blockedRanges {
		if r.prefix.Contains(addr) {
			return fmt.Sprintf("%s (%s, %s)", r.what, r.prefix, r.source)
		}
	}
	if !addr.Is6() {
		return ""
	}
	if nat64Prefix.Contains(addr) {
		b := addr.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:]))
		if why := blockedReason(v4); why != "" {
			return fmt.Sprintf("a NAT64 address (%s, RFC 6052) embedding %s, %s", nat64Prefix, v4, why)
		}
		return ""
	}
	if !globalUnicastPrefix.Contains(addr) {
		return fmt.Sprintf("outside the IPv6 global unicast space (%s, RFC 4291 §2.4)", globalUnicastPrefix)
	}
	return ""
}

// CheckAllowPrefix reports whether p may be in ClientConfig.AllowCIDRs
// (HERALD_WEBHOOK_ALLOW_CIDRS): nil, or an error naming p and the rule: a valid
// network address (10.0.0.0/8, not 10.1.2.3/8, which is likely a typo for
// 10.1.2.3/32), and an IPv4 network written as such, since addresses are
// unmapped before they are compared.
func CheckAllowPrefix(p netip.Prefix) error {
	switch {
	case !p.IsValid():
		return fmt.Errorf("%s is not a CIDR prefix", p)
	case p.Addr().Is4In6():
		return fmt.Errorf("%s is an IPv4-mapped prefix: write the IPv4 network (like 10.0.0.0/8)", p)
	case p.Masked() != p:
		return fmt.Errorf("%s is not a network address: did you mean %s or %s?", p, p.Masked(), netip.PrefixFrom(p.Addr(), p.Addr().BitLen()))
	}
	return nil
}

// guard applies CheckDestination to every connection a client of
// [NewClient] opens.
type guard struct {
	allow []netip.Prefix
	// dialed is ClientConfig.Dialed.
	dialed func(address string, err error)
}

// control is the net.Dialer ControlContext of [NewClient]'s transport. The
// dialer calls it with the resolved IP address and port of each connection
// attempt, after creating the socket and before connecting it: an error
// abandons that address, so nothing is sent to a blocked one. Because it
// sees the address actually dialled, every way of naming an address (a
// host name, DNS rebinding, IPv4-mapped IPv6) is checked.
func (g *guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	var err error
	if ap, perr := netip.ParseAddrPort(address); perr != nil {
		err = &BlockedError{Reason: fmt.Sprintf("the dialled address %q is not an IP address and port", address)}
	} else {
		err = CheckDestination(ap.Addr(), g.allow)
	}
	if g.dialed != nil {
		g.dialed(address, err)
	}
	return err
}

// HostAddr returns the IP address that host, a URL's host name without
// brackets or port, spells, if any. canonical is false when host spells it
// in a form that net.ParseIP does not read but a WHATWG URL parser does
// (https://url.spec.whatwg.org/#concept-ipv4-parser): fewer than four parts,
// or parts in octal or hexadecimal (2130706433, 0x7f.1, 017700000001,
// 127.1), or with a trailing dot (127.0.0.1.). Browsers, curl and many
// resolvers take those for IPv4 addresses; herald never dials them.
func HostAddr(host string) (addr netip.Addr, canonical, ok bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true, true
	}
	if a, ok := parseLooseIPv4(host); ok {
		return a, false, true
	}
	return netip.Addr{}, false, false
}

// parseLooseIPv4 is the WHATWG URL Standard's IPv4 parser: one to four
// dot-separated numbers, each decimal, octal (leading 0) or hexadecimal
// (leading 0x), the last filling the remaining bytes; one trailing dot is
// allowed.
func parseLooseIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number reads one part of a WHATWG IPv4 address: "0x" or "0X"
// then hexadecimal digits (possibly none), "0" then octal digits, or
// decimal digits. Values above 2^32-1 fail.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	for i := 0; i < len(s); i++ { // only digits: no sign, no "_"
		c := s[i]
		if !('0' <= c && c <= '9' || base == 16 && ('a' <= c && c <= 'f' || 'A' <= c && c <= 'F')) {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, base, 32)
	return n, err == nil
}
