package endpointsend

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// Next is the channel's own sender, which the Sender wraps (the
// processor's Sender: package webhook's or chat's).
type Next interface {
	Send(ctx context.Context, m *notification.Message) error
}

// EndpointReader reads a registered endpoint with its secrets' keys
// (package endpoint's Cache, shared by every record of an execution
// environment). It returns an error wrapping endpoint.ErrNotFound for an
// endpoint that does not exist or was deleted.
type EndpointReader interface {
	Get(ctx context.Context, id string) (endpoint.Endpoint, error)
}

// FreshReader is an EndpointReader that can also return a read at most
// endpoint.MaxRefusalAge old (package endpoint's Cache.Fresh): the Sender
// asks it before it refuses a delivery for good on what Get returned
// (disabled, not found), so that a cached copy older than the enabling or
// creation of the endpoint refuses nothing.
type FreshReader interface {
	EndpointReader
	Fresh(ctx context.Context, id string) (endpoint.Endpoint, error)
}

var _ FreshReader = (*endpoint.Cache)(nil)

// FailureRecorder keeps an endpoint's failed attempts for the endpoints
// API (package endpoint's Table).
type FailureRecorder interface {
	RecordFailure(ctx context.Context, id string, f endpoint.Failure) error
}

// PaceStore shares each endpoint's pace between execution environments
// (package store's *Store, as chat's pace).
type PaceStore interface {
	UpdatePace(ctx context.Context, p store.Pace, change func(*store.Pace) bool) (store.Pace, bool, error)
}

var _ PaceStore = (*store.Store)(nil)

// The error classes of a delivery to a registered endpoint
// (docs/operations.md "Fix the cause" has a row for each).
var (
	// ClassDisabled: the endpoint is disabled (its own state, set through
	// the endpoints API): dead-lettered without a request; redrive after
	// enabling it.
	ClassDisabled = delivery.NewClass("endpoint_disabled")
	// ClassNotFound: no endpoint has the delivery's id (deleted, or never
	// created), or it is another tenant's: dead-lettered.
	ClassNotFound = delivery.NewClass("endpoint_not_found")
	// ClassKindMismatch: the endpoint's kind is not one the delivery's
	// channel sends to (a chat endpoint named by a webhook delivery):
	// dead-lettered.
	ClassKindMismatch = delivery.NewClass("endpoint_kind_mismatch")
	// ClassRateLimited: the endpoint's next turn under its rate limit
	// comes after the invocation ends: retried after the wait, not sent.
	ClassRateLimited = delivery.NewClass("endpoint_rate_limited")
	// ClassUnavailable: the endpoint could not be read (the store or KMS
	// failed): retried.
	ClassUnavailable = delivery.NewClass("endpoint_unavailable")
)

// DestinationPrefix starts the key of an endpoint's health and pace:
// "endpoint:" and the endpoint's id.
const DestinationPrefix = "endpoint:"

// DestinationKey is the key the deliver function keeps endpoint id's
// health (circuit, auto-disable, `herald destinations`) and pace under:
// "endpoint:ep_…". It holds no credential.
func DestinationKey(id string) string { return DestinationPrefix + id }

// IsDestination reports whether s has the form of a key DestinationKey
// returns.
func IsDestination(s string) bool {
	id, ok := strings.CutPrefix(s, DestinationPrefix)
	return ok && endpoint.ValidID(id)
}

// Config configures a Sender.
type Config struct {
	// Endpoints reads the endpoint a delivery names. Required.
	Endpoints EndpointReader
	// Failures records each failed attempt; nil records none.
	Failures FailureRecorder
	// Pace shares the rate limit of endpoints that have one between
	// execution environments; nil paces each Sender alone.
	Pace PaceStore
	// Now is the clock: the pace's and the secrets' grace periods. It
	// must be the real clock wherever a deadline or another environment
	// is involved. Defaults to time.Now.
	Now func() time.Time
}

// Sender delivers a delivery that names a registered endpoint
// (webhook.endpoint or chat.endpoint) and passes every other message to
// the channel's own sender unchanged. Build one per channel with
// [ForWebhook] or [ForChat]; it is safe for concurrent use.
type Sender struct {
	next  Next
	cfg   Config
	kinds []endpoint.Kind
	// to sends m to ep, resolved.
	to    func(ctx context.Context, m *notification.Message, ep endpoint.Endpoint, now time.Time) error
	pacer *pacer
}

