package email

import (
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"strings"

	"golang.org/x/net/idna"

	"github.com/heraldhq/herald/internal/delivery"
)

// errNonASCIILocalPart is the failure of a mailbox that SES cannot carry.
var errNonASCIILocalPart = errors.New("the local part (before @) is not 7-bit ASCII; SES does not support SMTPUTF8 (RFC 6531)")

// errEmptyLabel is the failure of a domain left with an empty label by the
// IDNA mapping (a label of default-ignorable characters only, or a full
// stop such as U+3002): SES would be given "jana@" or "jana@example.".
var errEmptyLabel = errors.New("the domain has an empty label once mapped to ASCII (IDNA, UTS #46; RFC 1035 §2.3.1)")

// phraseUnsafe are the printable ASCII characters that mime.QEncoding
// writes as themselves but that an encoded-word standing for a display name
// may not hold (RFC 2047 §5(3) allows letters, digits and "!*+-/=_"; Q
// encoding writes "=", "?" and "_" as =XX). A name that needs encoding and
// holds one of them is B-encoded. net/mail's Address.String uses this list
// without the backslash, and cannot parse back the Q-encoded word it then
// writes.
const phraseUnsafe = "\"#$%&'(),.:;<>@[\\]^`{|}~"

// formatMailbox returns the RFC 5322 mailbox s in the 7-bit form SES accepts
// (SES v2 API reference, Destination: "the email address string must be 7-bit
// ASCII"):
//
//   - a non-ASCII domain is converted to Punycode with the IDNA lookup
//     profile (UTS #46); an ASCII domain is kept as it is;
//   - a domain with an empty label once converted is an error
//     ([delivery.HasEmptyLabel]): the mapping deletes default-ignorable
//     characters such as U+00AD, U+034F and U+200B and maps U+3002 to ".";
//   - a non-ASCII local part is an error, as SES allows no Punycode there;
//   - the display name, if any, is quoted when it is printable ASCII, and
//     otherwise written as RFC 2047 encoded-words: Q encoding, or B
//     encoding when the name holds a character of phraseUnsafe;
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
	if delivery.HasEmptyLabel(domain) {
		return "", errEmptyLabel
	}
	addr := &mail.Address{Address: local + "@" + domain}
	spec := addr.String() // "<local@domain>", the local part quoted where RFC 5322 needs it
	if a.Name == "" {
		return spec[1 : len(spec)-1], nil // SES wants the bare addr-spec
	}
	q := mime.QEncoding.Encode("utf-8", a.Name)
	if q == a.Name { // printable ASCII: net/mail quotes it
		addr.Name = a.Name
		return addr.String(), nil
	}
	if strings.ContainsAny(a.Name, phraseUnsafe) {
		return mime.BEncoding.Encode("utf-8", a.Name) + " " + spec, nil
	}
	return q + " " + spec, nil
}
