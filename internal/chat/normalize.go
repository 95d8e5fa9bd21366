package chat

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
)

// NormalizeURL returns the form of a webhook URL that names one webhook
// however it is spelt, for keying what is kept per webhook (the pacer, and
// anything else that must see two spellings of one webhook as one):
// RFC 3986 §6.2.2 and §6.2.3 normalization —
//   - scheme and host in lower case, the host without trailing dots
//     (hooks.slack.com. is hooks.slack.com); an IPv6 address in RFC 5952's
//     form ([0:0::1] is [::1]), its zone (RFC 6874, [fe80::1%25en0]) kept
//     as written;
//   - the scheme's default port dropped (https :443, http :80);
//   - percent-encoding normalized in the path and query: an octet of an
//     unreserved character (A-Z a-z 0-9 - . _ ~) decoded, any other
//     escape's hex digits in upper case (%2f is %2F; %2F stays encoded,
//     it is not a /);
//   - an empty path as "/", the fragment (never sent) dropped.
//
// The path and query keep their case and order: they are the webhook's
// identity (its id and token). It returns an error, which never holds the
// URL (it may carry a token), when raw is not an absolute URL with a host.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("chat: the webhook URL does not parse")
	}
	if u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return "", errors.New("chat: the webhook URL is not absolute with a host")
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.TrimRight(strings.ToLower(u.Hostname()), "."), u.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	if a, err := netip.ParseAddr(u.Hostname()); err == nil && a.Is6() {
		// RFC 5952's text form (lower case, zeros compressed); a zone
		// (RFC 6874) keeps its case and its "%" escaped as "%25", so the
		// result parses again.
		host = "[" + a.WithZone("").String()
		if z := a.Zone(); z != "" {
			host += "%25" + url.PathEscape(z)
		}
		host += "]"
	}
	if port != "" {
		host += ":" + port
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString(u.User.String())
		b.WriteByte('@')
	}
	b.WriteString(host)
	path := normalizeEscapes(u.EscapedPath())
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		b.WriteString(normalizeEscapes(u.RawQuery))
	}
	return b.String(), nil
}

// normalizeEscapes decodes the escapes of unreserved characters in s and
// writes every other escape's hex digits in upper case (RFC 3986 §6.2.2.1,
// §6.2.2.2).
func normalizeEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b.WriteByte(c)
			continue
		}
		v := unhex(s[i+1])<<4 | unhex(s[i+2])
		if unreserved(v) {
			b.WriteByte(v)
		} else {
			b.WriteByte('%')
			b.WriteByte(hexDigits[v>>4])
			b.WriteByte(hexDigits[v&15])
		}
		i += 2
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
