package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/store"
)

const paceKey = "chat:slack:0123456789abcdef0123456789abcdef"

func nextSlot(every time.Duration) func(p *store.Pace) bool {
	return func(p *store.Pace) bool {
		p.Next = p.Next.Add(every)
		p.Expires = p.Next.Add(time.Minute)
		return true
	}
}

// TestPaceIsSharedWithoutReads: two writers (two execution environments)
// each keep their own copy of one webhook's pace; each write is one
// conditional PutItem, and a writer whose copy is stale gets the item the
// other left from the failed condition and applies its change to it: no
// slot is given twice, and nothing is ever read with GetItem.
func TestPaceIsSharedWithoutReads(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	start := b.clock.Now().Truncate(time.Millisecond)
	a, bb := store.Pace{Key: paceKey, Next: start}, store.Pace{Key: paceKey, Next: start}
	var err error
	var wrote bool
	var slots []time.Time
	for i := range 6 {
		mine := &a
		if i%2 == 1 {
			mine = &bb
		}
		var took time.Time
		*mine, wrote, err = b.s.UpdatePace(ctx, *mine, func(p *store.Pace) bool {
			if p.Next.IsZero() {
				p.Next = start
			}
			took = p.Next // the last try's is the one written
			p.Next = p.Next.Add(time.Second)
			p.Expires = p.Next.Add(time.Minute)
			return true
		})
		require.NoError(t, err, i)
		require.True(t, wrote, i)
		slots = append(slots, took.UTC())
	}
	for i, s := range slots {
		require.True(t, s.Equal(start.Add(time.Duration(i)*time.Second)), "slot %d at %v: each one once, in turn", i, s)
	}
	require.Zero(t, b.srv.Calls("GetItem"))
	require.Equal(t, 6+5, b.srv.Calls("PutItem"), "one write per slot, one more each time the other came first")
}

// TestPaceChangeFalseWritesNothing: a change that declines (a turn after
// the invocation's deadline) writes nothing and returns the pace it saw.
func TestPaceChangeFalseWritesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	p, wrote, err := b.s.UpdatePace(ctx, store.Pace{Key: paceKey}, nextSlot(time.Second))
	require.NoError(t, err)
	require.True(t, wrote)
	got, wrote, err := b.s.UpdatePace(ctx, p, func(*store.Pace) bool { return false })
	require.NoError(t, err)
	require.False(t, wrote)
	require.Equal(t, p, got)
	require.Equal(t, 1, b.srv.Calls("PutItem"))
}

// TestPaceExpiredIsZero: an item past its expires_at (DynamoDB deletes it
// days later, the local stack never) is a pace nothing is known of, and the
// next write still matches its version.
func TestPaceExpiredIsZero(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	old := b.clock.Now().Add(5 * time.Second)
	p, _, err := b.s.UpdatePace(ctx, store.Pace{Key: paceKey}, func(p *store.Pace) bool {
		p.Next, p.Until, p.Expires = old, old, old.Add(time.Minute)
		return true
	})
	require.NoError(t, err)
	b.clock.Advance(2 * time.Minute)
	var seen store.Pace
	_, wrote, err := b.s.UpdatePace(ctx, store.Pace{Key: paceKey}, func(x *store.Pace) bool {
		seen = *x
		x.Next = b.clock.Now()
		return true
	})
	require.NoError(t, err)
	require.True(t, wrote)
	require.True(t, seen.Next.IsZero() && seen.Until.IsZero(), "expired: %+v", seen)
	_ = p
	require.Equal(t, 3, b.srv.Calls("PutItem"), "the stale copy's write met the expired item's version once")
}

// TestPaceStoreFailure: a failed call is an *Error of its class, and the
// pace given back is the caller's.
func TestPaceStoreFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	b.srv.Throttle("PutItem", 10)
	_, _, err := b.s.UpdatePace(context.Background(), store.Pace{Key: paceKey}, nextSlot(time.Second))
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, store.ClassThrottled, se.Class())
	require.NotContains(t, err.Error(), "https://")
}

