package webhook

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/notification"
)

// Config configures a [Sender].
type Config struct {
	// Secrets are the active Standard Webhooks signing secrets, each
	// "whsec_" followed by the standard base64 encoding of a 24–64 byte key
	// ("Signature scheme" in the specification). Every request is signed with
	// each of them, in order, and carries the signatures space-separated in
	// webhook-signature ("v1,<sig1> v1,<sig2>"), so receivers can move from
	// one secret to the next without a hard cut (docs/security.md,
	// "Rotating the signing secret"). At most [MaxSecrets], no repeats.
	// [SplitSecrets] reads a whitespace-separated list. Secrets and Secret
	// together must hold at least one.
	Secrets []string
	// Secret is one more signing secret, signed with before Secrets: the
	// form of callers that have only one. Optional when Secrets is set.
	Secret string
	// Timeout bounds one attempt: connecting, sending and receiving the
	// response. The caller's context deadline, when sooner, wins. Between
	// outbound.MinTimeout (1 ms) and outbound.MaxTimeout (15 min). Defaults
	// to outbound.DefaultTimeout (15 s; the specification recommends 15–30 s).
	Timeout time.Duration
	// MaxResponseBytes is how much of a response body is read (so that the
	// connection can be reused); a longer body is abandoned and its
	// connection closed. Between 1 B and 16 MiB. Defaults to 64 KiB.
	MaxResponseBytes int64
	// TLSClientConfig is the TLS configuration of the connections
	// (outbound.ClientConfig.TLSClientConfig); it is cloned, never modified. Tests and the local demo pass one trusting their
	// own server. Defaults to the system roots and TLS 1.2 or later.
	TLSClientConfig *tls.Config
	// Now returns the attempt time, which is signed. Defaults to time.Now.
	Now func() time.Time
	// UserAgent is the User-Agent request header. Defaults to
	// outbound.DefaultUserAgent ("herald/1").
	UserAgent string
	// AllowCIDRs are networks a webhook may reach although
	// outbound.CheckDestination blocks them: a private receiver an operator allows
	// on purpose (10.20.0.0/16), or the local receiver of a test or the demo
	// (127.0.0.1/32). Each must be a network address (10.0.0.0/8, not
	// 10.1.2.3/8) and IPv4 networks must be written as IPv4. 0.0.0.0/0 and
	// ::/0 turn the protection off. Defaults to none: every special-purpose
	// destination is blocked (docs/security.md).
	AllowCIDRs []netip.Prefix
	// AllowHTTP lets a webhook use a plain http URL: for local testing
	// only, as the request and its signature then travel in clear text.
	// Defaults to false: https only.
	AllowHTTP bool
	// SecretScope is ScopeDestination (each destination's origin gets its
	// own key, derived from each secret: [DeriveSecret]) or ScopeShared
	// (every destination gets the secrets themselves). Defaults to
	// ScopeDestination, the specification's advice ("Signing keys should be
	// unique per endpoint"): with one key for all, any receiver can sign
	// webhooks that every other receiver accepts.
	SecretScope SecretScope
	// KeyVersions reads each origin's key record, so that one receiver's
	// key can be rotated alone (`herald secret rotate`): with
	// ScopeDestination a request is signed with every active version's key
	// ([KeyVersions.Active]); the record is cached per origin for
	// [KeyVersionsCacheTTL]; a failed read sends nothing and returns a
	// *delivery.TransientError. Ignored with ScopeShared. Defaults to nil:
	// every origin at version 1.
	KeyVersions KeyVersionReader
	// StopStatuses are response statuses, besides 410 Gone, that end a
	// webhook's delivery at once: the notification is dead-lettered as
	// webhook_stop_status instead of retried. Each is 300–599. Defaults to
	// none: every non-2xx status but 410 is retried ("Delivery success and
	// failure" in the specification).
	StopStatuses []int
	// MaxInFlightPerDestination bounds the requests in flight to one
	// destination (origin: scheme, host and port) across every concurrent
	// Send of the Sender, whatever the batch's concurrency; further sends to
	// it wait for a free slot, bounded by their context. The connection pool
	// keeps this many idle connections per destination, so a warm sender
	// opens none to a destination it already talks to. Between 1 and
	// [MaxMaxInFlightPerDestination]. Defaults to
	// [DefaultMaxInFlightPerDestination].
	MaxInFlightPerDestination int

	// healthCheck is outbound.ClientConfig.HealthCheck; tests shorten it.
	healthCheck time.Duration
}

// Defaults of Config.
// (Timeout's and UserAgent's are package outbound's, shared with chat.)
const (
	DefaultMaxResponseBytes = 64 << 10
	// DefaultMaxInFlightPerDestination is what HTTP/2 servers commonly
	// allow on one connection (SETTINGS_MAX_CONCURRENT_STREAMS of 100, the
	// value RFC 9113 §6.5.2 recommends as the least to allow): a batch of 100
	// to one receiver goes out at once, over one HTTP/2 connection or 100
	// HTTP/1.1 ones.
	DefaultMaxInFlightPerDestination = 100
)

// Limits of Config and of the signing key.
// (Timeout's are package outbound's, shared with chat.)
const (
	MaxMaxResponseBytes = 16 << 20
	// MaxMaxInFlightPerDestination is the most requests one Sender sends to
	// one destination at once.
	MaxMaxInFlightPerDestination = 1000
	// MinKeyBytes and MaxKeyBytes bound the decoded secret: "At least 24
	// bytes (192 bits, 512 maximum)" in the specification's signature table.
	MinKeyBytes = 24
	MaxKeyBytes = 64
)

