package email

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"golang.org/x/net/idna"

	"github.com/heraldhq/herald/internal/delivery"
)

// errNonASCIILocalPart is the failure of a mailbox that SES cannot carry.
var errNonASCIILocalPart = errors.New("the local part (before @) is not 7-bit ASCII; SES does not support SMTPUTF8 (RFC 6531)")

// formatMailbox returns the RFC 5322 mailbox s in the 7-bit form SES accepts
// (SES v2 API reference, Destination: "the email address string must be 7-bit
// ASCII"):
//
//   - a non-ASCII domain is converted to Punycode with the IDNA lookup
//     profile (UTS #46); an ASCII domain is kept as it is;
//   - a non-ASCII local part is an error, as SES allows no Punycode there;
//   - the display name, if any, is quoted, or written as an RFC 2047
//     encoded-word when it is not printable ASCII;
//   - a mailbox without a display name is the bare addr-spec.
//
// Errors name the rule broken, not the address.
func formatMailbox(s string) (string, error) {
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "", fmt.Errorf("not an RFC 5322 mailbox: %w", err)
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at < 0 { // net/mail requires an @; kept for safety
		return "", errors.New("not an RFC 5322 mailbox: missing @")
	}
	local, domain := a.Address[:at], a.Address[at+1:]
	if !delivery.IsASCII(local) {
		return "", errNonASCIILocalPart
	}
	if !delivery.IsASCII(domain) {
		// idna's error quotes the label; the rule is enough.
		if domain, err = idna.Lookup.ToASCII(domain); err != nil {
			return "", errors.New("the domain is not a valid internationalized domain name (IDNA, UTS #46)")
		}
	}
	out := (&mail.Address{Name: a.Name, Address: local + "@" + domain}).String()
	if a.Name == "" {
		// String writes "<addr>" when there is no name; SES wants addr.
		out = strings.TrimSuffix(strings.TrimPrefix(out, "<"), ">")
	}
	return out, nil
}