// TestPaceSharedWithAStoreWithoutTheItem: a store that answers a failed
// condition without the item (OmitConditionItem) costs one consistent
// GetItem per conflict, and the slots are still given once each, in turn.
func TestPaceSharedWithAStoreWithoutTheItem(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	b.srv.OmitConditionItem(true)
	ctx := context.Background()
	start := b.clock.Now().Truncate(time.Millisecond)
	a, other := store.Pace{Key: paceKey}, store.Pace{Key: paceKey}
	var slots []time.Time
	for i := range 4 {
		mine := &a
		if i%2 == 1 {
			mine = &other
		}
		var took time.Time
		var err error
		*mine, _, err = b.s.UpdatePace(ctx, *mine, func(p *store.Pace) bool {
			if p.Next.IsZero() {
				p.Next = start
			}
			took = p.Next
			p.Next = p.Next.Add(time.Second)
			p.Expires = p.Next.Add(time.Minute)
			return true
		})
		require.NoError(t, err, i)
		slots = append(slots, took.UTC())
	}
	for i, s := range slots {
		require.True(t, s.Equal(start.Add(time.Duration(i)*time.Second)), "slot %d at %v", i, s)
	}
	require.Equal(t, 3, b.srv.Calls("GetItem"), "one read per conflict")
}

// TestPaceContendedIsNoStoreFailure: when every try meets another writer
// (six environments at one webhook's instant), UpdatePace stops after 5
// PutItems with an *Error that matches store.ErrContended, so a caller can
// tell a busy webhook from a store that does not answer; a failed call
// does not match it.
func TestPaceContendedIsNoStoreFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	other := store.Pace{Key: paceKey}
	tries := 0
	_, wrote, err := b.s.UpdatePace(ctx, store.Pace{Key: paceKey}, func(p *store.Pace) bool {
		tries++
		// Each try, another environment writes first.
		var werr error
		other, _, werr = b.s.UpdatePace(ctx, other, nextSlot(time.Second))
		require.NoError(t, werr)
		return nextSlot(time.Second)(p)
	})
	require.False(t, wrote)
	require.Equal(t, 5, tries)
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, store.ErrContended)
	require.EqualError(t, err, "store write pace of "+paceKey+": 5 tries met another writer")
	b.srv.Throttle("PutItem", 1)
	_, _, err = b.s.UpdatePace(ctx, other, nextSlot(time.Second))
	require.Error(t, err)
	require.NotErrorIs(t, err, store.ErrContended)
}

// TestPaceNeverGivesATurnEarly: a pace whose interval is not whole
// milliseconds (an endpoint's rate limit of 700/s: one turn every
// 1.428571 ms) is kept in the item to the millisecond; a writer that takes
// the next turn from the other's item must never get it before its time,
// or the shared limit is exceeded (rounded down each time, 700/s became
// 1,000/s). Rounded up, a turn is at most a millisecond late.
func TestPaceNeverGivesATurnEarly(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	every := time.Second / 700 // 1.428571 ms
	start := b.clock.Now().Truncate(time.Millisecond)
	a, bb := store.Pace{Key: paceKey}, store.Pace{Key: paceKey}
	const turns = 20
	for i := range turns {
		mine := &a
		if i%2 == 1 {
			mine = &bb
		}
		var took time.Time
		var err error
		*mine, _, err = b.s.UpdatePace(ctx, *mine, func(p *store.Pace) bool {
			took = p.Next
			if took.Before(start) {
				took = start
			}
			p.Next = took.Add(every)
			p.Expires = p.Next.Add(time.Minute)
			return true
		})
		require.NoError(t, err, i)
		due := start.Add(time.Duration(i) * every)
		require.False(t, took.Before(due), "turn %d at %v, due at %v: early", i, took.Sub(start), due.Sub(start))
		require.Less(t, took.Sub(due), time.Duration(i+1)*time.Millisecond, "turn %d: late by at most a millisecond a turn", i)
	}
}
