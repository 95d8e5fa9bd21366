package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/store"
)

// TestClaimOfAnotherDigest: a claim whose digest differs from the live
// record's is a *MismatchError, delivered or in progress, with and
// without the item in the refusal; the same digest is a duplicate or
// held as before; a record or a claim without a digest (an older herald)
// checks none; an expired record of another digest is claimed.
func TestClaimOfAnotherDigest(t *testing.T) {
	t.Parallel()
	for _, omit := range []bool{false, true} {
		b := setup(t, time.Hour)
		b.srv.OmitConditionItem(omit)
		ctx := context.Background()
		until := b.clock.Now().Add(time.Minute)
		l, err := b.s.Claim(ctx, nil, "webhook", "evt-1", "d-one", until)
		require.NoError(t, err)

		var mm *store.MismatchError
		_, err = b.s.Claim(ctx, nil, "webhook", "evt-1", "d-two", until)
		require.ErrorAs(t, err, &mm, "omit %v", omit)
		require.Equal(t, store.StateInProgress, mm.State)
		require.True(t, mm.At.Equal(b.clock.Now()))
		var held *store.HeldError
		for _, d := range []string{"d-one", ""} {
			_, err = b.s.Claim(ctx, nil, "webhook", "evt-1", d, until)
			require.ErrorAs(t, err, &held, "digest %q, omit %v", d, omit)
		}

		b.clock.Advance(time.Second)
		at := b.clock.Now()
		require.NoError(t, b.s.Delivered(ctx, l))
		b.clock.Advance(10 * time.Minute)
		for _, d := range []string{"d-two", "d-one\x00", "D-ONE"} {
			_, err = b.s.Claim(ctx, nil, "webhook", "evt-1", d, b.clock.Now().Add(time.Minute))
			require.ErrorAs(t, err, &mm, "digest %q, omit %v", d, omit)
			require.Equal(t, store.StateDelivered, mm.State)
			require.True(t, mm.At.Equal(at), "at %s, want %s", mm.At, at)
		}
		var done *store.DeliveredError
		for _, d := range []string{"d-one", ""} {
			_, err = b.s.Claim(ctx, nil, "webhook", "evt-1", d, b.clock.Now().Add(time.Minute))
			require.ErrorAs(t, err, &done, "digest %q, omit %v", d, omit)
		}
		// Another channel is another notification.
		_, err = b.s.Claim(ctx, nil, "email", "evt-1", "d-two", b.clock.Now().Add(time.Minute))
		require.NoError(t, err)

		// A window after delivery, another notification may use the id.
		b.clock.Advance(time.Hour)
		_, err = b.s.Claim(ctx, nil, "webhook", "evt-1", "d-two", b.clock.Now().Add(time.Minute))
		require.NoError(t, err, "omit %v", omit)
	}
}

// TestRecordWithoutADigestMatchesAny: a delivered record an older herald
// wrote (no digest) makes a copy of any digest a duplicate.
func TestRecordWithoutADigestMatchesAny(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	l, err := b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, b.s.Delivered(ctx, l))
	for _, item := range b.srv.Items(table) {
		require.NotContains(t, item, store.AttrDigest)
	}
	_, err = b.s.Claim(ctx, nil, "email", "n-1", "d-any", b.clock.Now().Add(time.Minute))
	var done *store.DeliveredError
	require.ErrorAs(t, err, &done)
}

// TestDeliveredKeepsTheDigest: the delivered record carries the lease's
// digest.
func TestDeliveredKeepsTheDigest(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	l, err := b.s.Claim(ctx, nil, "email", "n-1", "d-one", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, b.s.Delivered(ctx, l))
	items := b.srv.Items(table)
	require.Len(t, items, 1)
	require.Equal(t, map[string]any{"S": "d-one"}, items[0][store.AttrDigest])
	require.Equal(t, map[string]any{"S": store.StateDelivered}, items[0][store.AttrState])
}

// TestMismatchErrorText: what an operator reads.
func TestMismatchErrorText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	require.Equal(t, "another notification with this id was delivered (2026-12-01T10:00:00Z): its digest differs",
		(&store.MismatchError{State: store.StateDelivered, At: at}).Error())
	require.Equal(t, "another notification with this id is being delivered: its digest differs",
		(&store.MismatchError{State: store.StateInProgress}).Error())
}
