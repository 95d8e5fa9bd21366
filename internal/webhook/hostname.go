package webhook

import (
	"errors"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"

	"github.com/heraldhq/herald/internal/delivery"
)

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
