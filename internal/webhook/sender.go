package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/tracecontext"
	"github.com/heraldhq/herald/notification"
)

// Sender posts webhooks. It is safe for concurrent use and reuses
// connections across calls: build one per process.
type Sender struct {
	client           *http.Client
	keys             [][]byte
	timeout          time.Duration
	maxResponseBytes int64
	now              func() time.Time
	userAgent        string
	allow            []netip.Prefix                  // Config.AllowCIDRs, for the check before resolution
	dialed           func(address string, err error) // tests only
	allowHTTP        bool
	scope            SecretScope
	stop             map[int]bool // the operator's statuses that dead-letter at once (410 is its own rule)
	perDestination   *originLimiter
	derived          keyCache // ScopeDestination's keys of recent origins and versions
	versions         KeyVersionReader
	versionCache     versionCache
}

// NewSender returns a Sender for cfg with defaults applied, or the errors of
// [Config.Validate], each naming the field at fault (for example "webhook
// secret: must start with whsec_").
func NewSender(cfg Config) (*Sender, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	keys, err := cfg.keys()
	if err != nil { // unreachable: Validate decoded them
		return nil, err
	}
	s := &Sender{
		allow:            slices.Clone(cfg.AllowCIDRs),
		allowHTTP:        cfg.AllowHTTP,
		keys:             keys,
		timeout:          cfg.Timeout,
		maxResponseBytes: cfg.MaxResponseBytes,
		now:              cfg.Now,
		userAgent:        cfg.UserAgent,
		scope:            cfg.SecretScope,
		stop:             stopStatuses(cfg.StopStatuses),
		perDestination:   newOriginLimiter(cfg.MaxInFlightPerDestination),
		versions:         cfg.KeyVersions,
	}
	s.client = outbound.NewClient(outbound.ClientConfig{
		Timeout:             cfg.Timeout,
		TLSClientConfig:     cfg.TLSClientConfig,
		AllowCIDRs:          cfg.AllowCIDRs,
		MaxIdleConnsPerHost: cfg.MaxInFlightPerDestination,
		HealthCheck:         cfg.healthCheck,
		Dialed:              s.dial,
	})
	return s, nil
}

// dial passes what the transport is about to dial to the hook tests set
// (export_test.go); nothing otherwise.
func (s *Sender) dial(address string, err error) {
	if s.dialed != nil {
		s.dialed(address, err)
	}
}

// Send makes one delivery attempt of m, a webhook message, as described in
// the package documentation. It first waits, until ctx is done at the
// latest, for one of the Config.MaxInFlightPerDestination slots of the URL's
// destination; the attempt then lasts at most Config.Timeout, or until ctx
// is done if sooner.
//
// The payload goes into the envelope as it is: notification.Parse, which
// every message the processor delivers comes from, has checked that it is
// one JSON value, and scanning it again would cost about as much CPU as
// signing it. (The id and headers are checked here, cheaply, because a bad
// one would change the request itself.)
//
// It returns nil when the endpoint answered 2xx, else a
// *delivery.PermanentError or *delivery.TransientError whose Class names the
// cause (see the package documentation). Error texts name the endpoint by
// scheme and host only.
func (s *Sender) Send(ctx context.Context, m *notification.Message) error {
	if m == nil || m.Webhook == nil {
		return delivery.Permanent(delivery.ClassInvalidMessage, errors.New("webhook: the message has no webhook"))
	}
	return s.send(ctx, m, Target{URL: m.Webhook.URL, Headers: m.Webhook.Headers})
}

// Target is where [Sender.SendTo] posts and how it signs: a registered
// endpoint's URL, its signing keys and its custom headers, read by the
// caller from the endpoint store.
type Target struct {
	// URL is the absolute https URL; the rules of a message's webhook.url
	// apply to it (scheme, blocked addresses at dial time).
	URL string
	// Keys are the HMAC-SHA256 keys that sign the request, newest first:
	// one "v1,…" signature each, space-separated ("Signature scheme" in
	// the specification: the receiver accepts any one that verifies).
	// Required.
	Keys [][]byte
	// Headers are added to the request before herald's own, under the
	// rules of a message's webhook.headers (no reserved header).
	Headers map[string]string
}

// HeaderEventType names the event type on a request to a registered
// endpoint ([Sender.SendTo]), beside the envelope's "type", so that a
// receiver can route before it parses the body.
const HeaderEventType = "herald-event-type"

