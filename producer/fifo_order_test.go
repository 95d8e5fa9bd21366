package producer_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// On a FIFO queue nothing of a message group is sent after one of the group
// that was not sent: SQS stores each group in input order, whatever it
// fails, and what could not be sent is reported.

// byPrefix groups notifications by their id's prefix: "a-1" is in group a.
func byPrefix(m *notification.Message) string { return strings.SplitN(m.ID, "-", 2)[0] }

func fifoClient(t *testing.T, mutate func(*producer.Client)) (*sqsWire, *producer.Client) {
	t.Helper()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	p := &producer.Client{SQS: c, QueueURL: wire.srv.URL + "/000000000000/herald.fifo", GroupBy: byPrefix, RetryDelay: time.Millisecond}
	if mutate != nil {
		mutate(p)
	}
	return wire, p
}

func bodies(ids ...string) [][]byte {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		out[i] = body(id, 1)
	}
	return out
}

// tries counts the calls that carried the notification id.
func tries(wire *sqsWire, id string) int {
	n := 0
	for _, batch := range wire.sent() {
		for _, e := range batch {
			if e.MessageDeduplicationId == id {
				n++
			}
		}
	}
	return n
}

func notSent(t *testing.T, err error) []string {
	t.Helper()
	var ns *producer.NotSentError
	require.ErrorAs(t, err, &ns)
	return ns.IDs
}

func TestFIFOFailedEntryIsSentBeforeTheRestOfItsGroup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		ids   []string
		flaky string
	}{
		{"one group, the first fails once", []string{"a-1", "a-2", "a-3"}, "a-1"},
		{"one group, the middle fails once", []string{"a-1", "a-2", "a-3"}, "a-2"},
		{"one group, the last fails once", []string{"a-1", "a-2", "a-3"}, "a-3"},
		{"groups interleaved, one fails once", []string{"a-1", "b-1", "a-2", "b-2", "a-3", "c-1", "b-3"}, "a-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wire, p := fifoClient(t, nil)
			wire.failTimes[`"`+tc.flaky+`"`] = 1
			res, err := p.SendBodies(context.Background(), bodies(tc.ids...))
			require.NoError(t, err)
			want := map[string][]string{}
			for _, id := range tc.ids {
				want[id[:1]] = append(want[id[:1]], id)
			}
			require.Equal(t, want, wire.groupOrder(), "each group stored in input order")
			for _, r := range res {
				require.NotEmpty(t, r.MessageID)
			}
			for _, batch := range wire.sent() {
				seen := map[string]bool{}
				for _, e := range batch {
					require.False(t, seen[e.MessageGroupId], "at most one notification of a group per call")
					seen[e.MessageGroupId] = true
				}
			}
		})
	}
}

func TestFIFOGroupBlockedBehindWhatWasNotSent(t *testing.T) {
	t.Parallel()
	ids := []string{"a-1", "b-1", "a-2", "b-2", "a-3", "b-3"}

	t.Run("refused first: the whole group waits, the other goes", func(t *testing.T) {
		t.Parallel()
		wire, p := fifoClient(t, nil)
		wire.refuse[`"a-1"`] = true
		res, err := p.SendBodies(context.Background(), bodies(ids...))
		require.Equal(t, []string{"a-1", "a-2", "a-3"}, notSent(t, err))
		require.ErrorContains(t, err, "3 of 6 notifications not sent: a-1, a-2, a-3")
		require.ErrorContains(t, res[0].Err, "InvalidMessageContents")
		require.ErrorIs(t, res[2].Err, producer.ErrGroupBlocked)
		require.ErrorContains(t, res[4].Err, "behind a-1")
		require.Equal(t, map[string][]string{"b": {"b-1", "b-2", "b-3"}}, wire.groupOrder())
		require.Equal(t, 1, tries(wire, "a-1"), "the sender's fault is not retried")
	})

	t.Run("refused in the middle", func(t *testing.T) {
		t.Parallel()
		wire, p := fifoClient(t, nil)
		wire.refuse[`"b-2"`] = true
		res, err := p.SendBodies(context.Background(), bodies(ids...))
		require.Equal(t, []string{"b-2", "b-3"}, notSent(t, err))
		require.ErrorIs(t, res[5].Err, producer.ErrGroupBlocked)
		require.Equal(t, map[string][]string{"a": {"a-1", "a-2", "a-3"}, "b": {"b-1"}}, wire.groupOrder())
	})

	t.Run("attempts exhausted on the last", func(t *testing.T) {
		t.Parallel()
		wire, p := fifoClient(t, func(c *producer.Client) { c.MaxAttempts = 3 })
		wire.failTimes[`"a-3"`] = 100
		res, err := p.SendBodies(context.Background(), bodies(ids...))
		require.Equal(t, []string{"a-3"}, notSent(t, err))
		require.ErrorContains(t, res[4].Err, "InternalError")
		require.NotErrorIs(t, res[4].Err, producer.ErrGroupBlocked)
		require.Equal(t, map[string][]string{"a": {"a-1", "a-2"}, "b": {"b-1", "b-2", "b-3"}}, wire.groupOrder())
		require.Equal(t, 3, tries(wire, "a-3"))
	})

	t.Run("attempts exhausted in the middle: the rest of the group waits", func(t *testing.T) {
		t.Parallel()
		wire, p := fifoClient(t, func(c *producer.Client) { c.MaxAttempts = 2 })
		wire.failTimes[`"a-2"`] = 2
		res, err := p.SendBodies(context.Background(), bodies(ids...))
		require.Equal(t, []string{"a-2", "a-3"}, notSent(t, err))
		require.ErrorContains(t, res[4].Err, "behind a-2")
		require.Equal(t, map[string][]string{"a": {"a-1"}, "b": {"b-1", "b-2", "b-3"}}, wire.groupOrder())
	})

	t.Run("a whole call throttled: its groups wait, later calls go on", func(t *testing.T) {
		t.Parallel()
		wire, p := fifoClient(t, nil)
		wire.throttle[2] = true
		res, err := p.SendBodies(context.Background(), bodies(ids...))
		require.Equal(t, []string{"a-2", "b-2", "a-3", "b-3"}, notSent(t, err))
		require.ErrorContains(t, res[2].Err, "ThrottlingException")
		require.ErrorIs(t, res[4].Err, producer.ErrGroupBlocked)
		require.Equal(t, map[string][]string{"a": {"a-1"}, "b": {"b-1"}}, wire.groupOrder())
		require.Len(t, wire.sent(), 1, "the throttled call stored nothing; no call after it")
	})

	t.Run("throttled with eleven groups: the eleventh goes", func(t *testing.T) {
		t.Parallel()
		wire, p := fifoClient(t, nil)
		wire.throttle[1] = true
		var many []string
		for _, g := range "abcdefghijk" {
			many = append(many, string(g)+"-1", string(g)+"-2")
		}
		_, err := p.SendBodies(context.Background(), bodies(many...))
		require.Len(t, notSent(t, err), 20)
		require.Equal(t, map[string][]string{"k": {"k-1", "k-2"}}, wire.groupOrder())
	})
}

