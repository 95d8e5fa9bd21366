package outbound

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/heraldhq/herald/internal/delivery"
)

// minRedacted is the shortest text scrubbed: shorter ones would mangle the
// rest of the text and hide nothing.
const minRedacted = 4

// credentialForms returns c as a receiver may echo it: raw; base64 (standard
// and URL alphabets, padded and not, and the part of its encoding at each
// of the three alignments it can have inside a longer base64 text); percent-
// encoded (query and path escaping, upper- and lower-case hexadecimal);
// JSON-escaped (with and without HTML escaping, and as PHP and Python write
// JSON: "/" as "\/", non-ASCII as \u escapes); HTML-escaped; hexadecimal.
func credentialForms(c string) []string {
	if len(c) < minRedacted {
		return nil
	}
	forms := []string{c, html.EscapeString(c), hex.EncodeToString([]byte(c)), strings.ToUpper(hex.EncodeToString([]byte(c)))}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(c)))
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for shift := 1; shift <= 2; shift++ {
			forms = append(forms, base64Inner(enc, c, shift))
		}
		forms = append(forms, base64Inner(enc, c, 0))
	}
	for _, e := range []string{url.QueryEscape(c), url.PathEscape(c)} {
		forms = append(forms, e, lowerHexEscapes(e))
	}
	quoted, _ := json.Marshal(c) // a string always marshals
	forms = append(forms, string(quoted[1:len(quoted)-1]))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(c)
	plain := strings.TrimSuffix(strings.TrimSuffix(buf.String(), "\n"), `"`)[1:]
	forms = append(forms, plain)
	// PHP's json_encode writes "/" as "\/" by default; it and Python's
	// json.dumps write every character beyond ASCII as \u escapes.
	ascii := asciiEscapes(plain)
	forms = append(forms, ascii, strings.ReplaceAll(plain, "/", `\/`), strings.ReplaceAll(ascii, "/", `\/`))
	return forms
}

// asciiEscapes rewrites the characters of s beyond ASCII as JSON \u escapes
// (RFC 8259 §7: UTF-16, surrogate pairs beyond the BMP), in lower-case
// hexadecimal as PHP and Python write them.
func asciiEscapes(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	return b.String()
}

// base64Inner returns the characters of the base64 encoding of c that
// depend on c alone when c starts shift bytes (0–2) into a 3-byte group of a
// longer text: the text's encoding contains them wherever c is in it.
func base64Inner(enc *base64.Encoding, c string, shift int) string {
	b := enc.EncodeToString(append(make([]byte, shift), c...))
	start := [3]int{0, 2, 3}[shift]
	total := shift + len(c)
	end := total / 3 * 4
	end += [3]int{0, 1, 2}[total%3]
	if end <= start {
		return ""
	}
	return b[start:end]
}

// lowerHexEscapes rewrites the %XX escapes of s in lower case.
func lowerHexEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lower(b[i+1]), lower(b[i+2])
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// redacted replaces what scrubbing removes.
const redacted = "[redacted]"

// redact replaces in s every part of at least minRedacted bytes, longest
// first, and a prefix of a part left at the end of s, where a text cut short
// ends in the middle of a secret.
func redact(s string, parts []string) string {
	parts = slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return len(p) < minRedacted })
	slices.SortFunc(parts, func(a, b string) int { return len(b) - len(a) })
	for _, p := range parts {
		s = strings.ReplaceAll(s, p, redacted)
	}
	body, ellipsis := strings.CutSuffix(s, "…")
	for _, p := range parts {
		for n := len(p) - 1; n >= minRedacted; n-- {
			if strings.HasSuffix(body, p[:n]) {
				body = body[:len(body)-n] + redacted
				break
			}
		}
	}
	if ellipsis {
		return body + "…"
	}
	return body
}

// Response body excerpts in error texts.
const (
	// ExcerptBytes is the most bytes of an excerpt shown.
	ExcerptBytes = 200
	// ExcerptCaptureBytes is how much of a body an excerpt is made from:
	// leeway for the characters [Excerpt] skips.
	ExcerptCaptureBytes = 4 * ExcerptBytes
)

// Excerpt returns a response body, or any text herald did not write, as one
// printable line of at most [ExcerptBytes] bytes with every part of u that
// may be secret (userinfo, path and its segments, query and its values,
// fragment) and every credential in sent (what the request carried: header
// values, signatures) replaced by "[redacted]", in each encoding a receiver
// may echo them: the form in which webhook and chat error texts quote
// response bodies. The whole capture is scrubbed before it is cut, so that
// no secret is left half in view. u may be nil.
func Excerpt(body []byte, u *url.URL, sent ...string) string {
	return delivery.Truncate(Scrub(sanitize(body, ExcerptCaptureBytes), u, sent...), ExcerptBytes)
}

// Scrub removes from s, a text that herald did not write (a response body
// that echoes the request, a transport error), any part of u that may be
// secret and every credential in sent, in each encoding credentialForms
// lists. net/http's texts without their *url.Error hold none; for them
// this is a second line of defence. Parts shorter than 4 bytes are kept:
// removing them would mangle the text and they hide nothing. u may be nil.
func Scrub(s string, u *url.URL, sent ...string) string {
	if u == nil {
		u = &url.URL{}
	}
	var parts []string
	if u.User != nil {
		parts = append(parts, u.User.String(), u.User.Username())
		if p, ok := u.User.Password(); ok {
			parts = append(parts, p)
		}
	}
	parts = append(parts, u.RawQuery, u.Query().Encode(), u.Fragment, u.Opaque, u.EscapedPath(), u.Path)
	// Echoes come in pieces too, and encoded as the headers' credentials
	// are: each path segment and query value, either of which can be the
	// URL's secret.
	parts = append(parts, strings.Split(u.EscapedPath(), "/")...)
	for _, seg := range strings.Split(u.Path, "/") {
		parts = append(parts, credentialForms(seg)...)
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, v, _ := strings.Cut(kv, "=")
		parts = append(parts, v)
		if dv, err := url.QueryUnescape(v); err == nil {
			parts = append(parts, credentialForms(dv)...)
		}
	}
	for _, c := range sent {
		parts = append(parts, credentialForms(c)...)
	}
	return redact(s, parts)
}

// sanitize returns b as one printable line of at most limit bytes: invalid
// UTF-8, control characters and runs of white space become one space, and
// "…" marks a cut.
func sanitize(b []byte, limit int) string {
	var sb strings.Builder
	space := false
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || r == utf8.RuneError {
			space = sb.Len() > 0
			continue
		}
		n := utf8.RuneLen(r)
		if space {
			n++
		}
		if sb.Len()+n > limit {
			return sb.String() + "…"
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
