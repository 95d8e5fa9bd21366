package endpoint

import (
	"context"
	"errors"
	"sync"
	"time"
)

// DefaultCacheTTL is how long a Cache keeps what it read: an endpoint, or
// that there is none. It is the most an execution environment lags behind
// a change of an endpoint (a new URL or headers, disabled or enabled, a
// rotated secret, deleted or just created): for up to 30 s after the
// change, an environment that read the endpoint before it may still
// deliver as before. (A rotated secret's old version keeps signing for
// its grace period anyway, so receivers never see a gap.)
const DefaultCacheTTL = 30 * time.Second

// Getter reads an endpoint: *Table's Get.
type Getter interface {
	Get(ctx context.Context, id string) (Endpoint, error)
}

var _ Getter = (*Table)(nil)

// Cache keeps the endpoints one execution environment read, so that a
// batch of deliveries to one endpoint reads the table (and KMS) once per
// TTL, not once per record. It is safe for concurrent use.
type Cache struct {
	src Getter
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]cacheEntry
	// flights are the reads under way: concurrent misses of one endpoint
	// (a batch's records to it, on a cold cache or at the TTL's end) wait
	// for one read instead of making one GetItem and one KMS Decrypt each.
	flights map[string]*flight
}

type flight struct {
	done chan struct{}
	e    Endpoint
	err  error
}

type cacheEntry struct {
	e        Endpoint
	notFound bool
	readAt   time.Time
	until    time.Time
}

// MaxRefusalAge is the oldest read [Cache.Fresh] returns: the deliver
// function refuses a delivery for good (an endpoint disabled, or not
// found) only on a read at most this old, so that "enable it, then
// redrive" works within a second of the enabling, not after the cache's
// TTL, while a flood of deliveries to an endpoint that stays disabled
// reads it at most once a second per execution environment.
const MaxRefusalAge = time.Second

// NewCache returns a Cache over src keeping entries ttl (0 for
// DefaultCacheTTL) by clock now (nil for time.Now).
func NewCache(src Getter, ttl time.Duration, now func() time.Time) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Cache{src: src, ttl: ttl, now: now, entries: map[string]cacheEntry{}, flights: map[string]*flight{}}
}

// Get returns endpoint id as read within the TTL, or reads it. It caches
// an endpoint and ErrNotFound; any other error is returned and not kept,
// so the next Get reads again.
func (c *Cache) Get(ctx context.Context, id string) (Endpoint, error) {
	now := c.now()
	c.mu.Lock()
	ent, ok := c.entries[id]
	c.mu.Unlock()
	if ok && now.Before(ent.until) {
		if ent.notFound {
			return Endpoint{}, ErrNotFound
		}
		return ent.e, nil
	}
	return c.read(ctx, id, now)
}

// Fresh returns endpoint id as read at most [MaxRefusalAge] ago: the
// cached copy when it is that recent, else a new read, kept as Get keeps
// it. The deliver function asks it before it refuses a delivery for good
// on what Get returned.
func (c *Cache) Fresh(ctx context.Context, id string) (Endpoint, error) {
	now := c.now()
	c.mu.Lock()
	ent, ok := c.entries[id]
	c.mu.Unlock()
	if ok && now.Before(ent.until) && now.Sub(ent.readAt) < MaxRefusalAge {
		if ent.notFound {
			return Endpoint{}, ErrNotFound
		}
		return ent.e, nil
	}
	return c.read(ctx, id, now)
}

// read reads id from the source at now, or joins the read of id under
// way, and keeps an endpoint or ErrNotFound. A joined read that failed for
// its own caller's context is made again with ctx.
func (c *Cache) read(ctx context.Context, id string, now time.Time) (Endpoint, error) {
	c.mu.Lock()
	if f := c.flights[id]; f != nil {
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return Endpoint{}, ctx.Err()
		}
		if !errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded) {
			return f.e, f.err
		}
		return c.readAlone(ctx, id, now)
	}
	f := &flight{done: make(chan struct{}), err: errFlightAbandoned}
	c.flights[id] = f
	c.mu.Unlock()
	defer func() { // also when the read panics: no follower waits for ever
		c.mu.Lock()
		delete(c.flights, id)
		c.mu.Unlock()
		close(f.done)
	}()
	f.e, f.err = c.readAlone(ctx, id, now)
	return f.e, f.err
}

// errFlightAbandoned is what the followers of a read that panicked get.
var errFlightAbandoned = errors.New("endpoint cache: the read this one waited for did not finish")

// readAlone reads id from the source and keeps what it read.
func (c *Cache) readAlone(ctx context.Context, id string, now time.Time) (Endpoint, error) {
	e, err := c.src.Get(ctx, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Endpoint{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCacheEntries {
		c.sweep(now)
	}
	c.entries[id] = cacheEntry{e: e, notFound: err != nil, readAt: now, until: now.Add(c.ttl)}
	return e, err
}

// maxCacheEntries bounds a Cache: when it holds this many, expired entries
// go, and if none had expired, all go.
const maxCacheEntries = 10000

func (c *Cache) sweep(now time.Time) {
	for id, ent := range c.entries {
		if !now.Before(ent.until) {
			delete(c.entries, id)
		}
	}
	if len(c.entries) >= maxCacheEntries {
		clear(c.entries)
	}
}

// Forget drops endpoint id from the cache, for a caller that knows it
// changed (a delivery refused for a stale secret, say).
func (c *Cache) Forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, id)
}
