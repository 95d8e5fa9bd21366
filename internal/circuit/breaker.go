package circuit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// Sender is what a Breaker wraps and what it returns: a channel's sender,
// or another middleware around it. It returns nil when the notification
// was delivered, or an error classified by package delivery.
type Sender interface {
	Send(ctx context.Context, m *notification.Message) error
}

// HealthStore keeps each destination's health, shared by every execution
// environment (package store).
type HealthStore interface {
	// RecentHealth reads the destination's health, eventually consistent
	// (the Breaker keeps its copy for healthCacheTTL anyway); a
	// *store.Error when the store failed.
	RecentHealth(ctx context.Context, origin string) (store.Health, error)
	// UpdateHealth writes change applied to h unless another writer came
	// first (then to what it left); false when change wrote nothing.
	UpdateHealth(ctx context.Context, h store.Health, change func(*store.Health) bool) (store.Health, bool, error)
}

var _ HealthStore = (*store.Store)(nil)

// Announcer publishes an operational event (package announce).
type Announcer interface {
	Publish(ctx context.Context, detailType string, e announce.Event) error
}

var _ Announcer = (*announce.Publisher)(nil)

// healthCacheTTL is how long an execution environment trusts its copy of
// a destination's health before reading the store again: a batch reads
// each destination once, and another environment's opening or closing is
// seen within it.
const healthCacheTTL = 5 * time.Second

// successWriteInterval is how often a healthy destination's last success
// is written: a delivery to one with no failures writes only when the
// stored last success is older than this.
const successWriteInterval = time.Minute

// announceRetryInterval is how often an environment tries again to publish
// a destination's pending events, so that a bus that keeps refusing them
// costs one attempt a minute per destination, not one per health read.
const announceRetryInterval = time.Minute

// Config configures a Breaker.
type Config struct {
	// Rules are the state machine's numbers; Threshold 0 turns the
	// circuit off (Wrap then returns the sender it is given).
	Rules
	// Health keeps each destination's health. Required.
	Health HealthStore
	// Announcer, when set, publishes destination.disabled when this
	// environment's write disables a destination (announce.Publisher):
	// the event is recorded in the destination's health item with that
	// write and removed once published. One not published is logged
	// (WARN) and published by the next environment that reads the item
	// (at most once a minute per environment and destination) or the next
	// `herald destinations` command on it. Defaults to nil: nothing is
	// published.
	Announcer Announcer
	// Logger receives the WARN line of an event not published. Defaults
	// to slog.Default().
	Logger *slog.Logger
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

// Breaker is the circuit per destination as a middleware around a send
// (Wrap): it holds a record back while its destination's circuit is open,
// lets one probe through at a time, dead-letters a disabled destination's
// records, and counts each send's answer in the destination's health. An
// execution environment keeps one Breaker, whose copy of each
// destination's health (read at most once per healthCacheTTL) every
// channel's sender shares. It is safe for concurrent use.
type Breaker struct {
	cfg Config
	mu  sync.Mutex
	m   map[string]*entry
}

// New returns a Breaker, or an error naming the first out-of-range field
// of cfg.
func New(cfg Config) (*Breaker, error) {
	switch {
	case cfg.Health == nil:
		return nil, errors.New("circuit: Health is required")
	case cfg.Threshold < 0:
		return nil, fmt.Errorf("circuit: Threshold %d: must be at least 0", cfg.Threshold)
	case cfg.DisableAfter < 0:
		return nil, fmt.Errorf("circuit: DisableAfter %s: must not be negative", cfg.DisableAfter)
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = DefaultProbeInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Breaker{cfg: cfg}, nil
}

// entry is one destination's health in this environment, with its own
// lock: the records of one destination wait for one read or write of it,
// never for another destination's.
type entry struct {
	mu     sync.Mutex
	h      store.Health
	readAt time.Time // zero until read
	// announcedAt is when this environment last tried to publish the
	// destination's pending events (announcePending).
	announcedAt time.Time
}

func (b *Breaker) entry(key string) *entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]*entry{}
	}
	e, ok := b.m[key]
	if !ok {
		e = &entry{h: store.Health{Origin: key}}
		b.m[key] = e
	}
	return e
}

// Wrap returns next behind the circuit: each send to a destination (Key)
// passes its circuit first and reports its answer after. It returns next
// itself when the circuit is off (Threshold 0). The result keeps next's
// DestinationKey (delivery.KeepDestinationKey).
func (b *Breaker) Wrap(next Sender) Sender {
	if b.cfg.Threshold <= 0 {
		return next
	}
	return delivery.KeepDestinationKey(&guarded{b: b, next: next}, next)
}

