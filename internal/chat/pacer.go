package chat

import (
	"crypto/sha256"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// pacer keeps each webhook's rate inside one Sender: a token bucket per
// webhook (golang.org/x/time/rate, driven by the Sender's clock) and the
// time until which the service asked, with a 429, for nothing more. A
// webhook is keyed by a digest of its service and normalized URL (hookKey),
// so the pacer holds no credential.
type pacer struct {
	mu    sync.Mutex
	hooks map[[sha256.Size]byte]*hookPace
}

type hookPace struct {
	limiter  *rate.Limiter
	blocked  time.Time // no request before this (a 429's Retry-After)
	lastUsed time.Time // the last turn given
}

// maxIdleHooks is how many webhooks the pacer keeps before it forgets the
// ones idle for idleHookAfter.
const (
	maxIdleHooks  = 1024
	idleHookAfter = time.Minute
)

func newPacer() *pacer { return &pacer{hooks: map[[sha256.Size]byte]*hookPace{}} }

// hookKey is the pacer's key of the webhook at url: a digest of its
// service and its NormalizeURL form, so that one webhook spelt two ways
// (HOOKS.slack.com:443, hooks.slack.com.) has one pace; the URL as given
// when it does not normalize.
func hookKey(svc *service, url string) [sha256.Size]byte {
	if n, err := NormalizeURL(url); err == nil {
		url = n
	}
	return sha256.Sum256([]byte(string(svc.name) + "\x00" + url))
}

// turn is one send's place in its webhook's pace: wait before sending, or
// give the turn back (cancel) when the send will not happen.
type turn struct {
	wait   time.Duration
	cancel func()
}

// reserve takes the next turn of the webhook at now.
func (p *pacer) reserve(svc *service, url string, now time.Time) turn {
	key := hookKey(svc, url)
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.hooks[key]
	if h == nil {
		if len(p.hooks) >= maxIdleHooks {
			p.forget(now)
		}
		h = &hookPace{limiter: rate.NewLimiter(rate.Every(svc.every), svc.burst)}
		p.hooks[key] = h
	}
	// A turn after the block: the bucket is asked at the block's end.
	at := now
	if h.blocked.After(at) {
		at = h.blocked
	}
	r := h.limiter.ReserveN(at, 1)
	wait := r.DelayFrom(at) + at.Sub(now)
	if end := now.Add(wait); end.After(h.lastUsed) {
		h.lastUsed = end
	}
	return turn{wait: wait, cancel: func() {
		p.mu.Lock()
		r.CancelAt(at)
		p.mu.Unlock()
	}}
}

// block holds every send to the webhook until now+d.
func (p *pacer) block(svc *service, url string, now time.Time, d time.Duration) {
	if d <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if h := p.hooks[hookKey(svc, url)]; h != nil && now.Add(d).After(h.blocked) {
		h.blocked = now.Add(d)
	}
}

// forget drops the webhooks idle since before now-idleHookAfter and not
// blocked beyond now.
func (p *pacer) forget(now time.Time) {
	for k, h := range p.hooks {
		if now.Sub(h.lastUsed) > idleHookAfter && !h.blocked.After(now) {
			delete(p.hooks, k)
		}
	}
}