// SendTo makes one delivery attempt of m, a webhook message naming a
// registered endpoint, to to.URL, signed with to.Keys instead of the keys
// Send derives for the URL's origin, with to.Headers and
// [HeaderEventType]. Everything else (limits, timeouts, errors) is as
// [Sender.Send]'s. A Target with no key is a *delivery.PermanentError of
// class invalid_message: nothing unsigned is sent.
func (s *Sender) SendTo(ctx context.Context, m *notification.Message, to Target) error {
	if m == nil || m.Webhook == nil {
		return delivery.Permanent(delivery.ClassInvalidMessage, errors.New("webhook: the message has no webhook"))
	}
	if len(to.Keys) == 0 {
		return delivery.Permanent(delivery.ClassInvalidMessage, fmt.Errorf("webhook %s: no signing key for the endpoint", m.ID))
	}
	headers := make(map[string]string, len(to.Headers)+1)
	for k, v := range to.Headers {
		if !strings.EqualFold(k, HeaderEventType) { // herald's own wins
			headers[k] = v
		}
	}
	if m.Webhook.EventType != "" {
		headers[HeaderEventType] = m.Webhook.EventType
	}
	to.Headers = headers
	return s.send(ctx, m, to)
}

// send posts m to to.URL, signed with to.Keys or, when there are none,
// with the keys of the URL's origin.
func (s *Sender) send(ctx context.Context, m *notification.Message, to Target) error {
	w := m.Webhook
	if m.ID == "" || !notification.ValidWebhookHeaderValue(m.ID) {
		return delivery.Permanent(delivery.ClassInvalidMessage, errors.New("webhook: the message id is empty or has control characters"))
	}
	u, err := url.Parse(to.URL)
	if err != nil {
		return delivery.Permanent(ClassInvalidURL, fmt.Errorf("webhook %s: the URL does not parse", m.ID))
	}
	t := target{id: m.ID, endpoint: endpoint(u), u: u}
	switch {
	case u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return delivery.Permanent(ClassInvalidURL, t.errorf("the URL must be absolute and https"))
	case u.Scheme == "http" && !s.allowHTTP:
		return delivery.Permanent(ClassInvalidURL, t.errorf("%s", outbound.PlainHTTPRefused))
	}
	if err := s.checkHost(t, u.Hostname()); err != nil {
		return err
	}
	if err := t.checkHeaders(to.Headers); err != nil {
		return err
	}
	// The origin names the destination for its derived key and its limit
	// on requests in flight.
	origin, err := originOf(u)
	if err != nil {
		return delivery.Permanent(ClassInvalidURL, t.errorf("%v", err))
	}
	keys := to.Keys
	if len(keys) == 0 {
		// The origin's key versions are read before the send: a failed
		// read sends nothing (no signature, or a stale key's, would be
		// refused) and the record is retried later.
		versions, err := s.versionsFor(ctx, origin, s.now())
		if err != nil {
			return err
		}
		if keys, err = s.keysFor(origin, versions); err != nil {
			return delivery.Permanent(ClassInvalidURL, t.errorf("%v", err))
		}
	}
	if ctx.Err() != nil {
		return t.deadline(ctx)
	}
	// At most Config.MaxInFlightPerDestination requests to one origin at
	// once. Waiting for a slot is bounded by ctx alone: the attempt's
	// Timeout, and its signed timestamp, start once it has one. The slot is
	// held until the response body is read.
	release, err := s.perDestination.acquire(ctx, origin)
	if err != nil {
		return t.deadline(ctx)
	}
	defer release()

	at := s.now()
	body := envelope(w.EventType, eventTime(m, at), w.Payload)
	reqCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, to.URL, bytes.NewReader(body))
	if err != nil {
		return delivery.Permanent(ClassInvalidURL, t.errorf("cannot build a request for the URL"))
	}
	for _, k := range slices.Sorted(maps.Keys(to.Headers)) { // first, so that herald's own headers win
		req.Header.Set(k, to.Headers[k])
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.userAgent)
	req.Header.Set(HeaderID, m.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(HeaderSignature, sign(keys, m.ID, at, body))
	// The send's span, when traced, for the receiver to join (W3C Trace
	// Context); nothing when not.
	tracecontext.InjectHeader(ctx, req.Header)
	t.sent = sentCredentials(u, to.Headers, req.Header.Get(HeaderSignature))

	resp, err := s.client.Do(req)
	if err != nil {
		var blocked *outbound.BlockedError
		if errors.As(err, &blocked) {
			return t.blocked(blocked)
		}
		if ctx.Err() != nil {
			return t.deadline(ctx)
		}
		return t.transportError(err, s.timeout)
	}
	excerpt := s.drain(resp.Body, resp.StatusCode/100 != 2)
	resp.Body.Close()
	return t.statusError(resp, excerpt, at, s.stop)
}

