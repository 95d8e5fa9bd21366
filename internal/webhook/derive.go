package webhook

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// SecretScope says which key signs a webhook: the deployment's secret
// itself, or a key derived from it for the webhook's destination.
type SecretScope string

// The secret scopes.
const (
	// ScopeDestination signs each webhook with a key derived from every
	// active secret and the URL's origin ([DeriveSecret]): a receiver holds
	// only its own key and cannot sign requests that another receiver
	// accepts ("Additional considerations" of the specification's signature
	// scheme: "Signing keys should be unique per endpoint").
	ScopeDestination SecretScope = "destination"
	// ScopeShared signs every webhook with the active secrets themselves:
	// every receiver installs the same secret, and any of them can forge
	// webhooks that the others accept. For deployments whose receivers
	// installed the shared secret before per-destination keys existed.
	ScopeShared SecretScope = "shared"
)

// derivedKeyBytes is the length of a derived key: 256 bits, the output of
// HMAC-SHA256 and within the specification's 24–64 bytes.
const derivedKeyBytes = 32

// deriveInfo labels the HKDF derivation (RFC 5869 §3.2 "info"), so that
// keys derived for another purpose from the same secret differ. The origin
// and the key version follow it (versionInfo).
const deriveInfo = "herald webhook destination key v1 "

// DeriveSecret returns the Standard Webhooks secret ("whsec_" and the
// standard base64 encoding of 32 bytes) that herald signs webhooks to
// rawURL with when HERALD_WEBHOOK_SECRET_SCOPE is "destination" and the
// origin's key was never rotated: [DeriveSecretVersion] at version 1. The
// receiver at rawURL installs it.
func DeriveSecret(secret, rawURL string) (string, error) {
	return DeriveSecretVersion(secret, rawURL, 1)
}

// DeriveSecretVersion returns version v (≥ 1) of the Standard Webhooks
// secret ("whsec_" and the standard base64 encoding of 32 bytes) of
// rawURL's origin: HKDF-SHA256 (RFC 5869, Go's crypto/hkdf) of secret's
// key, without salt, with info "herald webhook destination key v1 "
// followed by [Origin](rawURL), and for v > 1 by " version <v>". The info's
// "v1" names the derivation scheme, not the key version: version 1 is the
// key herald derived before versions existed. The same secret, origin and
// version always give the same key, and every URL of one origin shares it.
// During a rotation of the deployment secret each active secret derives
// its own key, and a receiver installs the derived key of each; `herald
// secret rotate` moves one origin to its next version (docs/security.md).
//
// It returns an error when secret is not a valid Standard Webhooks secret
// ([DecodeSecret]), rawURL has no origin, or v < 1; the error never quotes
// the secret or the URL's path, query or userinfo.
func DeriveSecretVersion(secret, rawURL string, v int) (string, error) {
	if v < 1 {
		return "", fmt.Errorf("webhook secret: key version %d, want at least 1", v)
	}
	key, err := DecodeSecret(secret)
	if err != nil {
		return "", err
	}
	if n := len(key); n < MinKeyBytes || n > MaxKeyBytes {
		return "", fmt.Errorf("webhook secret: key is %d bytes, want %d–%d", n, MinKeyBytes, MaxKeyBytes)
	}
	origin, err := Origin(rawURL)
	if err != nil {
		return "", err
	}
	derived, err := deriveKey(key, origin, v)
	if err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(derived), nil
}

// deriveKey returns the key that key signs webhooks to origin with at key
// version v.
func deriveKey(key []byte, origin string, v int) ([]byte, error) {
	derived, err := hkdf.Key(sha256.New, key, nil, versionInfo(origin, v), derivedKeyBytes)
	if err != nil { // only for an output longer than 255 hashes
		return nil, fmt.Errorf("webhook secret: derive the key of %s: %w", origin, err)
	}
	return derived, nil
}

// Origin returns the origin of a webhook URL (RFC 6454 §4), normalized so
// that every spelling of one destination gives one string:
// "scheme://host[:port]" with the scheme and host in lower case, an
// internationalized host name in its ASCII (Punycode) form as
// golang.org/x/net/idna's lookup profile maps it (the form net/http
// dials), one trailing dot removed, an IP address in its canonical form
// (IPv6 in brackets, without zone), and the port left out when it is the
// scheme's default (443 for https, 80 for http) or written with leading
// zeros removed. Userinfo, path, query and fragment are not part of it.
//
// It returns an error when rawURL does not parse, is not http or https, or
// its host or port is unusable; the error never quotes the URL.
func Origin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", errors.New("webhook URL: does not parse")
	}
	return originOf(u)
}

func originOf(u *url.URL) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return "", errors.New("webhook URL: must be absolute and https")
	}
	host, err := normalizeHost(u.Hostname())
	if err != nil {
		return "", err
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		host = "[" + a.WithZone("").String() + "]"
	}
	origin := scheme + "://" + host
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return "", errors.New("webhook URL: the port must be 1–65535")
		}
		if !(scheme == "https" && n == 443 || scheme == "http" && n == 80) {
			origin += ":" + strconv.FormatUint(n, 10)
		}
	}
	return origin, nil
}

// maxCachedOrigins bounds keyCache: a warm function that meets more
// destinations than this starts its cache afresh.
const maxCachedOrigins = 1024

// keyCache keeps the keys derived for recent origins. Deriving (HKDF-SHA256
// per secret) costs more than the signature itself, and a warm function
// sends to the same few origins again and again. The zero value is ready.
type keyCache struct {
	mu   sync.Mutex
	keys map[string][][]byte
}

// get returns origin's keys when they are cached.
func (c *keyCache) get(origin string) ([][]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.keys[origin]
	return k, ok
}

// put caches origin's keys, after dropping every entry when the cache
// holds maxCachedOrigins.
func (c *keyCache) put(origin string, keys [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil || len(c.keys) >= maxCachedOrigins {
		c.keys = make(map[string][][]byte)
	}
	c.keys[origin] = keys
}
