package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/store"
)

// put writes item as another writer would (an operator, an older herald).
func put(t *testing.T, b *bundle, item map[string]types.AttributeValue) {
	t.Helper()
	_, err := b.srv.Client().PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
	require.NoError(t, err)
}

func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// TestKeysAtVersionOneKeepTheirTimes: an item at version 1 (the lowest
// valid one) is read whole, and the next rotation is conditional on it.
func TestKeysAtVersionOneKeepTheirTimes(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	put(t, b, map[string]types.AttributeValue{
		store.AttrPK: s("origin#" + origin), store.AttrSK: s("keys"), store.AttrType: s("keys"),
		store.AttrVersion: n("1"), store.AttrPreviousUntil: n("1796119200000"), store.AttrUpdatedAt: n("1796115600000"),
	})
	k, err := b.s.Keys(ctx, origin)
	require.NoError(t, err)
	require.Equal(t, 1, k.Version)
	require.True(t, k.PreviousUntil.Equal(time.UnixMilli(1796119200000)), "previous until %s", k.PreviousUntil)
	require.True(t, k.UpdatedAt.Equal(time.UnixMilli(1796115600000)), "updated at %s", k.UpdatedAt)

	k, err = b.s.Rotate(ctx, origin, time.Hour)
	require.NoError(t, err, "the rotation over an existing version-1 item")
	require.Equal(t, 2, k.Version)
}

// TestKeysOfANonPositiveVersionAreVersionOne: a version of 0 or below is
// not a version; the origin is at 1 with nothing previous.
func TestKeysOfANonPositiveVersionAreVersionOne(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0", "-3", "1.5"} {
		b := setup(t, time.Hour)
		put(t, b, map[string]types.AttributeValue{
			store.AttrPK: s("origin#" + origin), store.AttrSK: s("keys"),
			store.AttrVersion: n(v), store.AttrPreviousUntil: n("1796119200000"),
		})
		k, err := b.s.Keys(context.Background(), origin)
		require.NoError(t, err)
		require.Equal(t, store.OriginKeys{Version: 1}, k, "version %s", v)
	}
}

// TestHealthTimesOfZeroAreNone: a time attribute of 0 (or below) is no
// time, as an absent one.
func TestHealthTimesOfZeroAreNone(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	put(t, b, map[string]types.AttributeValue{
		store.AttrPK: s("origin#" + healthOrigin), store.AttrSK: s("health"),
		store.AttrVersion: n("1"), store.AttrFailures: n("2"),
		store.AttrLastSuccess: n("0"), store.AttrLastFailure: n("1"), store.AttrProbeUntil: n("-1"),
	})
	h, err := b.s.Health(context.Background(), healthOrigin)
	require.NoError(t, err)
	require.Equal(t, 2, h.Failures)
	require.True(t, h.LastSuccess.IsZero(), "last success %s", h.LastSuccess)
	require.True(t, h.LastFailure.Equal(time.UnixMilli(1)), "1 ms is a time: %s", h.LastFailure)
	require.True(t, h.ProbeUntil.IsZero(), "probe until %s", h.ProbeUntil)
}

// TestUpdateHealthGivesUpAfterThreeTries: when every try meets another
// writer, UpdateHealth stops after the third PutItem with an *Error and
// writes nothing of its own.
func TestUpdateHealthGivesUpAfterThreeTries(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	h, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	tries := 0
	// Each try, another environment writes first.
	_, wrote, err := b.s.UpdateHealth(ctx, h, func(next *store.Health) bool {
		tries++
		cur, err := b.s.Health(ctx, healthOrigin)
		require.NoError(t, err)
		_, _, err = b.s.UpdateHealth(ctx, cur, failure)
		require.NoError(t, err)
		next.FailureClass = "mine"
		return true
	})
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.False(t, wrote)
	require.Equal(t, 3, tries)
	require.EqualError(t, err, "store write health of "+healthOrigin+": 3 tries met another writer")
	got, err := b.s.Health(ctx, healthOrigin)
	require.NoError(t, err)
	require.Equal(t, 3, got.Failures)
	require.Empty(t, got.FailureClass)
}

// TestRotateWriteFailure: a failed PutItem of a rotation is an *Error
// naming the origin, and the version is unchanged.
func TestRotateWriteFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	b.srv.Fail("PutItem", 1)
	_, err := b.s.Rotate(context.Background(), origin, time.Hour)
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.ErrorContains(t, err, "store rotate the keys of "+origin+": ")
	k, err := b.s.Keys(context.Background(), origin)
	require.NoError(t, err)
	require.Equal(t, 1, k.Version)
}

// TestErrorTexts: what an operator reads in a log.
func TestErrorTexts(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 10, 0, 0, 500_000_000, time.FixedZone("x", 3600))
	require.Equal(t, "already delivered at 2026-12-01T09:00:00Z", (&store.DeliveredError{At: at}).Error())
	require.Equal(t, "another attempt holds its lease until 2026-12-01T09:00:00.5Z", (&store.HeldError{Until: at}).Error())
	require.Equal(t, "another rotation of "+origin+" happened at the same time: nothing changed, try again",
		(&store.ConflictError{Origin: origin}).Error())
}

// TestDefaults: a delivered notification is remembered 24 hours by
// default; a health item is kept 30 days.
func TestDefaults(t *testing.T) {
	t.Parallel()
	require.Equal(t, 24*time.Hour, store.DefaultWindow)
	require.Equal(t, 30*24*time.Hour, store.HealthRetention)
}

// TestHealthsLeavesOutAnItemAtItsExpiry: a health item whose expires_at is
// this second is expired for Healths, as for Health.
func TestHealthsLeavesOutAnItemAtItsExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	_, _, err := b.s.UpdateHealth(ctx, store.Health{Origin: healthOrigin}, failure)
	require.NoError(t, err)
	b.clock.Advance(store.HealthRetention - time.Second)
	hs, err := b.s.Healths(ctx)
	require.NoError(t, err)
	require.Len(t, hs, 1, "a second before its expiry")
	b.clock.Advance(time.Second)
	hs, err = b.s.Healths(ctx)
	require.NoError(t, err)
	require.Empty(t, hs, "at its expiry")
}