// Key is the key of m's destination health as sent through s: s's
// DestinationKey (delivery.DestinationKeyer; a chat webhook's identity), else the origin of a webhook's or chat webhook's URL as
// webhook.Origin writes it (the form a keys item is keyed by too); "" for
// an email or a URL without a usable origin.
func Key(s Sender, m *notification.Message) string {
	if k, ok := s.(delivery.DestinationKeyer); ok {
		if key := k.DestinationKey(m); key != "" {
			return key
		}
	}
	raw := m.DestinationURL()
	if raw == "" {
		return ""
	}
	origin, err := webhook.Origin(raw)
	if err != nil {
		return ""
	}
	return origin
}

// guarded is a sender behind its destinations' circuits.
type guarded struct {
	b    *Breaker
	next Sender
}

func (g *guarded) Send(ctx context.Context, m *notification.Message) error {
	key := Key(g.next, m)
	if key == "" {
		return g.next.Send(ctx, m)
	}
	t, err := g.b.pass(ctx, key)
	if t == nil {
		return err
	}
	sendErr := g.next.Send(ctx, m)
	after, cancel := delivery.AfterSend(ctx)
	defer cancel()
	g.b.report(after, t, sendErr)
	return sendErr
}

// ticket is a send's pass through its destination's circuit, to report
// the send's answer with.
type ticket struct {
	e     *entry
	probe bool // it holds the probe lease
	owner string
}

// pass decides whether a record may be sent to key. A closed circuit
// sends it; an open one lets one probe through at a time, from the probe
// time on, holding a lease until the invocation ends
// (delivery.LeaseUntil), and holds every other record back with a
// transient ClassCircuitOpen error whose RetryAfter is the probe time: the
// processor retries it after its backoff delay or then, whichever is
// later, so its receives are spent no faster than failed attempts spend
// them. A disabled destination's record gets a permanent
// ClassDestinationDisabled error (dead-lettered at once). A store failure
// sends (fails open), noted on the attempt (delivery.Attempt.StoreFailed).
// A nil ticket means not sent, with the error to return.
func (b *Breaker) pass(ctx context.Context, key string) (*ticket, error) {
	attempt := delivery.AttemptFrom(ctx)
	e := b.entry(key)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := b.cfg.Now()
	if e.readAt.IsZero() || now.Sub(e.readAt) >= healthCacheTTL {
		h, err := b.cfg.Health.RecentHealth(ctx, key)
		// A failed read keeps the last copy for the cache's lifetime, so a
		// failing store is not asked once per record.
		e.readAt = now
		if err != nil {
			attempt.StoreFailed(err)
			return &ticket{e: e}, nil
		}
		e.h = h
		b.announcePending(ctx, e, now)
	}
	if e.h.Disabled() {
		return nil, disabledError(e.h)
	}
	if !b.cfg.Open(e.h) {
		return &ticket{e: e}, nil
	}
	if !now.Before(b.cfg.NextProbe(e.h)) {
		owner := store.NewOwner()
		until := delivery.LeaseUntil(ctx, now)
		h, took, err := b.cfg.Health.UpdateHealth(ctx, e.h, func(h *store.Health) bool {
			if h.Disabled() || !b.cfg.Open(*h) || now.Before(b.cfg.NextProbe(*h)) {
				return false
			}
			h.ProbeUntil, h.ProbeOwner = until, owner
			return true
		})
		if err != nil {
			attempt.StoreFailed(err)
			return &ticket{e: e}, nil
		}
		e.h, e.readAt = h, now
		if h.Disabled() {
			// Another environment disabled it since this one read it.
			return nil, disabledError(h)
		}
		if took || !b.cfg.Open(h) {
			return &ticket{e: e, probe: took, owner: owner}, nil
		}
	}
	h := e.h
	return nil, &delivery.TransientError{
		Class:      ClassCircuitOpen,
		RetryAfter: b.cfg.NextProbe(h).Sub(now),
		Err: fmt.Errorf("not sent: the circuit of %s is open after %d consecutive failures, the last %s at %s; next probe at %s",
			key, h.Failures, h.FailureClass, h.LastFailure.UTC().Format(time.RFC3339), b.cfg.NextProbe(h).UTC().Format(time.RFC3339)),
	}
}