func TestFIFOGroupByFallsBackToGroupID(t *testing.T) {
	t.Parallel()
	wire, p := fifoClient(t, func(c *producer.Client) {
		c.GroupID = "default"
		c.GroupBy = func(m *notification.Message) string {
			if strings.HasPrefix(m.ID, "a-") {
				return "a"
			}
			return ""
		}
	})
	_, err := p.SendBodies(context.Background(), bodies("a-1", "x-1", "x-2"))
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"a": {"a-1"}, "default": {"x-1", "x-2"}}, wire.groupOrder())
	require.Len(t, wire.sent(), 2, "a-1 and x-1 share a call")

	_, p = fifoClient(t, func(c *producer.Client) {
		c.GroupBy = func(m *notification.Message) string { return strings.TrimPrefix(m.ID, "grouped-") }
	})
	_, err = p.SendBodies(context.Background(), bodies("grouped-a", "grouped-"))
	require.ErrorContains(t, err, "notification 2 (grouped-) has no message group", "numbered from 1, as in InvalidError")
}

func TestStandardQueueReportsWhatWasNotSent(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	wire.refuse[`"b-1"`] = true
	wire.throttle[2] = true
	var ids []string
	for i := range 12 {
		ids = append(ids, "a-"+string(rune('a'+i)))
	}
	ids[3] = "b-1"
	p := &producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q", RetryDelay: time.Millisecond}
	res, err := p.SendBodies(context.Background(), bodies(ids...))
	require.Equal(t, []string{"b-1", "a-k", "a-l"}, notSent(t, err), "the refused one and the throttled second call's")
	require.False(t, errors.Is(res[10].Err, producer.ErrGroupBlocked))
	require.ErrorContains(t, res[10].Err, "ThrottlingException")
}

func TestFIFOBatchKeepsTheByteLimit(t *testing.T) {
	t.Parallel()
	wire, p := fifoClient(t, nil)
	third := producer.MaxBatchBytes / 3
	var in [][]byte
	for _, id := range []string{"a-1", "b-1", "c-1", "d-1"} {
		in = append(in, body(id, third))
	}
	in = append(in, body("e-1", 1))
	_, err := p.SendBodies(context.Background(), in)
	require.NoError(t, err)
	var calls [][]string
	for _, batch := range wire.sent() {
		var ids []string
		for _, e := range batch {
			ids = append(ids, e.MessageDeduplicationId)
		}
		calls = append(calls, ids)
	}
	require.Equal(t, [][]string{{"a-1", "b-1", "e-1"}, {"c-1", "d-1"}}, calls, "a group's head that does not fit waits for the next call; a smaller one behind it fills the room")
}

// TestFIFOBatchOfExactlyMaxBatchBytes: notifications of different groups
// that add up to exactly MaxBatchBytes go in one call; a byte more splits
// them.
func TestFIFOBatchOfExactlyMaxBatchBytes(t *testing.T) {
	t.Parallel()
	half := func(id string, extra int) []byte {
		overhead := len(body(id, 0))
		return body(id, producer.MaxBatchBytes/2-overhead+extra)
	}
	for extra, calls := range map[int]int{0: 1, 1: 2} {
		wire, p := fifoClient(t, nil)
		b := [][]byte{half("a-1", 0), half("b-1", extra)}
		require.Equal(t, producer.MaxBatchBytes+extra, len(b[0])+len(b[1]))
		_, err := p.SendBodies(context.Background(), b)
		require.NoError(t, err)
		require.Len(t, wire.sent(), calls, "%d bytes over MaxBatchBytes", extra)
	}
}
