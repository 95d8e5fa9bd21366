package endpoint_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/testkit/testclock"
)

// reads is a Getter over a map that counts its reads and can fail.
type reads struct {
	mu   sync.Mutex
	eps  map[string]endpoint.Endpoint
	n    map[string]int
	fail error
}

func (r *reads) Get(_ context.Context, id string) (endpoint.Endpoint, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n[id]++
	if r.fail != nil {
		return endpoint.Endpoint{}, r.fail
	}
	e, ok := r.eps[id]
	if !ok {
		return endpoint.Endpoint{}, endpoint.ErrNotFound
	}
	return e, nil
}

func (r *reads) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}

func TestCacheKeepsWhatItReadForItsTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC))
	src := &reads{eps: map[string]endpoint.Endpoint{"ep_1": {ID: "ep_1", Version: 1}}, n: map[string]int{}}
	c := endpoint.NewCache(src, 0, clock.Now)

	for range 3 {
		e, err := c.Get(ctx, "ep_1")
		require.NoError(t, err)
		require.EqualValues(t, 1, e.Version)
	}
	require.Equal(t, 1, src.count("ep_1"), "one read per TTL")

	src.mu.Lock()
	src.eps["ep_1"] = endpoint.Endpoint{ID: "ep_1", Version: 2}
	src.mu.Unlock()
	clock.Advance(endpoint.DefaultCacheTTL - time.Millisecond)
	e, err := c.Get(ctx, "ep_1")
	require.NoError(t, err)
	require.EqualValues(t, 1, e.Version, "stale within the TTL, as documented")
	clock.Advance(time.Millisecond)
	e, err = c.Get(ctx, "ep_1")
	require.NoError(t, err)
	require.EqualValues(t, 2, e.Version, "read again once the TTL is over")
	require.Equal(t, 2, src.count("ep_1"))

	c.Forget("ep_1")
	_, err = c.Get(ctx, "ep_1")
	require.NoError(t, err)
	require.Equal(t, 3, src.count("ep_1"), "Forget drops the entry")
}

func TestCacheKeepsNotFoundButNotFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC))
	src := &reads{eps: map[string]endpoint.Endpoint{}, n: map[string]int{}}
	c := endpoint.NewCache(src, 5*time.Second, clock.Now)

	for range 2 {
		_, err := c.Get(ctx, "ep_gone")
		require.ErrorIs(t, err, endpoint.ErrNotFound)
	}
	require.Equal(t, 1, src.count("ep_gone"), "not found is cached too")
	clock.Advance(5 * time.Second)
	_, err := c.Get(ctx, "ep_gone")
	require.ErrorIs(t, err, endpoint.ErrNotFound)
	require.Equal(t, 2, src.count("ep_gone"), "its own TTL")

	boom := errors.New("throttled")
	src.mu.Lock()
	src.fail = boom
	src.mu.Unlock()
	for range 2 {
		_, err := c.Get(ctx, "ep_x")
		require.ErrorIs(t, err, boom)
	}
	require.Equal(t, 2, src.count("ep_x"), "a failed read is not kept")
}
