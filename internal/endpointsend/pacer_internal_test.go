package endpointsend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/gcra"
	"github.com/heraldhq/herald/internal/store"
)

// The pacer's turns are taken at a fixed time of the test's own (turn
// neither waits nor reads the real clock); no deadline (gcra.NoDeadline).
var paceNow = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

// TestPacerKeepsEachEndpointsPace: an endpoint's pace is kept while
// others' are taken (the turn after its first is an interval later, not at
// once), up to maxPaced endpoints; the next one after that many starts
// afresh, so that the pacer never holds more than maxPaced.
func TestPacerKeepsEachEndpointsPace(t *testing.T) {
	t.Parallel()
	p := newPacer(nil)
	r := gcra.PerSecond(1)
	take := func(key string) time.Duration {
		t.Helper()
		wait, taken, contended := p.turn(t.Context(), key, r, paceNow, gcra.NoDeadline)
		require.True(t, taken, key)
		require.False(t, contended, key)
		return wait
	}
	a, b := DestinationKey("ep_a"), DestinationKey("ep_b")
	require.Zero(t, take(a), "a's first turn is at once")
	require.Zero(t, take(b), "b's first turn is at once")
	require.Equal(t, time.Second, take(a), "a's second turn is a's interval later: b's turn did not forget a's pace")

	for i := 2; i < maxPaced; i++ {
		require.Zero(t, take(DestinationKey(fmt.Sprintf("ep_%d", i))))
	}
	p.mu.Lock()
	require.Len(t, p.paces, maxPaced)
	p.mu.Unlock()
	require.Equal(t, 2*time.Second, take(a), "a's pace is still kept among maxPaced")

	require.Zero(t, take(DestinationKey("ep_one_more")), "one more endpoint's first turn")
	p.mu.Lock()
	require.Len(t, p.paces, 1, "no more than maxPaced: started afresh with the new one")
	p.mu.Unlock()
	require.Zero(t, take(a), "a's pace was forgotten with the rest")
}

// failingPace is a PaceStore whose every call fails (with ctx's error
// when ctx is done, as the store's client does); it counts the calls.
type failingPace struct {
	mu    sync.Mutex
	calls int
}

func (f *failingPace) UpdatePace(ctx context.Context, _ store.Pace, _ func(*store.Pace) bool) (store.Pace, bool, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return store.Pace{}, false, err
	}
	return store.Pace{}, false, errors.New("ProvisionedThroughputExceededException")
}

func (f *failingPace) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// TestPacerStoreDown: after the pace store failed a call, the pacer paces
// alone (the turn still taken, from its own copy) and asks the store again
// only paceStoreRetry later, by its clock; a call that failed because the
// caller's context ended is no failure of the store's, and the next turn
// asks it at once.
func TestPacerStoreDown(t *testing.T) {
	t.Parallel()
	r := gcra.PerSecond(1)
	key := DestinationKey("ep_a")

	t.Run("the store failed", func(t *testing.T) {
		t.Parallel()
		st := &failingPace{}
		p := newPacer(st)
		for i, c := range []struct {
			at    time.Duration // after paceNow
			calls int           // the store's calls after the turn
		}{
			{0, 1},
			{time.Second, 1},
			{paceStoreRetry - time.Second, 1},
			{paceStoreRetry, 2},
			{paceStoreRetry + time.Second, 2},
		} {
			wait, taken, contended := p.turn(t.Context(), key, r, paceNow.Add(c.at), gcra.NoDeadline)
			require.True(t, taken, "turn %d is taken here alone", i)
			require.False(t, contended, "turn %d", i)
			require.Zero(t, wait, "turn %d: a second after the last, at once", i)
			require.Equal(t, c.calls, st.count(), "turn %d, %v on: the store's calls", i, c.at)
		}
	})

	t.Run("the caller's context ended", func(t *testing.T) {
		t.Parallel()
		st := &failingPace{}
		p := newPacer(st)
		done, cancel := context.WithCancel(t.Context())
		cancel()
		_, taken, _ := p.turn(done, key, r, paceNow, gcra.NoDeadline)
		require.True(t, taken)
		require.Equal(t, 1, st.count())
		_, taken, _ = p.turn(t.Context(), key, r, paceNow.Add(time.Second), gcra.NoDeadline)
		require.True(t, taken)
		require.Equal(t, 2, st.count(), "the store is asked again at once: it did not fail")
	})
}