// report records a send's answer in its destination's health: a delivery
// closes the circuit (written when there were failures, a probe, or a
// last success older than successWriteInterval); an origin-down failure
// counts one more, or starts a new run when the last was FailureRunGap or
// longer ago (written while the circuit is closed and for a probe: once it
// is open, other environments' late failures add nothing); a destination
// that said it is gone is disabled at once; any other answer (also a
// record a middleware further in did not send) changes nothing but gives a
// probe lease back. Writes use ctx, which runs to the invocation's
// deadline.
func (b *Breaker) report(ctx context.Context, t *ticket, sendErr error) {
	attempt := delivery.AttemptFrom(ctx)
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	now := b.cfg.Now()
	_, class, _ := delivery.Classify(sendErr)
	var change func(*store.Health) bool
	disabling := false
	switch {
	case sendErr == nil:
		if !t.probe && t.e.h.Failures == 0 && now.Sub(t.e.h.LastSuccess) < successWriteInterval {
			return
		}
		change = func(h *store.Health) bool {
			h.Failures, h.LastSuccess, h.FailingSince = 0, now, time.Time{}
			h.ProbeUntil, h.ProbeOwner = time.Time{}, ""
			return true
		}
	case delivery.OriginDown(class):
		if !t.probe && b.cfg.Open(t.e.h) {
			return
		}
		change = func(h *store.Health) bool {
			// Applied again to another writer's item when it came first:
			// only the write that succeeds says whether it disabled.
			disabling = false
			if h.Failures == 0 || h.FailingSince.IsZero() || RunEnded(*h, now) {
				h.Failures, h.FailingSince = 0, now
			}
			h.Failures++
			h.LastFailure, h.FailureClass = now, string(class)
			if b.cfg.Disables(*h, now) {
				b.disableByHerald(h, now)
				disabling = true
			}
			if h.ProbeOwner == t.owner {
				h.ProbeUntil, h.ProbeOwner = time.Time{}, ""
			}
			return true
		}
	case delivery.DestinationGone(sendErr):
		// The destination said it is gone (a chat webhook deleted): it is
		// disabled at once, so that no later notification makes a request
		// to it, until an operator enables it.
		change = func(h *store.Health) bool {
			disabling = false
			if h.Disabled() {
				return false
			}
			h.LastFailure, h.FailureClass = now, string(class)
			b.disableByHerald(h, now)
			if h.ProbeOwner == t.owner {
				h.ProbeUntil, h.ProbeOwner = time.Time{}, ""
			}
			disabling = true
			return true
		}
	case t.probe:
		change = func(h *store.Health) bool {
			if h.ProbeOwner != t.owner {
				return false
			}
			h.ProbeUntil, h.ProbeOwner = time.Time{}, ""
			return true
		}
	default:
		return
	}
	h, wrote, err := b.cfg.Health.UpdateHealth(ctx, t.e.h, change)
	if err != nil {
		attempt.StoreFailed(err)
		return
	}
	t.e.h, t.e.readAt = h, now
	if wrote && disabling {
		attempt.DisabledDestination()
		b.announcePending(ctx, t.e, now)
	}
}

// disableByHerald marks h disabled by herald at now and, with an Announcer,
// records destination.disabled in the same write, to be published
// (announcePending) until EventBridge takes it.
func (b *Breaker) disableByHerald(h *store.Health, now time.Time) {
	h.DisabledAt, h.DisabledBy = now, store.DisabledByHerald
	if b.cfg.Announcer != nil {
		announce.Record(h, announce.Pending{DetailType: announce.DestinationDisabled, Detail: DisabledEvent(*h, now)})
	}
}

// announcePending publishes e's pending events (announce.Finish) when
// there is an Announcer, there are some and this environment did not try
// within announceRetryInterval; one not published is logged (WARN
// "destination event not published") and stays pending for a later read
// or command. The caller holds e.mu.
func (b *Breaker) announcePending(ctx context.Context, e *entry, now time.Time) {
	if b.cfg.Announcer == nil || e.h.PendingEvents == "" ||
		(!e.announcedAt.IsZero() && now.Sub(e.announcedAt) < announceRetryInterval) {
		return
	}
	e.announcedAt = now
	h, err := announce.Finish(ctx, b.cfg.Announcer, b.cfg.Health, e.h)
	e.h = h
	if err != nil {
		b.cfg.Logger.WarnContext(ctx, "destination event not published", "origin", e.h.Origin, "error", err.Error())
	}
}

// disabledError is the permanent error of a record not sent because its
// destination h is disabled.
func disabledError(h store.Health) error {
	return delivery.Permanent(ClassDestinationDisabled,
		fmt.Errorf("not sent: %s is disabled (by %s at %s; the last failure %s at %s); redrive after `herald destinations enable %s`",
			h.Origin, h.DisabledBy, h.DisabledAt.UTC().Format(time.RFC3339), orNone(h.FailureClass), orNoneTime(h.LastFailure), h.Origin))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func orNoneTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
