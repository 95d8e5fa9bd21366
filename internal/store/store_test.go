package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/testclock"
)

const table = "herald-test"

type bundle struct {
	srv   *dynamotest.Server
	s     *store.Store
	clock *testclock.Clock
}

func setup(t *testing.T, window time.Duration) *bundle {
	t.Helper()
	b := &bundle{srv: dynamotest.New(t), clock: testclock.New(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))}
	b.srv.AddTable(table, store.AttrPK, store.AttrSK)
	s, err := store.New(b.srv.Client(), store.Config{Table: table, Window: window, Now: b.clock.Now})
	require.NoError(t, err)
	b.s = s
	return b
}

func TestClaimTwiceIsHeldUntilTheLeaseEnds(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	until := b.clock.Now().Add(time.Minute)
	_, err := b.s.Claim(ctx, nil, "email", "n-1", "", until)
	require.NoError(t, err)

	_, err = b.s.Claim(ctx, nil, "email", "n-1", "", until)
	var held *store.HeldError
	require.ErrorAs(t, err, &held)
	require.True(t, held.Until.Equal(until), "held until %s, want %s", held.Until, until)

	// Another channel, or another id, is another notification.
	_, err = b.s.Claim(ctx, nil, "webhook", "n-1", "", until)
	require.NoError(t, err)
	_, err = b.s.Claim(ctx, nil, "email", "n-2", "", until)
	require.NoError(t, err)

	// One millisecond before the lease ends it still holds; at its end
	// another attempt takes it.
	b.clock.Advance(time.Minute - time.Millisecond)
	_, err = b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.ErrorAs(t, err, &held)
	b.clock.Advance(time.Millisecond)
	_, err = b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
}

func TestDeliveredIsRememberedForTheWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	l, err := b.s.Claim(ctx, nil, "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	b.clock.Advance(2 * time.Second)
	deliveredAt := b.clock.Now()
	require.NoError(t, b.s.Delivered(ctx, l))

	// Past the lease's end a delivered notification stays delivered.
	b.clock.Advance(time.Hour - 3*time.Second)
	_, err = b.s.Claim(ctx, nil, "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
	var done *store.DeliveredError
	require.ErrorAs(t, err, &done)
	require.True(t, done.At.Equal(deliveredAt), "delivered at %s, want %s", done.At, deliveredAt)

	// A window after delivery the item has expired (DynamoDB may not have
	// deleted it yet; this server never does): it no longer counts.
	b.clock.Advance(3 * time.Second)
	_, err = b.s.Claim(ctx, nil, "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	require.Len(t, b.srv.Items(table), 1)
}

func TestReleaseLetsTheNextCopyGo(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	l, err := b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, b.s.Release(ctx, l))
	require.Empty(t, b.srv.Items(table))
	_, err = b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
}

func TestReleaseLeavesAnotherAttemptsLease(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	stale, err := b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	b.clock.Advance(time.Minute)
	_, err = b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)

	require.NoError(t, b.s.Release(ctx, stale), "losing the lease is not a failure")
	_, err = b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	var held *store.HeldError
	require.ErrorAs(t, err, &held, "the newer lease must survive the stale release")
}

func TestReleaseLeavesADelivery(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	l, err := b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, b.s.Delivered(ctx, l))
	require.NoError(t, b.s.Release(ctx, l))
	_, err = b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	var done *store.DeliveredError
	require.ErrorAs(t, err, &done)
}

func TestTwoWritesPerDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	l, err := b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, b.s.Delivered(ctx, l))
	require.Equal(t, 2, b.srv.Calls("PutItem"))
	require.Zero(t, b.srv.Calls("GetItem")+b.srv.Calls("DeleteItem")+b.srv.Calls("UpdateItem"))
}

func TestSimultaneousClaimsOneWins(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = b.s.Claim(context.Background(), nil, "webhook", "evt-same", "", b.clock.Now().Add(time.Minute))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var held *store.HeldError
		if err == nil {
			won++
		} else {
			require.ErrorAs(t, err, &held)
		}
	}
	require.Equal(t, 1, won)
}

func TestStoreFailuresAreClassified(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault func(*dynamotest.Server)
		class delivery.Class
	}{
		{"throttled", func(s *dynamotest.Server) { s.Throttle("PutItem", 1) }, store.ClassThrottled},
		{"server error", func(s *dynamotest.Server) { s.Fail("PutItem", 1) }, store.ClassUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, time.Hour)
			tc.fault(b.srv)
			_, err := b.s.Claim(context.Background(), nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
			var se *store.Error
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.class, se.Class())
			permanent, class, _ := delivery.Classify(se.Transient())
			require.False(t, permanent)
			require.Equal(t, tc.class, class)
			// Nothing was written: the next attempt claims.
			_, err = b.s.Claim(context.Background(), nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
			require.NoError(t, err)
		})
	}
}

func TestAMissingTableIsAnError(t *testing.T) {
	t.Parallel()
	srv := dynamotest.New(t)
	s, err := store.New(srv.Client(), store.Config{Table: "absent"})
	require.NoError(t, err)
	_, err = s.Claim(context.Background(), nil, "email", "n-1", "", time.Now().Add(time.Minute))
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, store.ClassUnavailable, se.Class())
	require.Contains(t, err.Error(), "ResourceNotFoundException")
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	srv := dynamotest.New(t)
	_, err := store.New(srv.Client(), store.Config{})
	require.ErrorContains(t, err, "Table is required")
	_, err = store.New(srv.Client(), store.Config{Table: "t", Window: time.Millisecond})
	require.ErrorContains(t, err, "at least 1s")
	_, err = store.New(srv.Client(), store.Config{Table: "t", Window: time.Second - time.Nanosecond})
	require.ErrorContains(t, err, "at least 1s")
	_, err = store.New(srv.Client(), store.Config{Table: "t", Window: time.Second})
	require.NoError(t, err, "a window of exactly 1 s")
	_, err = store.New(nil, store.Config{Table: "t"})
	require.Error(t, err)
	require.False(t, errors.Is(err, context.Canceled))
}
