package webhook

import (
	"context"
	"sync"
)

// originLimiter bounds the requests in flight to each origin (scheme, host
// and port, RFC 6454 §4), across every caller of one Sender: however many
// records of a batch go to one receiver, at most max of them are sent at
// once, the others wait for a slot. An origin's entry exists only while
// requests to it are in flight or waiting, so the map does not grow with
// every destination a warm function ever met.
type originLimiter struct {
	max int

	mu      sync.Mutex
	origins map[string]*originSlots
}

// originSlots is one origin's semaphore and how many callers hold or wait
// for it.
type originSlots struct {
	sem  chan struct{}
	refs int
}

func newOriginLimiter(max int) *originLimiter {
	return &originLimiter{max: max, origins: map[string]*originSlots{}}
}

// acquire waits for a slot of origin and returns its release, or ctx's
// error when ctx is done first.
func (l *originLimiter) acquire(ctx context.Context, origin string) (release func(), err error) {
	l.mu.Lock()
	s := l.origins[origin]
	if s == nil {
		s = &originSlots{sem: make(chan struct{}, l.max)}
		l.origins[origin] = s
	}
	s.refs++
	l.mu.Unlock()

	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem; l.unref(origin, s) }, nil
	case <-ctx.Done():
		l.unref(origin, s)
		return nil, ctx.Err()
	}
}

func (l *originLimiter) unref(origin string, s *originSlots) {
	l.mu.Lock()
	if s.refs--; s.refs == 0 {
		delete(l.origins, origin)
	}
	l.mu.Unlock()
}

// inFlight returns the number of origins with requests in flight or
// waiting (tests only).
func (l *originLimiter) inFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.origins)
}
