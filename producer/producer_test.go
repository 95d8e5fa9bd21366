package producer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/producer"
)

func body(id string, payloadBytes int) []byte {
	return fmt.Appendf(nil, `{"version":1,"id":%q,"channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":"%s"}}`, id, strings.Repeat("x", payloadBytes))
}

func TestRetriesEntriesSQSFailedOnItsSide(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	wire.failTimes["flaky-1"] = 2 // fails twice, then goes
	wire.refuse["refused-1"] = true
	p := &producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q", RetryDelay: time.Millisecond}
	res, err := p.SendBodies(context.Background(), [][]byte{body("ok-1", 1), body("flaky-1", 1), body("refused-1", 1)})
	require.ErrorContains(t, err, "1 of 3 notifications not sent")
	require.Len(t, res, 3)
	require.NoError(t, res[0].Err)
	require.NoError(t, res[1].Err, "an SQS-side failure is retried")
	require.NotEmpty(t, res[1].MessageID)
	require.ErrorContains(t, res[2].Err, "InvalidMessageContents")
	require.Empty(t, res[2].MessageID)
	batches := wire.sent()
	require.Len(t, batches, 3, "one call, then one retry per SQS-side failure")
	require.Len(t, batches[1], 1)
	require.Contains(t, batches[1][0].MessageBody, "flaky-1", "a sender-fault entry is not retried")
}

func TestGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	wire.failTimes["flaky-1"] = 100
	p := &producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q", RetryDelay: time.Millisecond, MaxAttempts: 4}
	res, err := p.SendBodies(context.Background(), [][]byte{body("flaky-1", 1)})
	require.Error(t, err)
	require.ErrorContains(t, res[0].Err, "InternalError")
	require.Len(t, wire.sent(), 4)
}

func TestFIFOGroupAndDeduplicationID(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	url := wire.srv.URL + "/000000000000/herald.fifo"
	_, err := (&producer.Client{SQS: c, QueueURL: url}).SendBodies(context.Background(), [][]byte{body("a-1", 1)})
	require.ErrorContains(t, err, "GroupID is required")
	require.Empty(t, wire.sent())

	_, err = (&producer.Client{SQS: c, QueueURL: url, GroupID: "tenant-7"}).SendBodies(context.Background(), [][]byte{body("a-1", 1), body("a-2", 1)})
	require.NoError(t, err)
	e := wire.sent()[0]
	require.Equal(t, "tenant-7", e[0].MessageGroupId)
	require.Equal(t, "a-1", e[0].MessageDeduplicationId)
	require.Equal(t, "a-2", e[1].MessageDeduplicationId)
}

func TestInvalidSendsNothing(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	p := &producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q"}
	_, err := p.SendBodies(context.Background(), [][]byte{body("ok-1", 1), []byte(`{"version":1,"id":"x","channel":"email","email":{"to":7}}`)})
	var inv *producer.InvalidError
	require.ErrorAs(t, err, &inv)
	require.Len(t, inv.Items, 1)
	require.Equal(t, 1, inv.Items[0].Index)
	require.Contains(t, inv.Items[0].Err.Error(), "email.to")
	require.Empty(t, wire.sent())
}

func TestChunks(t *testing.T) {
	t.Parallel()
	sizes := func(n ...int) [][]byte {
		out := make([][]byte, len(n))
		for i, s := range n {
			out[i] = make([]byte, s)
		}
		return out
	}
	require.Equal(t, [][]int{{0, 1}, {2}}, producer.Chunks(sizes(1, 1, 1), 2, 100))
	require.Equal(t, [][]int{{0, 1}, {2, 3}}, producer.Chunks(sizes(50, 50, 60, 40), 10, 100), "at most maxBytes per chunk")
	require.Equal(t, [][]int{{0}, {1}, {2}}, producer.Chunks(sizes(10, 200, 10), 10, 100), "an oversized body alone")
	require.Nil(t, producer.Chunks(nil, 10, 100))
}

func TestLargeBatchesSplitByBytes(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	var bodies [][]byte
	for i := range 5 {
		bodies = append(bodies, body(fmt.Sprintf("big-%d", i), 300<<10))
	}
	res, err := (&producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q"}).SendBodies(context.Background(), bodies)
	require.NoError(t, err, "the wire refuses a batch over 1 MiB")
	require.Len(t, res, 5)
	require.Greater(t, len(wire.sent()), 1)
}
