package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/outbound"
)

// CheckHost judges host, a URL's host without brackets or port, as the
// Sender does before anything is resolved or dialled (the check at dial
// time, outbound.NewClient's, is the one that counts, for host names too;
// this one makes a literal address fail fast, and fails the unusual
// spellings of IPv4 addresses (2130706433, 0x7f.1) that Go's resolver does
// not read as addresses (it would look them up in DNS), so that their
// outcome does not depend on the resolver). A host that the IDNA mapping
// turns into an address is judged as that address, and is not in the
// standard form either. It returns nil; a *outbound.BlockedError for an
// address outbound.CheckDestination blocks (unless allow holds it) or a
// name outbound.CheckHostName blocks; or an error, which never quotes
// host, for a name the IDNA mapping rejects or an IPv4 address in a
// non-standard form. Package endpoint applies it when an endpoint is
// created, so that an endpoint the Sender would refuse is refused then.
func CheckHost(host string, allow []netip.Prefix) error {
	addr, canonical, ok := outbound.HostAddr(host)
	if !ok {
		name, err := normalizeHost(host)
		if err != nil {
			return err
		}
		// IDNA maps full-width digits and full stops to ASCII, as net/http
		// does before dialling: "１２７．０．０．１" is 127.0.0.1, never a name.
		if addr, _, ok = outbound.HostAddr(name); !ok {
			return outbound.CheckHostName(name)
		}
		canonical = false
	}
	if err := outbound.CheckDestination(addr, allow); err != nil {
		return err
	}
	if !canonical {
		return fmt.Errorf("the host spells the IPv4 address %s in a non-standard form; write it in dotted decimal", addr)
	}
	return nil
}

// normalizeHost returns host, a URL's host without brackets or port, in
// the form that names one destination: an IP address in canonical form
// without zone; a name in lower case without its one trailing dot, in its
// ASCII form when it is internationalized (the UTS #46 lookup mapping of
// golang.org/x/net/idna, as net/http applies it before dialling: full-width
// letters, upper case and other compatibility forms map to their ASCII
// equivalents). It returns an error, which never quotes host, for an empty
// host, an empty label or a name the mapping rejects.
func normalizeHost(host string) (string, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.WithZone("").String(), nil
	}
	name := strings.TrimSuffix(host, ".")
	if !delivery.IsASCII(name) {
		ascii, err := idna.Lookup.ToASCII(name)
		if err != nil {
			return "", errors.New("webhook URL: the host is not a valid internationalized domain name (UTS #46)")
		}
		name = strings.TrimSuffix(ascii, ".")
	}
	name = strings.ToLower(name)
	if delivery.HasEmptyLabel(name) {
		return "", errors.New("webhook URL: the host has an empty label")
	}
	return name, nil
}
