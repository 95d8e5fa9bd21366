package delivery

import (
	"regexp"
	"unicode/utf8"
)

// IsASCII reports whether s is all ASCII (every byte below 0x80): a host
// name or mailbox part that needs no IDNA mapping (UTS #46) before use.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// addressPattern finds anything shaped like an email address in free text.
var addressPattern = regexp.MustCompile(`[^\s<>()\[\]"',;:@]+@[^\s<>()\[\]"',;:@]+`)

// ScrubAddresses replaces every address-shaped part of s, a text herald did
// not write (an SES error message, an SES event's diagnostic), with
// "<address>": error texts and log lines hold no email address.
func ScrubAddresses(s string) string {
	return addressPattern.ReplaceAllString(s, "<address>")
}
