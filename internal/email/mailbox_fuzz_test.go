package email

import (
	"net/mail"
	"strings"
	"testing"
)

// FuzzFormatMailbox checks the mailbox SES gets: formatMailbox never panics,
// and what it returns is 7-bit ASCII without CR or LF, parses back as an RFC
// 5322 mailbox, and keeps the local part it was given (the recipient SES
// sends to is the recipient the producer named) and the display name.
func FuzzFormatMailbox(f *testing.F) {
	for _, s := range []string{
		"jana@example.org", "Jana Nováková <jana@example.org>", "Müller & Söhne <noreply@example.com>",
		"jana@bücher.example", `"Quoted, Name" <q@example.com>`, "健二 <kenji@example.jp>",
		"ü@example.com", "a@b", "<x@[127.0.0.1]>", "=?utf-8?q?x?= <e@example.com>",
		"x@a.\u034f", "x@\u200b.a", "x@a\u3002b", `"Jörg \\ Söhne" <j@example.com>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, err := mail.ParseAddress(s)
		if err != nil {
			return // the contract rejects it before the sender sees it
		}
		out, err := formatMailbox(s)
		if err != nil {
			return // refused with a reason, never sent
		}
		for i := 0; i < len(out); i++ {
			if c := out[i]; c >= 0x80 || c == '\r' || c == '\n' {
				t.Fatalf("formatMailbox(%q) = %q: byte %#x is not allowed", s, out, c)
			}
		}
		back, err := mail.ParseAddress(out)
		if err != nil {
			t.Fatalf("formatMailbox(%q) = %q, which does not parse: %v", s, out, err)
		}
		local := func(a string) string { return a[:strings.LastIndex(a, "@")] }
		if local(back.Address) != local(in.Address) {
			t.Fatalf("formatMailbox(%q) changed the local part: %q → %q", s, in.Address, back.Address)
		}
		if back.Name != in.Name {
			t.Fatalf("formatMailbox(%q) = %q changed the display name: %q → %q", s, out, in.Name, back.Name)
		}
	})
}
