package webhook

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
)

// KeyVersions is a webhook origin's key record: which versions of its
// per-destination key ([DeriveSecretVersion]) sign requests to it. The
// zero value, like an origin without a record, is version 1.
type KeyVersions struct {
	// Version is the current version; below 1 reads as 1.
	Version int
	// PreviousUntil is when version Version-1 stops signing; zero or past
	// when it no longer does.
	PreviousUntil time.Time
}

// Active returns the versions that sign a request at t, newest first: the
// current version, and during the grace period of a rotation (t before
// PreviousUntil) the one before it.
func (k KeyVersions) Active(t time.Time) []int {
	v := max(k.Version, 1)
	if v > 1 && t.Before(k.PreviousUntil) {
		return []int{v, v - 1}
	}
	return []int{v}
}

// KeyVersionReader reads a webhook origin's key record (the deliver
// function's is herald's DynamoDB table, package store). origin is
// [Origin]'s form. An origin without a record is at version 1. An error
// that is a *delivery.TransientError keeps its class.
type KeyVersionReader interface {
	KeyVersions(ctx context.Context, origin string) (KeyVersions, error)
}

// KeyVersionsCacheTTL is how long a Sender reuses an origin's key record
// once read: a batch of records to one origin reads it once, and a
// rotation, or the end of its grace period, reaches a warm execution
// environment within this time (the record is kept, not the versions, so
// the end of a grace period itself is exact).
const KeyVersionsCacheTTL = 30 * time.Second

// ClassKeysUnavailable: the origin's key record could not be read (any
// failure of a KeyVersionReader that names no class of its own). The
// request is not sent, with no key or a stale one, but retried later.
var ClassKeysUnavailable = delivery.NewClass("webhook_keys_unavailable")

// versionEntry is one origin's cached key record, or the read in flight
// that others wait for (ready open).
type versionEntry struct {
	ready  chan struct{}
	kv     KeyVersions
	err    error
	readAt time.Time
}

// versionCache keeps recently read key records, one read per origin at a
// time. The zero value is ready.
type versionCache struct {
	mu      sync.Mutex
	entries map[string]*versionEntry
}

// get returns origin's key record, read with r when the cached one is
// older than KeyVersionsCacheTTL at now or absent. A failed read is not
// kept: the next call reads again.
func (c *versionCache) get(ctx context.Context, r KeyVersionReader, origin string, now time.Time) (KeyVersions, error) {
	c.mu.Lock()
	e, ok := c.entries[origin]
	if ok {
		select {
		case <-e.ready:
			ok = e.err == nil && now.Sub(e.readAt) < KeyVersionsCacheTTL && !now.Before(e.readAt)
		default: // a read in flight: wait for it
		}
	}
	if !ok {
		if c.entries == nil || len(c.entries) >= maxCachedOrigins {
			c.entries = make(map[string]*versionEntry)
		}
		e = &versionEntry{ready: make(chan struct{}), readAt: now}
		c.entries[origin] = e
		c.mu.Unlock()
		e.kv, e.err = r.KeyVersions(ctx, origin)
		close(e.ready)
		if e.err != nil {
			c.mu.Lock()
			if c.entries[origin] == e {
				delete(c.entries, origin)
			}
			c.mu.Unlock()
		}
		return e.kv, e.err
	}
	c.mu.Unlock()
	select {
	case <-e.ready:
		return e.kv, e.err
	case <-ctx.Done():
		return KeyVersions{}, ctx.Err()
	}
}

// versionsFor returns the key versions that sign a request to origin at
// at: version 1 without a reader or with ScopeShared, else the origin's
// record's active versions. Its error is a *delivery.TransientError.
func (s *Sender) versionsFor(ctx context.Context, origin string, at time.Time) ([]int, error) {
	if s.versions == nil || s.scope == ScopeShared {
		return []int{1}, nil
	}
	kv, err := s.versionCache.get(ctx, s.versions, origin, at)
	if err != nil {
		var te *delivery.TransientError
		if errors.As(err, &te) {
			return nil, err
		}
		return nil, delivery.Transient(ClassKeysUnavailable, fmt.Errorf("webhook: read the key versions of %s: %w", origin, err))
	}
	return kv.Active(at), nil
}

// versionInfo is the HKDF info of origin's key version v: version 1's is
// deriveInfo and the origin, as before versions existed, so that a
// receiver's key does not change until its first rotation; a later
// version's adds " version <v>" (an origin holds no space, so no two
// (origin, version) pairs share an info).
func versionInfo(origin string, v int) string {
	if v <= 1 {
		return deriveInfo + origin
	}
	return deriveInfo + origin + " version " + strconv.Itoa(v)
}