// ForWebhook wraps the webhook channel's sender: a delivery naming a
// webhook endpoint is posted to the endpoint's URL, signed with its
// secrets (each version still in its grace period), with its custom
// headers and the herald-event-type header ([webhook.Sender.SendTo]).
func ForWebhook(next *webhook.Sender, cfg Config) *Sender {
	return newSender(next, cfg, []endpoint.Kind{endpoint.KindWebhook},
		func(ctx context.Context, m *notification.Message, ep endpoint.Endpoint, now time.Time) error {
			return next.SendTo(ctx, m, webhook.Target{URL: ep.URL, Keys: signingKeys(ep.Secrets, now), Headers: ep.Headers})
		})
}

// ForChat wraps the chat channel's sender: a delivery naming a chat
// endpoint is posted to the endpoint's (unsealed) URL, with the
// endpoint's kind as the service, under the chat sender's own rules
// (hosts, pace, answers).
func ForChat(next Next, cfg Config) *Sender {
	return newSender(next, cfg, []endpoint.Kind{endpoint.KindSlack, endpoint.KindDiscord, endpoint.KindTeams},
		func(ctx context.Context, m *notification.Message, ep endpoint.Endpoint, _ time.Time) error {
			c := *m.Chat
			c.Endpoint, c.URL, c.Service = "", ep.URL, notification.ChatService(ep.Kind)
			resolved := *m
			resolved.Chat = &c
			return next.Send(ctx, &resolved)
		})
}

func newSender(next Next, cfg Config, kinds []endpoint.Kind, to func(context.Context, *notification.Message, endpoint.Endpoint, time.Time) error) *Sender {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Sender{next: next, cfg: cfg, kinds: kinds, to: to, pacer: newPacer(cfg.Pace)}
}

// EndpointOf is the id of the registered endpoint m names
// (webhook.endpoint or chat.endpoint), "" for a message that names its
// destination inline ([redrive.EndpointOf]).
func EndpointOf(m *notification.Message) string { return redrive.EndpointOf(m) }

// DestinationKey is the key of m's destination health
// (processor.DestinationKeyer): [DestinationKey] of its endpoint for an
// endpoint delivery, else the wrapped sender's own (a chat webhook's),
// else "" (the URL's origin).
func (s *Sender) DestinationKey(m *notification.Message) string {
	if id := EndpointOf(m); id != "" {
		return DestinationKey(id)
	}
	if k, ok := s.next.(interface {
		DestinationKey(*notification.Message) string
	}); ok {
		return k.DestinationKey(m)
	}
	return ""
}

// Send delivers m. A message naming its destination inline goes to the
// wrapped sender as it is. For an endpoint delivery it reads the endpoint
// (again through [FreshReader] when the copy read says disabled or not
// found) and returns, without a request:
//
//   - a *delivery.PermanentError of ClassNotFound when it does not exist
//     or belongs to another tenant than m.Tenant (or m names none),
//   - of ClassKindMismatch when the channel does not send to its kind,
//   - of ClassDisabled when it is disabled,
//   - a *delivery.TransientError of ClassUnavailable when it could not be
//     read, and of ClassRateLimited (RetryAfter the wait) when its next
//     turn under its rate limit comes at or after ctx's deadline;
//
// else it waits for that turn and sends, returning the wrapped sender's
// outcome. Every failed attempt (but one the invocation's deadline cut
// short), and a kind mismatch, is recorded as one of the endpoint's
// failures (Config.Failures), with the error class and a reason that names
// no URL path, query or secret.
func (s *Sender) Send(ctx context.Context, m *notification.Message) error {
	id := EndpointOf(m)
	if id == "" {
		return s.next.Send(ctx, m)
	}
	ep, err := s.cfg.Endpoints.Get(ctx, id)
	if f, ok := s.cfg.Endpoints.(FreshReader); ok && (errors.Is(err, endpoint.ErrNotFound) || err == nil && ep.Disabled != nil) {
		// A refusal for good is made on a recent read only: the cached
		// copy may predate the endpoint's enabling (the runbook's "enable,
		// then redrive") or creation.
		ep, err = f.Fresh(ctx, id)
	}
	switch {
	case errors.Is(err, endpoint.ErrNotFound):
		return delivery.Permanent(ClassNotFound, fmt.Errorf("endpoint %s of delivery %s: not found (deleted, or never created)", id, m.ID))
	case err != nil:
		if ctx.Err() != nil {
			return delivery.Transient(delivery.ClassDeadline, fmt.Errorf("endpoint %s of delivery %s: invocation deadline while reading it", id, m.ID))
		}
		return delivery.Transient(ClassUnavailable, fmt.Errorf("endpoint %s of delivery %s: read: %w", id, m.ID, err))
	case ep.Tenant != m.Tenant:
		// Never deliver one tenant's event to another's endpoint, nor a
		// delivery that names no tenant (notification.Parse requires one;
		// a message built some other way is refused all the same); the
		// error does not say whose it is.
		return delivery.Permanent(ClassNotFound, fmt.Errorf("endpoint %s of delivery %s: not an endpoint of the delivery's tenant", id, m.ID))
	}
	if !s.sends(ep.Kind) {
		err := delivery.Permanent(ClassKindMismatch, fmt.Errorf("endpoint %s of delivery %s: a %s endpoint cannot take a %s delivery", id, m.ID, logSafe(string(ep.Kind)), m.Channel))
		s.recordFailure(ctx, m, ep, err)
		return err
	}
	if d := ep.Disabled; d != nil {
		return delivery.Permanent(ClassDisabled, fmt.Errorf("endpoint %s of delivery %s: disabled by %s at %s; enable it, then redrive", id, m.ID, logSafe(d.By), d.At.UTC().Format(time.RFC3339)))
	}
	if ep.RateLimit > 0 {
		if err := s.pacer.wait(ctx, ep, s.cfg.Now); err != nil {
			return fmt.Errorf("endpoint %s of delivery %s: %w", id, m.ID, err)
		}
	}
	err = s.to(ctx, m, ep, s.cfg.Now())
	if _, class, _ := delivery.Classify(err); err != nil && class != delivery.ClassDeadline {
		// An attempt the invocation's end cut short is herald's timing,
		// not a failure of the endpoint's (its own slowness is the
		// sender's timeout class).
		s.recordFailure(ctx, m, ep, err)
	}
	return err
}

