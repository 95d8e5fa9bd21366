package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far a webhook-timestamp may be from the
// receiver's clock: 5 minutes, the Standard Webhooks reference libraries'
// default ("Verifying webhooks": reject old timestamps against replay).
const DefaultTolerance = 5 * time.Minute

// SecretKeyBytes is the key length of secrets made by [NewSecret]: 32 bytes,
// within the 24–64 bytes the specification asks for.
const SecretKeyBytes = 32

// NewSecret returns a fresh signing secret: "whsec_" and the standard
// base64 of SecretKeyBytes random bytes from crypto/rand.
func NewSecret() string {
	key := make([]byte, SecretKeyBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// Verification errors, matched with errors.Is.
var (
	ErrTimestampOutOfRange = errors.New("webhook-timestamp too far from now")
	ErrNoMatchingSignature = errors.New("no webhook-signature matches")
	ErrMissingHeader       = errors.New("missing Standard Webhooks header")
	ErrBadTimestamp        = errors.New("webhook-timestamp is not Unix seconds")
)

// Verify checks a received webhook as a Standard Webhooks receiver does:
// ts (the webhook-timestamp, Unix seconds) within tolerance of now, and one
// of the space-separated "v1,<base64>" entries of signatures (the
// webhook-signature header) equal, compared in constant time, to [Sign] of
// id, ts and body under one of keys. It returns nil, ErrTimestampOutOfRange
// or ErrNoMatchingSignature (wrapped with detail that quotes no secret).
func Verify(keys [][]byte, id string, ts time.Time, body []byte, signatures string, now time.Time, tolerance time.Duration) error {
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: %s from now, tolerance %s", ErrTimestampOutOfRange, d.Round(time.Second), tolerance)
	}
	for _, key := range keys {
		want := Sign(key, id, ts, body)
		for _, got := range strings.Fields(signatures) {
			if hmac.Equal([]byte(got), []byte(want)) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: %d signature(s) checked against %d secret(s)", ErrNoMatchingSignature, len(strings.Fields(signatures)), len(keys))
}

// VerifyRequest checks a received request as a Standard Webhooks receiver
// does, from its headers (webhook-id, webhook-timestamp, webhook-signature:
// [HeaderID], [HeaderTimestamp], [HeaderSignature]) and its raw body: each
// header present, the timestamp an integer count of Unix seconds, then
// [Verify] under keys. It returns nil, ErrMissingHeader (naming every
// missing header), ErrBadTimestamp, ErrTimestampOutOfRange or
// ErrNoMatchingSignature, wrapped with detail that quotes no secret and no
// signature. A webhook-signature without any "v1," entry says so: v1 is the
// only scheme of symmetric keys ("Signature scheme" in the specification).
func VerifyRequest(keys [][]byte, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, ts, sigs := header.Get(HeaderID), header.Get(HeaderTimestamp), header.Get(HeaderSignature)
	var missing []string
	for _, h := range []struct{ name, value string }{{HeaderID, id}, {HeaderTimestamp, ts}, {HeaderSignature, sigs}} {
		if strings.TrimSpace(h.value) == "" {
			missing = append(missing, h.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", ErrMissingHeader, strings.Join(missing, ", "))
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %d bytes that are not an integer", ErrBadTimestamp, len(ts))
	}
	v1 := 0
	for _, s := range strings.Fields(sigs) {
		if strings.HasPrefix(s, "v1,") {
			v1++
		}
	}
	if v1 == 0 {
		return fmt.Errorf("%w: webhook-signature has no v1,<base64> entry", ErrNoMatchingSignature)
	}
	return Verify(keys, id, time.Unix(sec, 0), body, sigs, now, tolerance)
}
