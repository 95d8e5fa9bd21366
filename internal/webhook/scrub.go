package webhook

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
	"unicode/utf16"
	"unicode/utf8"
)

// minRedacted is the shortest text scrubbed: shorter ones would mangle the
// rest of the text and hide nothing.
const minRedacted = 4

// sentCredentials returns what a request to u with the producer's headers
// and the webhook-signature value signature carries that may be a
// credential, for scrubbing echoes of it: the URL's userinfo and the
// "Authorization: Basic" value net/http makes of it, every producer header
// value (an API key, a bearer token), and the signatures.
func sentCredentials(u *url.URL, headers map[string]string, signature string) []string {
	var out []string
	if u.User != nil {
		user := u.User.Username()
		pass, _ := u.User.Password()
		basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		out = append(out, user, pass, user+":"+pass, basic, "Basic "+basic)
	}
	for _, v := range headers {
		out = append(out, v)
		// "Bearer <token>", "Token token=<t>": the credential without its scheme.
		if _, cred, ok := strings.Cut(v, " "); ok {
			out = append(out, cred)
		}
	}
	out = append(out, signature)
	for _, sig := range strings.Fields(signature) {
		_, b64, _ := strings.Cut(sig, ",")
		out = append(out, sig, b64)
	}
	return out
}

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
