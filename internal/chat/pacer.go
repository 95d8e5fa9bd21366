package chat

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/gcra"
	"github.com/heraldhq/herald/internal/store"
)

// PaceStore shares each webhook's pace between execution environments: a
// pace item per webhook, changed with a compare and swap (package store's
// *Store). Without one, each Sender paces what it sends alone, and N
// environments sending to one webhook send up to N times its rate.
type PaceStore interface {
	// UpdatePace applies change to p, the caller's latest copy of the
	// webhook's pace, and writes it unless another writer came first (then
	// applies change to what that writer left). It returns the pace as
	// written, or as change left it when change returned false, and an
	// error (a *store.Error) when a call failed.
	UpdatePace(ctx context.Context, p store.Pace, change func(*store.Pace) bool) (store.Pace, bool, error)
}

var _ PaceStore = (*store.Store)(nil)

// pacer keeps each webhook's rate: the generic cell rate algorithm
// (GCRA, the token bucket as one timestamp) over a theoretical arrival
// time per webhook, and the time until which the service asked for
// nothing more (a 429's Retry-After, an empty Discord bucket). With a
// PaceStore the two timestamps live in the store and every environment
// takes its turns from them; else in this process only. A webhook is keyed
// by [Destination], which holds no credential.
type pacer struct {
	store PaceStore // nil: this process only

	mu    sync.Mutex
	hooks map[string]*hookPace
	// banned is when each service takes requests again after it banned
	// this process's address (Discord's Cloudflare ban) or limited it
	// globally (holdService): every webhook of the service waits for it.
	banned map[*service]time.Time
	// storeDownUntil is when the store is asked again after a call failed:
	// until then every webhook is paced in this process alone.
	storeDownUntil time.Time
}

// paceStoreTimeout bounds one call of the PaceStore, and paceStoreRetry is
// how long the pacer paces alone after a call failed before it asks the
// store again: a store that is down or hangs costs one call per
// paceStoreRetry, not one (and its timeout) per post.
const (
	paceStoreTimeout = 2 * time.Second
	paceStoreRetry   = 10 * time.Second
)

// updatePace is the store's UpdatePace, bounded by paceStoreTimeout, or
// false when the store is not to be asked at now (none, or down). A failed
// call marks the store down for paceStoreRetry.
func (p *pacer) updatePace(ctx context.Context, now time.Time, x store.Pace, change func(*store.Pace) bool) (store.Pace, bool, bool) {
	if p.store == nil {
		return x, false, false
	}
	p.mu.Lock()
	down := now.Before(p.storeDownUntil)
	p.mu.Unlock()
	if down {
		return x, false, false
	}
	sctx, cancel := context.WithTimeout(ctx, paceStoreTimeout)
	defer cancel()
	got, changed, err := p.store.UpdatePace(sctx, x, change)
	if err != nil {
		// The store failed, not the caller's invocation, and not because
		// other environments wrote first (a busy webhook, not a store
		// that is down: the next post asks it again).
		if ctx.Err() == nil && !errors.Is(err, store.ErrContended) {
			p.mu.Lock()
			p.storeDownUntil = now.Add(paceStoreRetry)
			p.mu.Unlock()
		}
		return x, false, false
	}
	return got, changed, true
}

type hookPace struct {
	// mu orders the turns of one webhook, a store round trip included.
	mu       sync.Mutex
	p        store.Pace
	lastUsed time.Time // the last turn given
	// gone is the answer that said the webhook is gone, remembered until
	// its until.
	gone *goneAnswer
	// answered is closed once a post to the webhook has been answered (or
	// failed) in this process; probing says one post is under way before
	// that.
	answered chan struct{}
	probing  bool
}

// maxPaceAhead bounds how far ahead of now a webhook's shared pace may put
// its next turn (beyond the turn's own interval and burst): Lambda's
// longest invocation, 15 minutes, the longest wait a turn is taken with.
// A pace further ahead was written by a clock running ahead of this one
// and is read as that far. A hold (Until) is bounded by MaxRetryAfter the
// same way.
const maxPaceAhead = 15 * time.Minute

