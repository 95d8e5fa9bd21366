package email

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormatMailbox(t *testing.T) {
	t.Parallel()

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
		})
	}
}
