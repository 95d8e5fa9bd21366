package deadletter

import (
	"context"
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
	const queue = "https://sqs.us-east-1.amazonaws.com/1/dlq"
	w, client := newSQSWire(letterBodies(120)...)
	defer w.Close()
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
	visible, hidden := w.state()
	require.Zero(t, hidden, "nothing stays hidden after the release")
	require.Equal(t, 120, visible)

	// With a hold longer than the scan, every letter is read once.
	letters, err = Scan(ctx, client, queue, time.Minute)
	require.NoError(t, err)
	require.Len(t, letters, 120)
	require.NoError(t, Release(ctx, client, queue, letters))
}
