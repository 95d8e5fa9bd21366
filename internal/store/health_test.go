package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
)

const healthOrigin = "https://hooks.example.com"

// utc is h with its times in UTC, for comparing what was written with what
// was read (Unix milliseconds read back in the local zone).
func utc(h store.Health) store.Health {
	h.LastSuccess, h.LastFailure, h.ProbeUntil = h.LastSuccess.UTC(), h.LastFailure.UTC(), h.ProbeUntil.UTC()
	return h
}

func failure(h *store.Health) bool {
	h.Failures++
	return true
}

// TestHealthRoundTrips: an unknown origin is the zero Health; what
// UpdateHealth writes, Health reads back, with one GetItem and one PutItem.
func TestHealthRoundTrips(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	h, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	require.Equal(t, store.Health{Origin: healthOrigin}, h)

	at := b.clock.Now().Add(-time.Second).Truncate(time.Millisecond)
	w, wrote, err := b.s.UpdateHealth(ctx, h, func(h *store.Health) bool {
		h.Failures, h.LastFailure, h.FailureClass = 4, at, "webhook_timeout"
		h.LastSuccess, h.ProbeUntil, h.ProbeOwner = at.Add(-time.Hour), at.Add(time.Minute), "owner-1"
		return true
	})
	require.NoError(t, err)
	require.True(t, wrote)
	got, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	require.Equal(t, utc(w), utc(got))
	require.Equal(t, 4, got.Failures)
	require.True(t, got.LastFailure.Equal(at))
	require.Equal(t, "owner-1", got.ProbeOwner)
	require.Equal(t, 2, b.srv.Calls("GetItem"))
	require.Equal(t, 1, b.srv.Calls("PutItem"))

	other, err := b.s.Health(ctx, "https://hooks.example.com:8443")
	require.NoError(t, err)
	require.Zero(t, other.Failures, "another port is another origin")
}

// TestRecentHealthIsEventuallyConsistent: Health reads with a strongly
// consistent GetItem (the operator's commands), RecentHealth with an
// eventually consistent one at half the read units (the circuit's cached
// copy), and both read the same item.
func TestRecentHealthIsEventuallyConsistent(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	h, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	_, _, err = b.s.UpdateHealth(ctx, h, failure)
	require.NoError(t, err)
	require.Equal(t, 1, b.srv.ConsistentReads("GetItem"))
	recent, err := b.s.RecentHealth(ctx, healthOrigin)
	require.NoError(t, err)
	require.Equal(t, 1, recent.Failures)
	require.Equal(t, 2, b.srv.Calls("GetItem"))
	require.Equal(t, 1, b.srv.ConsistentReads("GetItem"), "RecentHealth's read is eventually consistent")
	_, err = b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	require.Equal(t, 2, b.srv.ConsistentReads("GetItem"))
}

// TestUpdateHealthMeetsAnotherWriter: two environments start from the same
// copy; the second's write is refused and applied again to what the first
// left, so no failure is lost.
func TestUpdateHealthMeetsAnotherWriter(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	h, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	_, _, err = b.s.UpdateHealth(ctx, h, failure)
	require.NoError(t, err)
	w, wrote, err := b.s.UpdateHealth(ctx, h, failure)
	require.NoError(t, err)
	require.True(t, wrote)
	require.Equal(t, 2, w.Failures)

	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := b.s.UpdateHealth(ctx, w, failure)
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	got, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	require.Equal(t, 4, got.Failures)
}

// TestUpdateHealthChangeMayDecline: a change that returns false writes
// nothing, also when it declines only after another writer's change (the
// probe lease another environment took).
func TestUpdateHealthChangeMayDecline(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	h, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	take := func(owner string) func(*store.Health) bool {
		return func(h *store.Health) bool {
			if h.ProbeOwner != "" {
				return false
			}
			h.ProbeOwner, h.ProbeUntil = owner, b.clock.Now().Add(time.Minute)
			return true
		}
	}
	_, took, err := b.s.UpdateHealth(ctx, h, take("a"))
	require.NoError(t, err)
	require.True(t, took)
	got, took, err := b.s.UpdateHealth(ctx, h, take("b"))
	require.NoError(t, err)
	require.False(t, took)
	require.Equal(t, "a", got.ProbeOwner)
	require.Equal(t, 2, b.srv.Calls("PutItem"))
}