// maxIdleHooks is how many webhooks the pacer keeps before it forgets the
// ones idle for idleHookAfter.
const (
	maxIdleHooks  = 1024
	idleHookAfter = time.Minute
)

func newPacer(st PaceStore) *pacer {
	return &pacer{store: st, hooks: map[string]*hookPace{}, banned: map[*service]time.Time{}}
}

func (p *pacer) hook(key string, now time.Time) *hookPace {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hooks[key]
	if h == nil {
		if len(p.hooks) >= maxIdleHooks {
			p.forget(now)
		}
		h = &hookPace{p: store.Pace{Key: key}, lastUsed: now, answered: make(chan struct{})}
		p.hooks[key] = h
	}
	return h
}

// noDeadline is the time left of a send whose context has no deadline.
const noDeadline = gcra.NoDeadline

// paceBounds bound a shared pace that another clock wrote: a turn at most
// maxPaceAhead ahead, a hold at most MaxRetryAfter.
var paceBounds = gcra.Bounds{MaxAhead: maxPaceAhead, MaxHold: MaxRetryAfter, Idle: idleHookAfter}

// turn is the next turn of the webhook key of svc, paced at r, at now: the
// wait before sending, and whether it was taken. A turn whose wait is left
// or more (the real time until the invocation's deadline, which the
// Sender's clock does not measure; noDeadline for none) is not taken: the
// next one is the same turn. gone is the answer that said the webhook is
// gone, when one did within GoneFor.
func (p *pacer) turn(ctx context.Context, svc *service, r rate, key string, now time.Time, left time.Duration) (wait time.Duration, taken bool, gone *goneAnswer) {
	h := p.hook(key, now)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone != nil && now.Before(h.gone.until) {
		return 0, false, h.gone
	}
	p.mu.Lock()
	from := later(now, p.banned[svc])
	p.mu.Unlock()
	take := func(x *store.Pace) bool {
		var ok bool
		wait, ok = gcra.Take(x, gcra.Rate{Every: r.every, Burst: r.burst}, now, from, left, paceBounds)
		return ok
	}
	local := h.p
	if got, took, ok := p.updatePace(ctx, now, h.p, take); ok {
		h.p, taken = got, took
		if end := now.Add(wait); taken && end.After(h.lastUsed) {
			h.lastUsed = end
		}
		return wait, taken, nil
	}
	// No store, or it failed: this process paces alone until it answers.
	if taken = take(&local); taken {
		h.p = local
		if end := now.Add(wait); end.After(h.lastUsed) {
			h.lastUsed = end
		}
	}
	return wait, taken, nil
}

// hold holds every send to the webhook until at least until, in the store
// too when there is one (one more compare and swap; none when the store
// already holds it that long).
func (p *pacer) hold(ctx context.Context, key string, now, until time.Time) {
	if !until.After(now) {
		return
	}
	h := p.hook(key, now)
	h.mu.Lock()
	defer h.mu.Unlock()
	extend := func(x *store.Pace) bool {
		if !until.After(x.Until) {
			return false
		}
		x.Until = until
		x.Expires = later(x.Next, x.Until).Add(idleHookAfter)
		return true
	}
	if got, _, ok := p.updatePace(ctx, now, h.p, extend); ok {
		h.p = got
		return
	}
	extend(&h.p)
}

// holdService holds every send to svc from this process until until:
// Discord's global rate limit, which counts the address's requests to
// every webhook.
func (p *pacer) holdService(svc *service, until time.Time) {
	p.mu.Lock()
	p.banned[svc] = later(p.banned[svc], until)
	p.mu.Unlock()
}