// keysFor returns the keys that sign a request to origin: the active
// secrets' keys, or with ScopeDestination the key each derives for origin
// at each of versions ([DeriveSecretVersion]), newest version first.
func (s *Sender) keysFor(origin string, versions []int) ([][]byte, error) {
	if s.scope == ScopeShared {
		return s.keys, nil
	}
	var out [][]byte
	for _, v := range versions {
		id := origin // version 1's cache entry is the origin alone
		if v > 1 {
			id += " version " + strconv.Itoa(v)
		}
		keys, ok := s.derived.get(id)
		if !ok {
			keys = make([][]byte, len(s.keys))
			for i, k := range s.keys {
				var err error
				if keys[i], err = deriveKey(k, origin, v); err != nil {
					return nil, err
				}
			}
			s.derived.put(id, keys)
		}
		out = append(out, keys...)
	}
	return out, nil
}

// eventTime is the envelope's timestamp: when the event happened, the same
// on every attempt ("Payload structure" in the specification: "not
// necessarily the same of when it was delivered"). It is the message's
// created_at; the processor sets that, when the producer did not, to the
// time SQS accepted the message (SentTimestamp). Only a caller that sets
// neither gets the attempt time at.
func eventTime(m *notification.Message, at time.Time) time.Time {
	if m.CreatedAt != nil && !m.CreatedAt.IsZero() {
		return *m.CreatedAt
	}
	return at.Truncate(time.Second) // as signed
}

// sign returns the webhook-signature value: one "v1,<signature>" per key,
// space-separated ("Signature scheme" in the specification: a receiver
// accepts the request when any of them verifies).
func sign(keys [][]byte, id string, at time.Time, body []byte) string {
	if len(keys) == 1 {
		return Sign(keys[0], id, at, body)
	}
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = Sign(k, id, at, body)
	}
	return strings.Join(sigs, " ")
}

// checkHost fails a URL whose host [CheckHost] refuses: a
// webhook_blocked_destination for a blocked address or name, else an
// invalid_url.
func (s *Sender) checkHost(t target, host string) error {
	err := CheckHost(host, s.allow)
	var blocked *outbound.BlockedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &blocked):
		return t.blocked(blocked)
	}
	return delivery.Permanent(ClassInvalidURL, t.errorf("%v", err))
}

// Standard Webhooks headers ("Webhook headers" in the specification).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// envelope returns the body {"type":…,"timestamp":…,"data":…}: the event
// type, the event time in RFC 3339 (UTC, with its fraction of a second when
// it has one) and the payload byte for byte ("Payload structure" in the
// specification).
func envelope(eventType string, at time.Time, payload json.RawMessage) []byte {
	typ, _ := json.Marshal(eventType) // a string always marshals
	payload = bytes.TrimSpace(payload)
	b := make([]byte, 0, len(`{"type":,"timestamp":"2006-01-02T15:04:05.999999999Z","data":}`)+len(typ)+len(payload))
	b = append(b, `{"type":`...)
	b = append(b, typ...)
	b = append(b, `,"timestamp":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","data":`...)
	b = append(b, payload...)
	return append(b, '}')
}

// drain reads at most maxResponseBytes of body and, when keep is set,
// returns its first outbound.ExcerptCaptureBytes bytes. A body read to its end lets the
// connection be reused; a longer one is abandoned, and closing it closes the
// connection. Read errors are ignored: the status already decided the
// outcome.
func (s *Sender) drain(body io.Reader, keep bool) []byte {
	r := io.LimitReader(body, s.maxResponseBytes)
	var excerpt []byte
	if keep {
		excerpt = make([]byte, min(outbound.ExcerptCaptureBytes, s.maxResponseBytes))
		n, err := io.ReadFull(r, excerpt)
		excerpt = excerpt[:n]
		if err != nil {
			return excerpt
		}
	}
	_, _ = io.Copy(io.Discard, r)
	return excerpt
}
