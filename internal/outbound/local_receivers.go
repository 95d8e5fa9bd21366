package outbound

import (
	"net/netip"
	"strings"
)

// LoopbackPrefixes are this machine's loopback networks: 127.0.0.0/8
// (RFC 1122 §3.2.1.3) and ::1/128 (RFC 4291 §2.5.3). A receiver on this
// machine is reached when [ClientConfig.AllowCIDRs] lists them
// (HERALD_WEBHOOK_ALLOW_CIDRS) and, for a plain http URL, the sender allows
// plain http (HERALD_WEBHOOK_ALLOW_HTTP); `herald run --local-receivers`
// sets both.
var LoopbackPrefixes = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
}

// LocalReceiversHint names every setting a receiver on this machine needs;
// the errors for a plain http URL and a blocked loopback destination end
// with it.
// The name localhost stays refused (RFC 6761 §6.3: see CheckHostName).
var LocalReceiversHint = "a receiver on this machine (http://127.0.0.1:PORT/..., not localhost) needs " +
	"HERALD_WEBHOOK_ALLOW_HTTP=true (plain http) and HERALD_WEBHOOK_ALLOW_CIDRS=" + joinPrefixes(LoopbackPrefixes) +
	" (loopback); `herald run --local-receivers` sets both"

// PlainHTTPRefused is the error text for a plain http URL while the
// sender does not allow plain http (HERALD_WEBHOOK_ALLOW_HTTP, webhook and
// chat alike).
var PlainHTTPRefused = "plain http is not allowed: https only, unless HERALD_WEBHOOK_ALLOW_HTTP=true (local testing: " +
	"the request and its signature travel in clear text); " + LocalReceiversHint

// Advice says what lets herald connect to the blocked destination: the
// settings for a receiver on this machine when it is a loopback address or
// name, else HERALD_WEBHOOK_ALLOW_CIDRS (docs/security.md).
func (e *BlockedError) Advice() string {
	if e.Addr.IsLoopback() || isLocalhostName(e.Name) {
		return "herald does not connect to it (docs/security.md); " + LocalReceiversHint
	}
	return "herald does not connect to it unless HERALD_WEBHOOK_ALLOW_CIDRS lists it (docs/security.md)"
}

// isLocalhostName reports whether name is localhost or a name under it
// (RFC 6761 §6.3).
func isLocalhostName(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

func joinPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}
