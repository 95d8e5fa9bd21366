package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
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
