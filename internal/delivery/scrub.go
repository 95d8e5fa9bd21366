package delivery

import "regexp"

// addressPattern finds anything shaped like an email address in free text.
var addressPattern = regexp.MustCompile(`[^\s<>()\[\]"',;:@]+@[^\s<>()\[\]"',;:@]+`)

// ScrubAddresses replaces every address-shaped part of s, a text herald did
// not write (an SES error message, an SES event's diagnostic), with
// "<address>": error texts and log lines hold no email address.
func ScrubAddresses(s string) string {
	return addressPattern.ReplaceAllString(s, "<address>")
}