// sends reports whether the Sender's channel sends to endpoints of kind k.
func (s *Sender) sends(k endpoint.Kind) bool {
	for _, kind := range s.kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// signingKeys are the keys of the secrets that sign at now, newest first:
// the current one (no Until) and each rotated-out one still in its grace
// period (now before its Until).
func signingKeys(secrets []endpoint.Secret, now time.Time) [][]byte {
	var keys [][]byte
	for _, s := range secrets {
		if s.Until.IsZero() || now.Before(s.Until) {
			keys = append(keys, s.Key)
		}
	}
	return keys
}

// recordTimeout bounds the write of one failure item: a slow store delays
// the record's settlement by at most this much, and never past the
// delivery context's deadline (the processor's, Reserve before the
// invocation's: the time left to settle the batch is not spent on it).
const recordTimeout = 2 * time.Second

// maxReasonBytes bounds a failure item's reason.
const maxReasonBytes = 512

// recordFailure writes err as one of ep's failures. A failed write, or
// one the delivery context's end cuts short, is dropped: the delivery's
// outcome does not depend on it.
func (s *Sender) recordFailure(ctx context.Context, m *notification.Message, ep endpoint.Endpoint, err error) {
	if s.cfg.Failures == nil {
		return
	}
	_, class, _ := delivery.Classify(err)
	rctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	_ = s.cfg.Failures.RecordFailure(rctx, ep.ID, endpoint.Failure{
		At:        s.cfg.Now(),
		MessageID: m.ID,
		EventID:   m.EventID,
		Class:     string(class),
		Reason:    scrub(delivery.Detail(err), ep),
		Attempt:   delivery.AttemptOf(ctx),
	})
}

// scrub is an error text fit for a failure item: the senders name a URL
// by scheme and host only; any part of the endpoint's URL beyond its host
// (its path and query: a chat URL's token), any of its header values and
// secrets' keys is replaced all the same, longest first, each of 4 bytes
// or more (a shorter one, as the path "/", would garble the text and hide
// little), then the text is cut to maxReasonBytes.
func scrub(text string, ep endpoint.Endpoint) string {
	var secrets []string
	if u, err := url.Parse(ep.URL); err == nil {
		secrets = append(secrets, u.EscapedPath(), u.Path, u.RawQuery, u.Fragment, u.User.String())
		for _, vs := range u.Query() {
			secrets = append(secrets, vs...)
		}
	}
	for _, v := range ep.Headers {
		secrets = append(secrets, v)
	}
	for _, sec := range ep.Secrets {
		secrets = append(secrets, string(sec.Key))
	}
	// Longest first, so that a part is never left half in view.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range secrets {
		if len(sec) >= 4 {
			text = strings.ReplaceAll(text, sec, "[redacted]")
		}
	}
	return delivery.Truncate(text, maxReasonBytes)
}

// logSafe cuts a stored value quoted in an error to a short printable form.
func logSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	return delivery.Truncate(s, 64)
}