// ban holds every send to svc until until: in this process, every webhook
// of the service; with a store, also every webhook of the service this
// process has paced (one hold written for each), so that another
// environment posting to one of them waits too instead of meeting the ban.
func (p *pacer) ban(ctx context.Context, svc *service, now, until time.Time) {
	p.mu.Lock()
	p.banned[svc] = later(p.banned[svc], until)
	var keys []string
	if p.store != nil {
		prefix := DestinationPrefix + string(svc.name) + ":"
		for k := range p.hooks {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
			}
		}
	}
	p.mu.Unlock()
	for _, k := range keys {
		p.hold(ctx, k, now, until)
	}
}

// GoneFor is how long a Sender remembers a webhook that answered it is
// gone: the sends of the same batch waiting for their turn are not made,
// but retried once GoneFor has passed, when the deliver function's health
// store decides (docs/delivery.md, "A chat webhook that is gone"): disabled,
// they are dead-lettered without a request; enabled again by `herald
// destinations enable` meanwhile, they are sent.
const GoneFor = time.Minute

// goneAnswer is an answer that said a webhook is gone: its class and time,
// and the end of the Sender's memory of it.
type goneAnswer struct {
	class     delivery.Class
	at, until time.Time
}

// markGone makes every turn of the webhook in the next GoneFor return the
// answer of class at now, without a request.
func (p *pacer) markGone(key string, now time.Time, class delivery.Class) {
	h := p.hook(key, now)
	h.mu.Lock()
	h.gone = &goneAnswer{class: class, at: now, until: now.Add(GoneFor)}
	h.mu.Unlock()
}

// firstAnswer lets a post to the webhook go when the webhook has answered
// a post in this process, or when no other post to it is under way (this
// one is then the first; done says it was answered or failed); else it
// waits for the first post's answer. It returns ctx's error when ctx ends
// first. So the burst a service allows goes to a webhook only once it has
// answered: of 30 posts to one a service says is gone, one is made.
func (p *pacer) firstAnswer(ctx context.Context, key string, now time.Time) (done func(), err error) {
	for {
		h := p.hook(key, now)
		h.mu.Lock()
		ch := h.answered
		select {
		case <-ch:
			h.mu.Unlock()
			return func() {}, nil
		default:
		}
		if !h.probing {
			h.probing = true
			h.mu.Unlock()
			return func() {
				h.mu.Lock()
				defer h.mu.Unlock()
				h.probing = false
				select {
				case <-h.answered:
				default:
					close(h.answered)
				}
			}, nil
		}
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// heldUntil is when the webhook key of svc may be posted to again after a
// hold (a 429, an empty Discord bucket) or a ban of svc this process knows
// of, or the zero time when none holds it at now.
func (p *pacer) heldUntil(svc *service, key string, now time.Time) time.Time {
	p.mu.Lock()
	until := p.banned[svc]
	h := p.hooks[key]
	p.mu.Unlock()
	if h != nil {
		h.mu.Lock()
		until = later(until, h.p.Until)
		h.mu.Unlock()
	}
	if !until.After(now) {
		return time.Time{}
	}
	if limit := now.Add(MaxRetryAfter); until.After(limit) {
		return limit // as take bounds a hold another clock wrote
	}
	return until
}

// goneNow returns the answer that said the webhook is gone, when one did
// within GoneFor before now, else nil.
func (p *pacer) goneNow(key string, now time.Time) *goneAnswer {
	h := p.hook(key, now)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone != nil && now.Before(h.gone.until) {
		return h.gone
	}
	return nil
}

// forget drops the webhooks idle since before now-idleHookAfter and not
// held beyond now. Called with p.mu held.
func (p *pacer) forget(now time.Time) {
	for k, h := range p.hooks {
		if h.mu.TryLock() {
			idle := now.Sub(h.lastUsed) > idleHookAfter && !h.p.Until.After(now) && (h.gone == nil || !h.gone.until.After(now))
			h.mu.Unlock()
			if idle {
				delete(p.hooks, k)
			}
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
