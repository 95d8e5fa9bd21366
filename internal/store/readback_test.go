package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/store"
)

// TestClaimRefusalWithAndWithoutTheItem: DynamoDB names the item that
// refused a claim; emulators and older compatible stores do not, and the
// item is then read back with one consistent GetItem. Either way a copy
// after delivery is a *DeliveredError at the delivery's time and a copy
// during a lease a *HeldError until its end: never a lease that ended in
// 1970.
func TestClaimRefusalWithAndWithoutTheItem(t *testing.T) {
	t.Parallel()
	for _, omit := range []bool{false, true} {
		b := setup(t, time.Hour)
		b.srv.OmitConditionItem(omit)
		reads := 0
		if omit {
			reads = 1
		}
		ctx := context.Background()
		until := b.clock.Now().Add(time.Minute)
		l, err := b.s.Claim(ctx, nil, "email", "n-1", "", until)
		require.NoError(t, err)

		_, err = b.s.Claim(ctx, nil, "email", "n-1", "", until.Add(time.Minute))
		var held *store.HeldError
		require.ErrorAs(t, err, &held, "omit %v", omit)
		require.True(t, held.Until.Equal(until), "omit %v: held until %s, want %s", omit, held.Until, until)
		require.Equal(t, reads, b.srv.Calls("GetItem"), "omit %v", omit)

		b.clock.Advance(5 * time.Second)
		at := b.clock.Now()
		require.NoError(t, b.s.Delivered(ctx, l))
		// Past the lease's end, and past a second lease's, too.
		for _, after := range []time.Duration{time.Minute, 10 * time.Minute} {
			b.clock.Advance(after)
			_, err = b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
			var done *store.DeliveredError
			require.ErrorAs(t, err, &done, "omit %v", omit)
			require.True(t, done.At.Equal(at), "omit %v: delivered at %s, want %s", omit, done.At, at)
		}
		require.Equal(t, 3*reads, b.srv.Calls("GetItem"), "omit %v", omit)
	}
}

// TestClaimRefusedByAForeignItem: an item under a delivery key that
// Claim did not write (no state, another state, a lease end that is
// missing, zero or not a number) refuses the claim as a store *Error of
// class store_unavailable, with and without the item in the refusal:
// never a delivered notification, never a lease held until 1970.
func TestClaimRefusedByAForeignItem(t *testing.T) {
	t.Parallel()
	key := func() map[string]types.AttributeValue {
		return map[string]types.AttributeValue{store.AttrPK: s("notification#webhook#evt-1"), store.AttrSK: s("delivery")}
	}
	with := func(kv ...any) map[string]types.AttributeValue {
		it := key()
		for i := 0; i < len(kv); i += 2 {
			it[kv[i].(string)] = kv[i+1].(types.AttributeValue)
		}
		return it
	}
	for name, item := range map[string]map[string]types.AttributeValue{
		"no state, a lease":             with(store.AttrLeaseUntil, n("99999999999999")),
		"another state":                 with(store.AttrState, s("sent"), store.AttrLeaseUntil, n("99999999999999")),
		"in progress, lease as text":    with(store.AttrState, s(store.StateInProgress), store.AttrLeaseUntil, s("soon")),
		"in progress, no lease, no exp": with(store.AttrState, s(store.StateInProgress), store.AttrUpdatedAt, n("1")),
	} {
		for _, omit := range []bool{false, true} {
			b := setup(t, time.Hour)
			put(t, b, item)
			b.srv.OmitConditionItem(omit)
			_, err := b.s.Claim(context.Background(), nil, "webhook", "evt-1", "", b.clock.Now().Add(time.Minute))
			var se *store.Error
			require.ErrorAs(t, err, &se, "%s, omit %v: %v", name, omit, err)
			require.Equal(t, store.ClassUnavailable, se.Class())
			require.ErrorContains(t, err, "store claim webhook evt-1: ")
			var held *store.HeldError
			var done *store.DeliveredError
			require.False(t, errorsAs(err, &held) || errorsAs(err, &done), "%s", name)
		}
	}
}

// TestClaimReadBackFails: when the refusal carries no item and reading it
// back fails, the claim is a store *Error, not a lease.
func TestClaimReadBackFails(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	_, err := b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	require.NoError(t, err)
	b.srv.OmitConditionItem(true)
	b.srv.Throttle("GetItem", 1)
	_, err = b.s.Claim(ctx, nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, store.ClassThrottled, se.Class())
	require.ErrorContains(t, err, "read back the item that refused the claim")
}

// TestDeliveredWithoutItsTimeIsDelivered: a delivered item without
// updated_at is delivered at an unknown time (zero), not in 1970.
func TestDeliveredWithoutItsTimeIsDelivered(t *testing.T) {
	t.Parallel()
	for _, omit := range []bool{false, true} {
		b := setup(t, time.Hour)
		put(t, b, map[string]types.AttributeValue{store.AttrPK: s("notification#email#n-1"), store.AttrSK: s("delivery"),
			store.AttrState: s(store.StateDelivered)})
		b.srv.OmitConditionItem(omit)
		_, err := b.s.Claim(context.Background(), nil, "email", "n-1", "", b.clock.Now().Add(time.Minute))
		var done *store.DeliveredError
		require.ErrorAs(t, err, &done)
		require.True(t, done.At.IsZero(), "omit %v: %s", omit, done.At)
	}
}

// TestUpdateHealthWithoutTheItem: a health write refused by a store that
// does not return the item reads it back and applies the change to it, so
// no failure is lost.
func TestUpdateHealthWithoutTheItem(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	b.srv.OmitConditionItem(true)
	ctx := context.Background()
	stale, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	for range 2 {
		_, _, err = b.s.UpdateHealth(ctx, stale, failure)
		require.NoError(t, err)
	}
	got, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	require.Equal(t, 2, got.Failures)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
