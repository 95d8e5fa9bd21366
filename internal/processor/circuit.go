package processor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// HealthStore keeps each destination origin's health, shared by every
// execution environment (package store).
type HealthStore interface {
	// Health reads the origin's health; a *store.Error when the store failed.
	Health(ctx context.Context, origin string) (store.Health, error)
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
// an origin's health before reading the store again: a batch reads each
// origin once, and another environment's opening or closing is seen
// within it.
const healthCacheTTL = 5 * time.Second

// successWriteInterval is how often a healthy origin's last success is
// written: a delivery to an origin with no failures writes only when the
// stored last success is older than this.
const successWriteInterval = time.Minute

// origins is an execution environment's copy of origin health, one entry
// per origin, each with its own lock: the records of one origin wait for
// one read or write of it, never for another origin's.
type origins struct {
	mu sync.Mutex
	m  map[string]*originEntry
}

type originEntry struct {
	mu     sync.Mutex
	h      store.Health
	readAt time.Time // zero until read
	// announcedAt is when this environment last tried to publish the
	// origin's pending events (announcePending).
	announcedAt time.Time
}

func (o *origins) entry(origin string) *originEntry {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]*originEntry{}
	}
	e, ok := o.m[origin]
	if !ok {
		e = &originEntry{h: store.Health{Origin: origin}}
		o.m[origin] = e
	}
	return e
}

// ticket is a record's pass through its origin's circuit, to report the
// send's result with.
type ticket struct {
	e     *originEntry
	probe bool // it holds the probe lease
	owner string
}

// DestinationKeyer is circuit.DestinationKeyer: a Sender that names each
// message's destination for the circuit.
type DestinationKeyer = circuit.DestinationKeyer

// rules are the circuit's numbers of cfg.
func (p *Processor) rules() circuit.Rules {
	return circuit.Rules{Threshold: p.cfg.CircuitThreshold, ProbeInterval: p.cfg.CircuitProbeInterval, DisableAfter: p.cfg.DisableAfter}
}

// destination is the key of n's destination health: its Sender's
// DestinationKey, else the origin of a webhook's or chat webhook's URL as
// webhook.Origin writes it (the form a keys item is keyed by too); "" for
// an email or a URL without a usable origin.
func (p *Processor) destination(n *notification.Message) string {
	if k, ok := p.cfg.Senders[n.Channel].(DestinationKeyer); ok {
		if key := k.DestinationKey(n); key != "" {
			return key
		}
	}
	raw := n.DestinationURL()
	if raw == "" {
		return ""
	}
	origin, err := webhook.Origin(raw)
	if err != nil {
		return ""
	}
	return origin
}

// passCircuit decides, when there is a health store, whether r may be sent
// to its origin. A closed circuit sends it; an open one lets one probe
// through at a time, from the probe time on, holding a lease until until,
// and settles every other record as a transient circuit.ClassCircuitOpen failure:
// retried after its backoff delay or at the probe time, whichever is later,
// so its receives are spent no faster than failed attempts spend them.
// A store failure sends (fails open), with r.storeErr set.
func (p *Processor) passCircuit(ctx, deliverCtx context.Context, r *record, until time.Time) (*ticket, bool) {
	if p.cfg.Health == nil || p.cfg.CircuitThreshold <= 0 {
		return nil, true
	}
	origin := p.destination(r.n)
	if origin == "" {
		return nil, true
	}
	e := p.origins.entry(origin)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := p.cfg.Now()
	if e.readAt.IsZero() || now.Sub(e.readAt) >= healthCacheTTL {
		h, err := p.cfg.Health.Health(deliverCtx, origin)
		// A failed read keeps the last copy for the cache's lifetime, so a
		// failing store is not asked once per record.
		e.readAt = now
		if err != nil {
			r.storeErr = errors.Join(r.storeErr, err)
			return &ticket{e: e}, true
		}
		e.h = h
		p.announcePending(ctx, e, now)
	}
	if e.h.Disabled() {
		p.disabled(ctx, r, e.h)
		return nil, false
	}
	if !p.rules().Open(e.h) {
		return &ticket{e: e}, true
	}
	if !now.Before(p.rules().NextProbe(e.h)) {
		owner := store.NewOwner()
		h, took, err := p.cfg.Health.UpdateHealth(deliverCtx, e.h, func(h *store.Health) bool {
			if h.Disabled() || !p.rules().Open(*h) || now.Before(p.rules().NextProbe(*h)) {
				return false
			}
			h.ProbeUntil, h.ProbeOwner = until, owner
			return true
		})
		if err != nil {
			r.storeErr = errors.Join(r.storeErr, err)
			return &ticket{e: e}, true
		}
		e.h, e.readAt = h, now
		if h.Disabled() {
			// Another environment disabled it since this one read it.
			p.disabled(ctx, r, h)
			return nil, false
		}
		if took || !p.rules().Open(h) {
			return &ticket{e: e, probe: took, owner: owner}, true
		}
	}
	h := e.h
	p.fail(ctx, r, &delivery.TransientError{
		Class:      circuit.ClassCircuitOpen,
		RetryAfter: p.rules().NextProbe(h).Sub(now),
		Err: fmt.Errorf("not sent: the circuit of %s is open after %d consecutive failures, the last %s at %s; next probe at %s",
			origin, h.Failures, h.FailureClass, h.LastFailure.UTC().Format(time.RFC3339), p.rules().NextProbe(h).UTC().Format(time.RFC3339)),
	})
	return nil, false
}

