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

// TestCacheFresh: Fresh returns the cached copy while it is younger than
// MaxRefusalAge and reads anew after, keeping the new read for Get.
func TestCacheFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC))
	src := &reads{eps: map[string]endpoint.Endpoint{"ep_1": {ID: "ep_1", Version: 1}}, n: map[string]int{}}
	c := endpoint.NewCache(src, 0, clock.Now)

	_, err := c.Get(ctx, "ep_1")
	require.NoError(t, err)
	clock.Advance(endpoint.MaxRefusalAge - time.Millisecond)
	e, err := c.Fresh(ctx, "ep_1")
	require.NoError(t, err)
	require.EqualValues(t, 1, e.Version)
	require.Equal(t, 1, src.count("ep_1"), "recent enough")

	src.mu.Lock()
	src.eps["ep_1"] = endpoint.Endpoint{ID: "ep_1", Version: 2}
	src.mu.Unlock()
	clock.Advance(time.Millisecond)
	e, err = c.Fresh(ctx, "ep_1")
	require.NoError(t, err)
	require.EqualValues(t, 2, e.Version, "read anew at MaxRefusalAge")
	e, err = c.Get(ctx, "ep_1")
	require.NoError(t, err)
	require.EqualValues(t, 2, e.Version, "kept for Get")
	require.Equal(t, 2, src.count("ep_1"))

	_, err = c.Fresh(ctx, "ep_new")
	require.ErrorIs(t, err, endpoint.ErrNotFound)
	src.mu.Lock()
	src.eps["ep_new"] = endpoint.Endpoint{ID: "ep_new", Version: 1}
	src.mu.Unlock()
	_, err = c.Fresh(ctx, "ep_new")
	require.ErrorIs(t, err, endpoint.ErrNotFound, "not found, read just now")
	clock.Advance(endpoint.MaxRefusalAge)
	_, err = c.Fresh(ctx, "ep_new")
	require.NoError(t, err, "created since")
}

// gatedReads is a Getter whose reads wait for release, counting them.
type gatedReads struct {
	release chan struct{}
	mu      sync.Mutex
	n       int
}

func (g *gatedReads) Get(ctx context.Context, id string) (endpoint.Endpoint, error) {
	g.mu.Lock()
	g.n++
	g.mu.Unlock()
	select {
	case <-g.release:
		return endpoint.Endpoint{ID: id, Version: 1}, nil
	case <-ctx.Done():
		return endpoint.Endpoint{}, ctx.Err()
	}
}

// TestCacheReadsOnceForConcurrentMisses: a batch's records to one endpoint
// on a cold cache (or at the TTL's end) are delivered concurrently; they
// wait for one read (one GetItem and one KMS Decrypt), not one each.
// (Should a record arrive after the read, it finds the entry: the count is
// one either way, so the test cannot fail by timing.)
func TestCacheReadsOnceForConcurrentMisses(t *testing.T) {
	t.Parallel()
	src := &gatedReads{release: make(chan struct{})}
	c := endpoint.NewCache(src, 0, nil)
	const records = 20
	var started, done sync.WaitGroup
	errs := make(chan error, records)
	for range records {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			e, err := c.Get(t.Context(), "ep_1")
			if err == nil && e.ID != "ep_1" {
				err = errors.New("another endpoint")
			}
			errs <- err
		}()
	}
	started.Wait()
	require.Eventually(t, func() bool { src.mu.Lock(); defer src.mu.Unlock(); return src.n >= 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // let the others reach Get: without it the test only passes more easily
	close(src.release)
	done.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	require.Equal(t, 1, src.n, "one read for every concurrent miss")
}

// TestCacheJoinedReadOfACancelledCaller: a record whose context ends while
// it waits for another's read returns its own context's error; a record
// that joined a read whose caller's context ended reads again with its own.
func TestCacheJoinedReadOfACancelledCaller(t *testing.T) {
	t.Parallel()
	src := &gatedReads{release: make(chan struct{})}
	c := endpoint.NewCache(src, 0, nil)
	leaderCtx, cancelLeader := context.WithCancel(t.Context())
	leaderErr := make(chan error, 1)
	go func() {
		_, err := c.Get(leaderCtx, "ep_1")
		leaderErr <- err
	}()
	require.Eventually(t, func() bool { src.mu.Lock(); defer src.mu.Unlock(); return src.n == 1 }, 5*time.Second, time.Millisecond)

	shortCtx, cancelShort := context.WithCancel(t.Context())
	cancelShort()
	_, err := c.Get(shortCtx, "ep_1")
	require.ErrorIs(t, err, context.Canceled, "its own context ended")

	follower := make(chan error, 1)
	go func() {
		_, err := c.Get(t.Context(), "ep_1")
		follower <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the follower join the leader's read (or not: it then reads itself)
	cancelLeader()
	require.ErrorIs(t, <-leaderErr, context.Canceled)
	close(src.release)
	require.NoError(t, <-follower, "read again with its own context")
}

// panicking is a Getter whose read panics once release is closed.
type panicking struct{ release chan struct{} }

func (p panicking) Get(context.Context, string) (endpoint.Endpoint, error) {
	<-p.release
	panic("boom")
}

// TestCacheReadThatPanicsReleasesItsFollowers: a read that panics (the
// processor recovers a record's panic) does not leave the records that
// waited for it waiting until their deadline: they get an error, retried.
func TestCacheReadThatPanicsReleasesItsFollowers(t *testing.T) {
	t.Parallel()
	src := panicking{release: make(chan struct{})}
	c := endpoint.NewCache(src, 0, nil)
	leader := make(chan any, 1)
	go func() {
		defer func() { leader <- recover() }()
		_, _ = c.Get(context.Background(), "ep_1")
	}()
	follower := make(chan error, 1)
	go func() {
		time.Sleep(20 * time.Millisecond) // joins the leader's read (or, late, reads and panics itself: recovered below)
		defer func() {
			if recover() != nil {
				follower <- errors.New("read itself")
			}
		}()
		_, err := c.Get(context.Background(), "ep_1")
		follower <- err
	}()
	time.Sleep(40 * time.Millisecond)
	close(src.release)
	require.Equal(t, "boom", <-leader)
	select {
	case err := <-follower:
		require.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the follower still waits for a read that panicked")
	}
}
