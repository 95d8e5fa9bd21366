package endpointsend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/gcra"
	"github.com/heraldhq/herald/internal/store"
)

// paceBounds bound a shared pace that another clock wrote: a turn at most
// 15 minutes (Lambda's longest invocation) ahead; an endpoint's pace has
// no hold. An idle endpoint's pace item expires a minute after its last
// turn.
var paceBounds = gcra.Bounds{MaxAhead: 15 * time.Minute, Idle: time.Minute}

// paceStoreTimeout bounds one call of the PaceStore; after a failed call
// the pacer paces alone for paceStoreRetry before it asks again (chat's
// pacer does the same).
const (
	paceStoreTimeout = 2 * time.Second
	paceStoreRetry   = 10 * time.Second
)

// maxPaced is how many endpoints' paces a pacer keeps before it starts
// afresh.
const maxPaced = 1024

// pacer keeps each rate-limited endpoint's turns ([gcra.Take], a rate of
// Endpoint.RateLimit requests per second with no burst) in a pace item
// keyed [DestinationKey], so that every execution environment takes its
// turns from the same item; without a store, or while it fails, in this
// process alone.
type pacer struct {
	store PaceStore

	mu        sync.Mutex
	paces     map[string]*paced
	downUntil time.Time
}

type paced struct {
	mu sync.Mutex // orders the turns of one endpoint, a store round trip included
	p  store.Pace
}

func newPacer(st PaceStore) *pacer { return &pacer{store: st, paces: map[string]*paced{}} }

func (p *pacer) entry(key string) *paced {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.paces[key]
	if e == nil {
		if len(p.paces) >= maxPaced {
			p.paces = map[string]*paced{}
		}
		e = &paced{p: store.Pace{Key: key}}
		p.paces[key] = e
	}
	return e
}

// wait takes ep's next turn at now() and waits for it. A turn that comes
// at or after ctx's deadline (the real time left, time.Until) is not
// taken: a *delivery.TransientError of ClassRateLimited whose RetryAfter
// is the wait. A turn due at once is taken whatever is left ([gcra.Take]),
// and wait returns nil at once: the send keeps ctx's deadline.
func (p *pacer) wait(ctx context.Context, ep endpoint.Endpoint, now func() time.Time) error {
	left := gcra.NoDeadline
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	// A stored rate below the floor (Validate refuses it) is paced at the
	// floor: 1/r of a tinier one overflows the interval.
	wait, taken, contended := p.turn(ctx, DestinationKey(ep.ID), gcra.PerSecond(max(ep.RateLimit, endpoint.MinRateLimit)), now(), left)
	switch {
	case contended:
		return &delivery.TransientError{Class: ClassRateLimited, RetryAfter: wait,
			Err: fmt.Errorf("other execution environments took every turn under the endpoint's rate limit of %g/s while this one tried to take the next; not sent, retried in %v", ep.RateLimit, wait.Round(time.Millisecond))}
	case !taken:
		return &delivery.TransientError{Class: ClassRateLimited, RetryAfter: wait,
			Err: fmt.Errorf("the next turn under the endpoint's rate limit of %g/s is in %v, after this invocation ends; not sent, retried then", ep.RateLimit, wait.Round(time.Millisecond))}
	}
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return delivery.Transient(delivery.ClassDeadline, fmt.Errorf("invocation deadline while waiting %v for the endpoint's turn", wait.Round(time.Millisecond)))
	}
}

// turn takes key's next turn at rate r at now: the wait, and whether it
// was taken (not when the wait is left or more). contended reports a turn
// not taken because other environments wrote the pace before each of the
// store's tries: a turn taken here alone would be written nowhere and the
// shared limit would not hold, so none is; wait is then the newest turn
// seen, at least one interval.
func (p *pacer) turn(ctx context.Context, key string, r gcra.Rate, now time.Time, left time.Duration) (wait time.Duration, taken, contended bool) {
	e := p.entry(key)
	e.mu.Lock()
	defer e.mu.Unlock()
	take := func(x *store.Pace) bool {
		var ok bool
		wait, ok = gcra.Take(x, r, now, time.Time{}, left, paceBounds)
		return ok
	}
	if p.store != nil && !p.down(now) {
		sctx, cancel := context.WithTimeout(ctx, paceStoreTimeout)
		got, took, err := p.store.UpdatePace(sctx, e.p, take)
		cancel()
		if err == nil {
			e.p = got
			return wait, took, false
		}
		if errors.Is(err, store.ErrContended) && ctx.Err() == nil {
			e.p = got // the newest item the store returned
			newest := got
			take(&newest)
			return max(wait, r.Every), false, true
		}
		// The store failed (not the caller): ask it again only after
		// paceStoreRetry.
		if ctx.Err() == nil {
			p.mu.Lock()
			p.downUntil = now.Add(paceStoreRetry)
			p.mu.Unlock()
		}
	}
	local := e.p
	if taken = take(&local); taken {
		e.p = local
	}
	return wait, taken, false
}

func (p *pacer) down(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return now.Before(p.downUntil)
}
