package producer_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
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
	require.ErrorContains(t, err, "a GroupID or GroupBy is required")
	require.Empty(t, wire.sent())

	_, err = (&producer.Client{SQS: c, QueueURL: url, GroupID: "tenant-7"}).SendBodies(context.Background(), [][]byte{body("a-1", 1), body("a-2", 1)})
	require.NoError(t, err)
	sent := wire.sent()
	require.Len(t, sent, 2, "one notification of the group per call")
	require.Equal(t, "tenant-7", sent[0][0].MessageGroupId)
	require.Equal(t, "a-1", sent[0][0].MessageDeduplicationId)
	require.Equal(t, "a-2", sent[1][0].MessageDeduplicationId)
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
	require.Equal(t, [][]int{{0}, {1}}, producer.Chunks(sizes(200, 10), 10, 100), "an oversized first body: no empty chunk before it")
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

// Two notifications with one id in one send: on a FIFO queue SQS would
// accept the second and drop it as a duplicate (the id is the deduplication
// id), and receivers drop it on any queue; so it is refused up front.
func TestRepeatedIDInOneSendIsInvalid(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	for _, url := range []string{wire.srv.URL + "/q", wire.srv.URL + "/000000000000/herald.fifo"} {
		p := &producer.Client{SQS: c, QueueURL: url, GroupID: "g"}
		res, err := p.SendBodies(context.Background(), [][]byte{body("a-1", 1), body("b-1", 1), body("a-1", 2)})
		var inv *producer.InvalidError
		require.ErrorAs(t, err, &inv, url)
		require.Nil(t, res)
		require.Len(t, inv.Items, 1)
		require.Equal(t, 2, inv.Items[0].Index)
		require.Equal(t, "a-1", inv.Items[0].ID)
		require.ErrorContains(t, inv.Items[0].Err, "id: repeats notification 1's id")
	}
	require.Empty(t, wire.sent())
}

// A body above notification.MaxMessageBytes fits SQS (up to 1 MiB) but the
// deliver function dead-letters it unattempted as message_too_large, with
// only its head kept; the producer's validation, "the deliver function's
// own", refuses it before sending.
func TestBodyAboveMaxMessageBytesIsInvalid(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	big := fmt.Appendf(nil, `{"version":1,"id":"big-1","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"%s","html":"%s"}}`,
		strings.Repeat("t", notification.MaxBodyBytes), strings.Repeat("h", 50_000))
	require.Greater(t, len(big), notification.MaxMessageBytes)
	require.LessOrEqual(t, len(big), notification.SQSMaxMessageBytes, "SQS itself would take it")
	res, err := (&producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q"}).SendBodies(context.Background(), [][]byte{big})
	var inv *producer.InvalidError
	require.ErrorAs(t, err, &inv)
	require.Nil(t, res)
	require.ErrorContains(t, inv.Items[0].Err, strconv.Itoa(notification.MaxMessageBytes))
	require.Empty(t, wire.sent())
}

// TestBodyOfExactlyMaxMessageBytesIsValid: the limit itself is allowed,
// one byte more is not.
func TestBodyOfExactlyMaxMessageBytesIsValid(t *testing.T) {
	t.Parallel()
	sized := func(n int) []byte {
		head := `{"version":1,"id":"edge-1","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"`
		mid, tail := `","html":"`, `"}}`
		pad := n - len(head) - len(mid) - len(tail)
		text := min(pad, notification.MaxBodyBytes)
		return []byte(head + strings.Repeat("t", text) + mid + strings.Repeat("h", pad-text) + tail)
	}
	exact := sized(notification.MaxMessageBytes)
	require.Len(t, exact, notification.MaxMessageBytes)
	require.NoError(t, producer.Validate([][]byte{exact}))
	over := sized(notification.MaxMessageBytes + 1)
	require.Len(t, over, notification.MaxMessageBytes+1)
	require.Error(t, producer.Validate([][]byte{over}))
}

// TestIsFIFO: SQS requires a FIFO queue's name to end in ".fifo"; the
// processor, the dlq commands and the producer all ask this one function.
func TestIsFIFO(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"https://sqs.us-east-1.amazonaws.com/1/q.fifo":     true,
		"https://sqs.us-east-1.amazonaws.com/1/q":          false,
		"https://sqs.us-east-1.amazonaws.com/1/qfifo":      false,
		"https://sqs.us-east-1.amazonaws.com/1/q.fifo-dlq": false,
		"":      false,
		".fifo": true,
	} {
		require.Equal(t, want, producer.IsFIFO(url), url)
	}
}

// TestRetryDefaults: MaxAttempts below 1 and RetryDelay not above 0 take
// their defaults; anything else is kept.
func TestRetryDefaults(t *testing.T) {
	t.Parallel()
	require.Equal(t, 3, producer.DefaultMaxAttempts)
	require.Equal(t, 200*time.Millisecond, producer.DefaultRetryDelay)
	for _, tc := range []struct {
		attempts, wantAttempts int
		delay, wantDelay       time.Duration
	}{
		{0, producer.DefaultMaxAttempts, 0, producer.DefaultRetryDelay},
		{-1, producer.DefaultMaxAttempts, -time.Millisecond, producer.DefaultRetryDelay},
		{1, 1, time.Nanosecond, time.Nanosecond},
		{7, 7, time.Second, time.Second},
	} {
		c := producer.Client{MaxAttempts: tc.attempts, RetryDelay: tc.delay}.WithDefaults()
		require.Equal(t, tc.wantAttempts, c.MaxAttempts, "MaxAttempts %d", tc.attempts)
		require.Equal(t, tc.wantDelay, c.RetryDelay, "RetryDelay %v", tc.delay)
	}
}