// TestHealthPastItsRetentionIsForgotten: moto never deletes an expired
// item, and DynamoDB only within days: a health item past its expires_at
// reads as the zero Health, and a write over it succeeds.
func TestHealthPastItsRetentionIsForgotten(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	h, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	_, _, err = b.s.UpdateHealth(ctx, h, failure)
	require.NoError(t, err)
	b.clock.Advance(store.HealthRetention)
	h, err = b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	require.Zero(t, h.Failures)
	w, _, err := b.s.UpdateHealth(ctx, h, failure)
	require.NoError(t, err)
	require.Equal(t, 1, w.Failures)
}

// TestHealthStoreFailures: a failed read or write is an *store.Error.
func TestHealthStoreFailures(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	b.srv.Throttle("GetItem", 1)
	h, err := b.s.Health(ctx, healthOrigin)
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, store.ClassThrottled, se.Class())
	require.Equal(t, healthOrigin, h.Origin)
	b.srv.Fail("PutItem", 1)
	_, wrote, err := b.s.UpdateHealth(ctx, h, failure)
	require.ErrorAs(t, err, &se)
	require.False(t, wrote)
}

// TestDisabledOriginIsKept: a disabled origin's item has no expires_at, so
// it stays disabled past HealthRetention; enabling it forgets the run of
// failures and expires again.
func TestDisabledOriginIsKept(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	h, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	_, _, err = b.s.UpdateHealth(ctx, h, func(h *store.Health) bool {
		h.Failures, h.FailingSince = 12, b.clock.Now().Add(-time.Hour)
		return true
	})
	require.NoError(t, err)
	h, changed, err := b.s.SetDisabled(ctx, healthOrigin, true)
	require.NoError(t, err)
	require.True(t, changed)
	require.True(t, h.DisabledAt.Equal(b.clock.Now()))
	require.Equal(t, store.DisabledByOperator, h.DisabledBy)
	b.clock.Advance(2 * store.HealthRetention)
	h, err = b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	require.True(t, h.Disabled(), "kept past the retention")
	require.Equal(t, 12, h.Failures)

	h, changed, err = b.s.SetDisabled(ctx, healthOrigin, false)
	require.NoError(t, err)
	require.True(t, changed)
	require.False(t, h.Disabled())
	require.Zero(t, h.Failures)
	require.True(t, h.FailingSince.IsZero())
	_, changed, err = b.s.SetDisabled(ctx, healthOrigin, false)
	require.NoError(t, err)
	require.False(t, changed, "enabling an enabled origin writes nothing")
	_, _, err = b.s.UpdateHealth(ctx, h, failure)
	require.NoError(t, err)
	b.clock.Advance(store.HealthRetention)
	h, err = b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	require.Zero(t, h.Failures, "enabled, it expires again")
}

// TestHealthsScansEveryOrigin: Healths pages through the whole table
// (more items than one dynamotest page), keeps only health items not
// expired, sorted by origin.
func TestHealthsScansEveryOrigin(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	var want []string
	for i := range dynamotest.ScanPageItems + 20 {
		origin := fmt.Sprintf("https://h%03d.example.com", i)
		_, _, err := b.s.UpdateHealth(ctx, store.Health{Origin: origin}, failure)
		require.NoError(t, err)
		want = append(want, origin)
		_, err = b.s.Claim(ctx, nil, "email", fmt.Sprintf("n-%d", i), "", b.clock.Now().Add(time.Minute))
		require.NoError(t, err)
	}
	b.clock.Advance(store.HealthRetention - time.Hour)
	_, _, err := b.s.UpdateHealth(ctx, store.Health{Origin: "https://fresh.example.com"}, failure)
	require.NoError(t, err)
	_, _, err = b.s.SetDisabled(ctx, want[0], true)
	require.NoError(t, err)
	b.clock.Advance(2 * time.Hour)

	hs, err := b.s.Healths(ctx)
	require.NoError(t, err)
	var got []string
	for _, h := range hs {
		got = append(got, h.Origin)
	}
	require.Equal(t, []string{"https://fresh.example.com", want[0]}, got, "the rest expired")
	require.Equal(t, 1, hs[0].Failures)
	require.True(t, hs[1].Disabled())
	require.Greater(t, b.srv.Calls("Scan"), 2, "paged")
}
