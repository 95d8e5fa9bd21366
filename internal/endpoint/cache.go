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
}

type cacheEntry struct {
	e        Endpoint
	notFound bool
	until    time.Time
}

// NewCache returns a Cache over src keeping entries ttl (0 for
// DefaultCacheTTL) by clock now (nil for time.Now).
func NewCache(src Getter, ttl time.Duration, now func() time.Time) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Cache{src: src, ttl: ttl, now: now, entries: map[string]cacheEntry{}}
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
	e, err := c.src.Get(ctx, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Endpoint{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCacheEntries {
		c.sweep(now)
	}
	c.entries[id] = cacheEntry{e: e, notFound: err != nil, until: now.Add(c.ttl)}
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
