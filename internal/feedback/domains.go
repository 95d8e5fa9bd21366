package feedback

import (
	"net/mail"
	"regexp"
	"slices"
	"strings"

	"github.com/heraldhq/herald/internal/delivery"
)

// statusPattern is an SMTP enhanced status code (RFC 3463 section 2:
// class.subject.detail).
var statusPattern = regexp.MustCompile(`^[245]\.[0-9]{1,3}\.[0-9]{1,3}$`)

// scrub replaces every address-shaped part of s with "<address>".
func scrub(s string) string { return delivery.ScrubAddresses(s) }

// Domains returns the domains of addrs (each "local@domain", optionally with
// a display name: "Jana <jana@example.org>"), lower case, sorted and each
// once. An entry with no domain counts as "unknown". The local parts are
// dropped: a recipient's address never reaches the log.
func Domains(addrs []string) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, domain(a))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// maxDomainLength is the longest domain name in text form: 253 characters
// (RFC 1035 §2.3.4: 255 octets on the wire). A longer one is no domain, and
// would make a line as long as it.
const maxDomainLength = 253

func domain(a string) string {
	if p, err := mail.ParseAddress(a); err == nil {
		a = p.Address
	}
	i := strings.LastIndexByte(a, '@')
	if i < 0 {
		return "unknown"
	}
	d := strings.ToLower(strings.TrimRight(strings.TrimSpace(a[i+1:]), ">"))
	if d == "" || len(d) > maxDomainLength || strings.ContainsAny(d, " \t<>@\"") {
		return "unknown"
	}
	return d
}
