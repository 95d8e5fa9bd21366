package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/store"
)

// TestConfirmIsOneWriteForABatch: a batch of ten deliveries costs ten
// claims and one confirm; a copy of any of them, while its lease lasts and
// after, is a *DeliveredError at the confirm's time, with and without the
// item in the refusal.
func TestConfirmIsOneWriteForABatch(t *testing.T) {
	t.Parallel()
	for _, omit := range []bool{false, true} {
		b := setup(t, time.Hour)
		b.srv.OmitConditionItem(omit)
		ctx := context.Background()
		batch := b.s.NewBatch()
		until := b.clock.Now().Add(time.Minute)
		var ls []store.Lease
		for i := range 10 {
			l, err := b.s.Claim(ctx, batch, "webhook", fmt.Sprintf("evt-%d", i), "d", until)
			require.NoError(t, err)
			ls = append(ls, l)
		}
		b.clock.Advance(time.Second)
		at := b.clock.Now()
		require.NoError(t, b.s.Confirm(ctx, batch, ls))
		require.Equal(t, 11, b.srv.Calls("PutItem"), "ten claims, one confirm")
		require.Zero(t, b.srv.Calls("GetItem")+b.srv.Calls("DeleteItem"))
		require.Len(t, b.srv.Items(table), 11)

		for _, after := range []time.Duration{0, time.Minute, 30 * time.Minute} {
			b.clock.Advance(after)
			for i := range 10 {
				_, err := b.s.Claim(ctx, b.s.NewBatch(), "webhook", fmt.Sprintf("evt-%d", i), "d", b.clock.Now().Add(time.Minute))
				var done *store.DeliveredError
				require.ErrorAs(t, err, &done, "omit %v, %s after, evt-%d", omit, after, i)
				require.True(t, done.At.Equal(at), "delivered at %s, want %s", done.At, at)
			}
		}
		// A window after the lease's end every item has expired.
		b.clock.Advance(time.Hour)
		_, err := b.s.Claim(ctx, b.s.NewBatch(), "webhook", "evt-0", "d", b.clock.Now().Add(time.Minute))
		require.NoError(t, err)
	}
}

// TestUnconfirmedLeaseIsTakenOverAfterItEnds: an invocation that died
// after its claims (no confirm, no release): while its leases last a copy
// is held; after, the copy takes the lease over, once, and its own batch's
// confirm makes later copies duplicates. Leases its batch confirmed stay
// delivered.
func TestUnconfirmedLeaseIsTakenOverAfterItEnds(t *testing.T) {
	t.Parallel()
	for _, omit := range []bool{false, true} {
		b := setup(t, time.Hour)
		b.srv.OmitConditionItem(omit)
		ctx := context.Background()
		dead := b.s.NewBatch()
		until := b.clock.Now().Add(time.Minute)
		sent, err := b.s.Claim(ctx, dead, "email", "n-sent", "", until)
		require.NoError(t, err)
		_, err = b.s.Claim(ctx, dead, "email", "n-lost", "", until)
		require.NoError(t, err)
		// Half the batch was confirmed by an earlier write (a batch is
		// confirmed once; this stands for the confirm of what was done).
		require.NoError(t, b.s.Confirm(ctx, dead, []store.Lease{sent}))

		b.clock.Advance(time.Minute - time.Millisecond)
		_, err = b.s.Claim(ctx, b.s.NewBatch(), "email", "n-lost", "", b.clock.Now().Add(time.Minute))
		var held *store.HeldError
		require.ErrorAs(t, err, &held, "omit %v: a millisecond before the lease ends", omit)
		require.True(t, held.Until.Equal(until))

		b.clock.Advance(time.Millisecond)
		next := b.s.NewBatch()
		const n = 8
		var wg sync.WaitGroup
		won := make(chan store.Lease, n)
		for range n {
			wg.Go(func() {
				l, err := b.s.Claim(ctx, next, "email", "n-lost", "", b.clock.Now().Add(time.Minute))
				if err == nil {
					won <- l
					return
				}
				var held *store.HeldError
				require.ErrorAs(t, err, &held, "omit %v", omit)
			})
		}
		wg.Wait()
		close(won)
		require.Len(t, won, 1, "omit %v: one copy takes the ended lease over", omit)
		l := <-won

		_, err = b.s.Claim(ctx, b.s.NewBatch(), "email", "n-sent", "", b.clock.Now().Add(time.Minute))
		var done *store.DeliveredError
		require.ErrorAs(t, err, &done, "omit %v: the confirmed lease stays delivered", omit)

		require.NoError(t, b.s.Confirm(ctx, next, []store.Lease{l}))
		b.clock.Advance(2 * time.Minute)
		_, err = b.s.Claim(ctx, b.s.NewBatch(), "email", "n-lost", "", b.clock.Now().Add(time.Minute))
		require.ErrorAs(t, err, &done, "omit %v", omit)
	}
}

// TestConfirmFailureLeavesTheCrashWindow: a confirm that fails is a store
// *Error; the leases are held while they last, then a copy is sent again.
func TestConfirmFailureLeavesTheCrashWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	batch := b.s.NewBatch()
	l, err := b.s.Claim(ctx, batch, "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	b.srv.Fail("PutItem", 1)
	err = b.s.Confirm(ctx, batch, []store.Lease{l})
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.EqualError(t, err, "store confirm 1 deliveries: "+se.Err.Error())
	_, err = b.s.Claim(ctx, b.s.NewBatch(), "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
	var held *store.HeldError
	require.ErrorAs(t, err, &held)
	b.clock.Advance(time.Minute)
	_, err = b.s.Claim(ctx, b.s.NewBatch(), "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
}

// TestConfirmEdges: no leases, no write; a lease of another batch is
// refused before any write; a lease without a batch ends and is taken
// with one write, no read, as before batches.
func TestConfirmEdges(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	batch := b.s.NewBatch()
	require.NoError(t, b.s.Confirm(ctx, batch, nil))
	require.Zero(t, b.srv.Calls("PutItem"))

	other, err := b.s.Claim(ctx, b.s.NewBatch(), "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	require.ErrorContains(t, b.s.Confirm(ctx, batch, []store.Lease{other}), "is not of batch")
	require.Equal(t, 1, b.srv.Calls("PutItem"))

	_, err = b.s.Claim(ctx, nil, "webhook", "evt-2", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	b.clock.Advance(time.Minute)
	_, err = b.s.Claim(ctx, batch, "webhook", "evt-2", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, 3, b.srv.Calls("PutItem"))
	require.Zero(t, b.srv.Calls("GetItem"))
}

// TestClaimReadOfTheBatchFails: a failed read of the refusing lease's
// batch is a store *Error.
func TestClaimReadOfTheBatchFails(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	_, err := b.s.Claim(ctx, b.s.NewBatch(), "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	b.srv.Fail("GetItem", 1)
	_, err = b.s.Claim(ctx, b.s.NewBatch(), "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.ErrorContains(t, err, "read the batch of the lease that refused the claim")
}