// reportCircuit records a sent record's result in its origin's health: a
// delivery closes the circuit (written when there were failures, a probe,
// or a last success older than successWriteInterval); an origin-down
// failure counts one more, or starts a new run when the last was
// FailureRunGap or longer ago (written while the circuit is closed and for
// a probe: once it is open, other environments' late failures add nothing);
// any other failure changes nothing but gives a probe lease back. Writes
// use ctx, the invocation's.
func (p *Processor) reportCircuit(ctx context.Context, r *record, t *ticket, sendErr error) {
	if t == nil {
		return
	}
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	now := p.cfg.Now()
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
		if !t.probe && p.rules().Open(t.e.h) {
			return
		}
		change = func(h *store.Health) bool {
			// Applied again to another writer's item when it came first:
			// only the write that succeeds says whether it disabled.
			disabling = false
			if h.Failures == 0 || h.FailingSince.IsZero() || circuit.RunEnded(*h, now) {
				h.Failures, h.FailingSince = 0, now
			}
			h.Failures++
			h.LastFailure, h.FailureClass = now, string(class)
			if p.rules().Disables(*h, now) {
				p.disableByHerald(h, now)
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
			p.disableByHerald(h, now)
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
	h, wrote, err := p.cfg.Health.UpdateHealth(ctx, t.e.h, change)
	if err != nil {
		r.storeErr = errors.Join(r.storeErr, err)
		return
	}
	r.disabledOrigin = wrote && disabling
	t.e.h, t.e.readAt = h, now
	if r.disabledOrigin {
		p.announcePending(ctx, t.e, now)
	}
}

// disableByHerald marks h disabled by herald at now and, with an Announcer,
// records destination.disabled in the same write, to be published
// (announcePending) until EventBridge takes it.
func (p *Processor) disableByHerald(h *store.Health, now time.Time) {
	h.DisabledAt, h.DisabledBy = now, store.DisabledByHerald
	if p.cfg.Announcer != nil {
		announce.Record(h, announce.Pending{DetailType: announce.DestinationDisabled, Detail: circuit.DisabledEvent(*h, now)})
	}
}

// announceRetryInterval is how often an environment tries again to publish
// an origin's pending events, so that a bus that keeps refusing them costs
// one attempt a minute per origin, not one per health read.
const announceRetryInterval = time.Minute

// announcePending publishes e's pending events (announce.Finish) when
// there is an Announcer, there are some and this environment did not try
// within announceRetryInterval; one not published is logged (WARN
// "destination event not published") and stays pending for a later read
// or command. The caller holds e.mu.
func (p *Processor) announcePending(ctx context.Context, e *originEntry, now time.Time) {
	if p.cfg.Announcer == nil || e.h.PendingEvents == "" ||
		(!e.announcedAt.IsZero() && now.Sub(e.announcedAt) < announceRetryInterval) {
		return
	}
	e.announcedAt = now
	h, err := announce.Finish(ctx, p.cfg.Announcer, p.cfg.Health, e.h)
	e.h = h
	if err != nil {
		p.cfg.Logger.WarnContext(ctx, "destination event not published", "origin", e.h.Origin, "error", err.Error())
	}
}

// disabled dead-letters r, whose origin h is disabled, without sending it.
func (p *Processor) disabled(ctx context.Context, r *record, h store.Health) {
	p.deadLetter(ctx, r, delivery.Permanent(circuit.ClassDestinationDisabled,
		fmt.Errorf("not sent: %s is disabled (by %s at %s; the last failure %s at %s); redrive after `herald destinations enable %s`",
			h.Origin, h.DisabledBy, h.DisabledAt.UTC().Format(time.RFC3339), orNone(h.FailureClass), orNoneTime(h.LastFailure), h.Origin)))
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
