package outbound

import "strings"

// specialUseName is a domain name whose meaning is fixed without DNS: a
// host under it is never a public webhook receiver.
type specialUseName struct {
	suffix string // the name itself, and every name under it
	what   string
	source string
}

// specialUseNames are the host names an outbound request may not name, whatever DNS
// would answer for them: the loopback, never-resolving, testing, local and
// non-DNS names of the IANA Special-Use Domain Names registry (RFC 6761 §5
// and its successors) and the private-use top-level domain. They are judged
// before anything is resolved, so a resolver that answers for them (a
// search list, /etc/hosts, mDNS, a DNS64 resolver) never matters, and the
// verdict is permanent, like a blocked literal address. "example", example.com,
// example.net and example.org are not here: RFC 6761 §6.5 asks applications
// not to treat them specially, and they resolve to public addresses that the
// dial-time check judges. docs/security.md explains each.
var specialUseNames = []specialUseName{
	{"localhost", "a loopback name", "RFC 6761 §6.3"},
	{"invalid", "a name that never resolves", "RFC 6761 §6.4"},
	{"test", "a testing name, not in the global DNS", "RFC 6761 §6.2"},
	{"local", "a link-local multicast DNS name", "RFC 6762 §3"},
	{"onion", "a Tor onion service name, never resolved through DNS", "RFC 7686 §2"},
	{"home.arpa", "a home network name", "RFC 8375"},
	{"arpa", "an infrastructure name, not a web host", "RFC 3172"},
	{"alt", "a name outside the DNS", "RFC 9476"},
	{"internal", "a private-use name", "ICANN resolution 2024.07.29.06"},
}

// CheckHostName reports whether an outbound request may name host, a host
// name that is not an IP address, in lower case, without its trailing dot
// and in its ASCII form (webhook's normalizeHost): nil, or a
// *[BlockedError] when host is or is under a special-use name, or has a
// single label (the resolver would complete it from its local search list,
// RFC 1535).
func CheckHostName(host string) error {
	for _, n := range specialUseNames {
		if host == n.suffix || strings.HasSuffix(host, "."+n.suffix) {
			return &BlockedError{Name: host, Reason: n.what + " (" + n.suffix + ", " + n.source + ")"}
		}
	}
	if !strings.Contains(host, ".") {
		return &BlockedError{Name: host, Reason: "a single-label name, which resolvers complete from their local search list (RFC 1535)"}
	}
	return nil
}
