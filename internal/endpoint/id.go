package endpoint

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/heraldhq/herald/internal/webhook"
)

// crockford is Crockford's base32 alphabet in lower case (no i, l, o, u),
// the ULID's (https://github.com/ulid/spec "Encoding").
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// idPattern is an endpoint id: [IDPrefix] and a ULID in lower case (the
// first character at most 7: a 48-bit time in 26 characters of 5 bits).
var idPattern = regexp.MustCompile(`^ep_[0-7][0-9a-hjkmnp-tv-z]{25}$`)

// NewID returns a new endpoint id, "ep_" and a ULID in lower-case
// Crockford base32: 48 bits of the current Unix time in milliseconds, then
// 80 random bits (crypto/rand). Ids sort by creation time to the
// millisecond; two made in the same millisecond sort at random.
func NewID() string { return newID(time.Now()) }

func newID(now time.Time) string {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	_, _ = rand.Read(b[6:]) // crypto/rand.Read never fails (Go 1.24)
	// 128 bits in 26 characters of 5 bits, most significant first: the
	// first character holds two zero bits and the top 3 bits.
	out := []byte(IDPrefix)
	for c := range 26 {
		v := 0
		for i := 5*c - 2; i < 5*c+3; i++ {
			v <<= 1
			if i >= 0 && b[i/8]&(0x80>>(i%8)) != 0 {
				v |= 1
			}
		}
		out = append(out, crockford[v])
	}
	return string(out)
}

// ValidID reports whether s is an endpoint id in the form [NewID] makes.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// SecretBytes is the length of a signing secret [NewSecret] makes: 24
// random bytes (Standard Webhooks "Signature scheme": 24 to 64 bytes).
const SecretBytes = 24

// NewSecret returns a new current signing secret, version 1, created at
// now: [SecretBytes] random bytes (crypto/rand). The store gives it its
// version.
func NewSecret(now time.Time) Secret {
	key := make([]byte, SecretBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24)
	return Secret{Version: 1, Key: key, CreatedAt: now}
}

// String returns the secret's key in the form people and the Standard
// Webhooks libraries use: "whsec_" and its standard base64. Only a call of
// String writes the key: fmt's verbs (Format) print a secret, and an
// Endpoint holding it, with the key redacted; log/slog's JSON leaves the
// key out (json:"-") and its text handler prints with fmt.
func (s Secret) String() string {
	return webhook.SecretPrefix + base64.StdEncoding.EncodeToString(s.Key)
}

// redacted is a secret as fmt and slog print it.
func (s Secret) redacted() string {
	return fmt.Sprintf("secret v%d (whsec_…, redacted)", s.Version)
}

// Format prints the secret without its key, whatever the verb.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.redacted()) }

// ActiveSecrets returns the secrets that sign at now, newest first: the
// current one and those whose grace period (Until) has not ended. A
// delivery is signed with each (one v1 signature per secret, Standard
// Webhooks "Signature scheme"), so a receiver holding either verifies.
func (e Endpoint) ActiveSecrets(now time.Time) []Secret {
	var out []Secret
	for _, s := range e.Secrets {
		if s.Until.IsZero() || s.Until.After(now) {
			out = append(out, s)
		}
	}
	return out
}
