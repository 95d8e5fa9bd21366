package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sign returns the webhook-signature header value of one attempt:
// "v1," followed by the standard base64 encoding of the HMAC-SHA256, under
// key, of "<id>.<unix seconds of ts>.<body>" ("Signature scheme" in the
// Standard Webhooks specification). body must be the exact bytes sent.
func Sign(key []byte, id string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, ts.Unix(), 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// DecodeSecret returns the key of a Standard Webhooks secret: s without its
// "whsec_" prefix, decoded as standard (padded) base64. It returns an error,
// which never quotes s, when the prefix is missing or the rest is not base64
// or empty. It does not check the key's length; [Config.Validate] does.
func DecodeSecret(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("webhook secret: required (whsec_ followed by a base64 key)")
	}
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, errors.New("webhook secret: must start with whsec_")
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("webhook secret: not standard base64 after whsec_ (at byte %d)", int64(ce)+int64(len(SecretPrefix)))
		}
		return nil, errors.New("webhook secret: not standard base64 after whsec_")
	}
	if len(key) == 0 {
		return nil, errors.New("webhook secret: empty key after whsec_")
	}
	return key, nil
}
