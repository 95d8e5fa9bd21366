package deadletter

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func letterBodies(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"version":1,"id":"n-%03d","channel":"webhook"}`, i)
	}
	return out
}

// A scan that outlasts its hold sees its first letters again; it must stop
// and say the list is incomplete instead of receiving them round and round.
func TestScanLongerThanHoldStopsWithErrHoldTooShort(t *testing.T) {
	t.Parallel()
	const queue = dlqURL
	w, client, _ := newSQSWire(t, queue, 0, letterBodies(120)...)
	// 12 receives of 200 ms simulated time each outlast a 1 s hold.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	letters, err := Scan(ctx, client, queue, time.Second)
	require.ErrorIs(t, err, ErrHoldTooShort)
	require.NotEmpty(t, letters)
	require.Less(t, len(letters), 120)
	seen := map[string]bool{}
	for _, l := range letters {
		require.False(t, seen[l.MessageID], "letter %s listed twice", l.MessageID)
		seen[l.MessageID] = true
	}
	require.NoError(t, Release(ctx, client, queue, letters), "the newest receipt handles are kept")
	visible, hidden := w.Counts(queue)
	require.Zero(t, hidden, "nothing stays hidden after the release")
	require.Equal(t, 120, visible)

	// With a hold longer than the scan, every letter is read once: 12
	// receives of 10, then one empty receive, as the queue reports none
	// visible.
	before := len(w.Requests("ReceiveMessage"))
	letters, err = Scan(ctx, client, queue, time.Minute)
	require.NoError(t, err)
	require.Len(t, letters, 120)
	require.Len(t, w.Requests("ReceiveMessage"), before+13, "one empty receive when nothing is visible")
	require.NoError(t, Release(ctx, client, queue, letters))
}

// TestScanHold: the letters are hidden for the hold asked, or DefaultHold
// when it is 0 or negative.
func TestScanHold(t *testing.T) {
	t.Parallel()
	for hold, want := range map[time.Duration]int{0: 60, -time.Second: 60, time.Second: 1, 90 * time.Second: 90} {
		w, client, _ := newSQSWire(t, dlqURL, 0, letterBodies(1)...)
		_, _ = Scan(context.Background(), client, dlqURL, hold) // a 1 s hold ends during the scan: only the request matters
		var in struct{ VisibilityTimeout int }
		require.NoError(t, json.Unmarshal(w.Requests("ReceiveMessage")[0], &in))
		require.Equal(t, want, in.VisibilityTimeout, "hold %v", hold)
		require.Equal(t, DefaultHold, 60*time.Second)
	}
}

// A FIFO queue returns no more of a message group while some of it is
// held, so a scan that holds what it read cannot read a group of more than
// 10 dead letters whole. It must say so rather than list a part as all.
func TestScanOfFIFOQueueSaysWhatItCouldNotRead(t *testing.T) {
	t.Parallel()
	const queue = fifoDLQURL
	w, client, _ := newSQSWire(t, queue, 2, letterBodies(25)...) // 13 letters in one group, 12 in the other, interleaved
	ctx := context.Background()
	letters, err := Scan(ctx, client, queue, time.Minute)
	require.ErrorIs(t, err, ErrIncomplete)
	require.ErrorContains(t, err, "about 15 more")
	require.Len(t, letters, 10, "one receive: then both groups are held")
	require.NoError(t, Release(ctx, client, queue, letters))
	visible, hidden := w.Counts(queue)
	require.Equal(t, 25, visible)
	require.Zero(t, hidden)

	// A group per letter: each receive reads new groups, and all is read.
	_, client2, _ := newSQSWire(t, queue, 25, letterBodies(25)...)
	letters, err = Scan(ctx, client2, queue, time.Minute)
	require.NoError(t, err)
	require.Len(t, letters, 25)
}

// TestScanBoundaries: one letter seen again is enough to stop the scan, and
// one FIFO letter left unread is enough to call the list incomplete.
func TestScanBoundaries(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const queue = dlqURL
	w, client, _ := newSQSWire(t, queue, 0, letterBodies(1)...)
	w.SetReceiveClock(w.Now(), 2*time.Second) // the one letter's 1 s hold ends before the next receive
	letters, err := Scan(ctx, client, queue, time.Second)
	require.ErrorIs(t, err, ErrHoldTooShort)
	require.ErrorContains(t, err, "1 dead letters of "+queue+" came back")
	require.Len(t, letters, 1)

	const fifo = fifoDLQURL
	w2, client2, _ := newSQSWire(t, fifo, 1, letterBodies(11)...) // one group of 11: one receive of 10, then the group is held
	letters, err = Scan(ctx, client2, fifo, time.Minute)
	require.ErrorIs(t, err, ErrIncomplete)
	require.ErrorContains(t, err, "about 1 more")
	require.Len(t, letters, 10)
	require.Len(t, w2.Requests("ReceiveMessage"), 1+3, "three empty receives while one letter stays visible, then it stops")
}
