package email

import (
	"net/mail"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormatMailbox(t *testing.T) {
	t.Parallel()
	const emptyLabel = "the domain has an empty label once mapped to ASCII"

	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "a@example.com", want: "a@example.com"},
		{in: "<a@example.com>", want: "a@example.com"},
		{in: "a@Example.COM", want: "a@Example.COM"}, // an ASCII domain is left alone
		{in: "Alice <a@example.com>", want: `"Alice" <a@example.com>`},
		{in: `"Doe, John" <j@example.com>`, want: `"Doe, John" <j@example.com>`},
		{in: `"first last"@example.com`, want: `"first last"@example.com`},
		{in: "jana@bücher.example", want: "jana@xn--bcher-kva.example"},
		{in: "jana@BÜCHER.Example", want: "jana@xn--bcher-kva.example"}, // UTS #46 maps to lower case
		{in: "Jana <jana@münchen.de>", want: `"Jana" <jana@xn--mnchen-3ya.de>`},
		// RFC 2047: Q encoding, or B encoding when the name holds specials.
		{in: "Jörg <j@example.com>", want: "=?utf-8?q?J=C3=B6rg?= <j@example.com>"},
		{in: "Müller & Söhne <noreply@example.com>", want: "=?utf-8?b?TcO8bGxlciAmIFPDtmhuZQ==?= <noreply@example.com>"},
		// An encoded-word on input is decoded, then encoded again.
		{in: "=?utf-8?q?J=C3=B6rg?= <j@example.com>", want: "=?utf-8?q?J=C3=B6rg?= <j@example.com>"},
		{in: "jörg@example.com", wantErr: "the local part (before @) is not 7-bit ASCII"},
		{in: "Jörg <jörg@bücher.example>", wantErr: "the local part (before @) is not 7-bit ASCII"},
		{in: "a@bücher-.example", wantErr: "the domain is not a valid internationalized domain name"},
		{in: "not a mailbox", wantErr: "not an RFC 5322 mailbox"},

		// UTS #46 deletes default-ignorable characters and maps full stops
		// to "."; a domain left with an empty label is refused (FuzzFormatMailbox).
		{in: "0@\u034f", wantErr: emptyLabel},                           // combining grapheme joiner: nothing left
		{in: "x@\u00ad\u200b", wantErr: emptyLabel},                     // soft hyphen, zero-width space
		{in: "x@\u2060", wantErr: emptyLabel},                           // word joiner
		{in: "x@a.\u034f", wantErr: emptyLabel},                         // an empty last label: "a."
		{in: "x@\u200b.a", wantErr: emptyLabel},                         // an empty first label: ".a"
		{in: "x@a.\u00ad.b", wantErr: emptyLabel},                       // an empty label inside: "a..b"
		{in: "x@a\u180b.\u180b", wantErr: emptyLabel},                   // Mongolian variation selector, in both labels
		{in: "x@\ufe0f.example", wantErr: emptyLabel},                   // emoji variation selector
		{in: "x@a\u3002", wantErr: emptyLabel},                          // ideographic full stop: "a."
		{in: "x@\uff0eexample.com", wantErr: emptyLabel},                // full-width full stop: ".example.com"
		{in: "Jana <jana@bücher.\u034f>", wantErr: emptyLabel},          // with a display name
		{in: "x@\u00adbücher.example", want: "x@xn--bcher-kva.example"}, // deleted from a label that keeps others
		{in: "x@exam\u200bple.com", want: "x@example.com"},
		{in: "x@a\u3002b", want: "x@a.b"},

		// A name that needs encoding and holds a backslash is B-encoded: RFC
		// 2047 §5(3) allows no backslash in an encoded-word of a phrase, where Q
		// encoding (and net/mail's Address.String) would keep it.
		{in: `"Jörg \\ Söhne" <j@example.com>`, want: "=?utf-8?b?SsO2cmcgXCBTw7ZobmU=?= <j@example.com>"},
		{in: "0@0(\\\\\x7f)", want: "=?utf-8?b?XH8=?= <0@0>"}, // the comment, a backslash and DEL, is taken as the name
		{in: `"Jörg \\\"Q\\\" Söhne" <j@example.com>`, want: "=?utf-8?b?SsO2cmcgXCJRXCIgU8O2aG5l?= <j@example.com>"},
		{in: `"\\ü" <"first last"@bücher.example>`, want: `=?utf-8?b?XMO8?= <"first last"@xn--bcher-kva.example>`},
		{in: `"Ääää \\ ` + strings.Repeat("ä", 50) + `" <j@example.com>`, want: "=?utf-8?b?w4TDpMOkw6QgXCDDpMOkw6TDpMOkw6TDpMOkw6TDpMOkw6TDpMOkw6TDpMOk?= " +
			"=?utf-8?b?w6TDpMOkw6TDpMOkw6TDpMOkw6TDpMOkw6TDpMOkw6TDpMOkw6TDpMOkw6Q=?= =?utf-8?b?w6TDpMOkw6TDpMOkw6TDpMOkw6TDpA==?= <j@example.com>"}, // long: several encoded-words
		{in: `"a\\b" <j@example.com>`, want: `"a\\b" <j@example.com>`}, // printable ASCII: quoted, no encoding
		// "=", "?" and "_" are written =XX by Q encoding, so they keep it.
		{in: "Jörg=?_ <j@example.com>", want: "=?utf-8?q?J=C3=B6rg=3D=3F=5F?= <j@example.com>"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := formatMailbox(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			// What SES gets parses back to the name the producer gave.
			in, err := mail.ParseAddress(tt.in)
			require.NoError(t, err)
			back, err := mail.ParseAddress(got)
			require.NoError(t, err, "%q does not parse", got)
			require.Equal(t, in.Name, back.Name)
		})
	}
}