// SecretPrefix starts every Standard Webhooks symmetric secret.
const SecretPrefix = "whsec_"

// MaxSecrets bounds how many secrets sign one request: rotation needs two
// (old and new), and each adds 48 bytes to webhook-signature.
const MaxSecrets = 5

// SplitSecrets splits a list of signing secrets separated by any white space
// (spaces, tabs, newlines): the form of HERALD_WEBHOOK_SECRET and of the
// Secrets Manager secret. It does not check them; [Config.Validate] does.
func SplitSecrets(s string) []string {
	return strings.Fields(s)
}

// secrets returns Secret, when set, followed by Secrets.
func (c Config) secrets() []string {
	if c.Secret == "" {
		return c.Secrets
	}
	return append([]string{c.Secret}, c.Secrets...)
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = outbound.DefaultTimeout
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.UserAgent == "" {
		c.UserAgent = outbound.DefaultUserAgent
	}
	if c.SecretScope == "" {
		c.SecretScope = ScopeDestination
	}
	if c.MaxInFlightPerDestination == 0 {
		c.MaxInFlightPerDestination = DefaultMaxInFlightPerDestination
	}
	return c
}

// Bounds of Config.StopStatuses: a final response that is not a success.
const (
	MinStopStatus = 300
	MaxStopStatus = 599
)

// stopStatuses returns the operator's statuses that stop a delivery; 410
// Gone always does, by its own rule in classify.
func stopStatuses(extra []int) map[int]bool {
	stop := make(map[int]bool, len(extra))
	for _, c := range extra {
		stop[c] = true
	}
	return stop
}

// Validate reports every field of c that is out of range, each error naming
// the field and what it allows. Call it on c.WithDefaults().
func (c Config) Validate() error {
	var errs []error
	if _, err := c.keys(); err != nil {
		errs = append(errs, err)
	}
	if c.Timeout < outbound.MinTimeout || c.Timeout > outbound.MaxTimeout {
		errs = append(errs, fmt.Errorf("webhook timeout: %v, want %v–%v", c.Timeout, outbound.MinTimeout, outbound.MaxTimeout))
	}
	if c.MaxResponseBytes < 1 || c.MaxResponseBytes > MaxMaxResponseBytes {
		errs = append(errs, fmt.Errorf("webhook max response bytes: %d, want 1–%d", c.MaxResponseBytes, MaxMaxResponseBytes))
	}
	if c.Now == nil {
		errs = append(errs, errors.New("webhook now: required"))
	}
	if !notification.ValidWebhookHeaderValue(c.UserAgent) {
		errs = append(errs, errors.New("webhook user agent: must not contain control characters"))
	}
	if c.SecretScope != ScopeDestination && c.SecretScope != ScopeShared {
		errs = append(errs, fmt.Errorf("webhook secret scope: %q, want %q or %q", c.SecretScope, ScopeDestination, ScopeShared))
	}
	for _, code := range c.StopStatuses {
		if code < MinStopStatus || code > MaxStopStatus {
			errs = append(errs, fmt.Errorf("webhook stop statuses: %d, want %d–%d", code, MinStopStatus, MaxStopStatus))
		}
	}
	if c.MaxInFlightPerDestination < 1 || c.MaxInFlightPerDestination > MaxMaxInFlightPerDestination {
		errs = append(errs, fmt.Errorf("webhook max in flight per destination: %d, want 1–%d", c.MaxInFlightPerDestination, MaxMaxInFlightPerDestination))
	}
	for _, p := range c.AllowCIDRs {
		if err := outbound.CheckAllowPrefix(p); err != nil {
			errs = append(errs, fmt.Errorf("webhook allow CIDRs: %w", err))
		}
	}
	return errors.Join(errs...)
}

// keys decodes the secrets. Its errors name a secret by its position (1 for
// the first) when there are several, never by its value.
func (c Config) keys() ([][]byte, error) {
	secrets := c.secrets()
	switch {
	case len(secrets) == 0:
		_, err := DecodeSecret("")
		return nil, err
	case len(secrets) > MaxSecrets:
		return nil, fmt.Errorf("webhook secrets: %d, want at most %d", len(secrets), MaxSecrets)
	}
	var errs []error
	keys := make([][]byte, 0, len(secrets))
	for i, s := range secrets {
		wrap := func(err error) error {
			if len(secrets) == 1 {
				return err
			}
			return fmt.Errorf("secret %d of %d: %w", i+1, len(secrets), err)
		}
		key, err := DecodeSecret(s)
		if err != nil {
			errs = append(errs, wrap(err))
			continue
		}
		if n := len(key); n < MinKeyBytes || n > MaxKeyBytes {
			errs = append(errs, wrap(fmt.Errorf("webhook secret: key is %d bytes, want %d–%d", n, MinKeyBytes, MaxKeyBytes)))
			continue
		}
		if j := slices.Index(secrets[:i], s); j >= 0 {
			errs = append(errs, wrap(fmt.Errorf("webhook secret: repeats secret %d", j+1)))
			continue
		}
		keys = append(keys, key)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return keys, nil
}
