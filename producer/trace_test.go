package producer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/internal/tracecontext"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// traced is a context carrying the caller's span, as an instrumented
// producer's request handler has.
func traced(t *testing.T) context.Context {
	t.Helper()
	ctx, err := tracecontext.FromTraceParent(context.Background(), "00-"+callerTrace+"-"+callerSpan+"-01")
	require.NoError(t, err)
	return ctx
}

// TestSendCarriesTheCallersTrace: each message carries the caller's span
// as a traceparent message attribute and as AWSTraceHeader, on a standard
// and on a FIFO queue.
func TestSendCarriesTheCallersTrace(t *testing.T) {
	t.Parallel()
	for _, queue := range []string{"/q", "/q.fifo"} {
		wire, c := newSQSWire()
		t.Cleanup(wire.Close)
		p := &producer.Client{SQS: c, QueueURL: wire.srv.URL + queue, GroupID: "g"}
		_, err := p.SendBodies(traced(t), [][]byte{body("t-1", 1), body("t-2", 1)})
		require.NoError(t, err)
		var n int
		for _, b := range wire.sent() {
			for _, e := range b {
				n++
				require.Equal(t, "00-"+callerTrace+"-"+callerSpan+"-01", e.MessageAttributes[tracecontext.MessageAttribute].StringValue, queue)
				require.Equal(t, "String", e.MessageAttributes[tracecontext.MessageAttribute].DataType)
				require.Equal(t, "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent="+callerSpan+";Sampled=1",
					e.MessageSystemAttributes[tracecontext.SystemAttribute].StringValue, queue)
			}
		}
		require.Equal(t, 2, n)
	}
}

// TestSendWithoutATraceAddsNothing: no span, no attribute, no byte.
func TestSendWithoutATraceAddsNothing(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	_, err := (&producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q"}).SendBodies(context.Background(), [][]byte{body("u-1", 1)})
	require.NoError(t, err)
	e := wire.sent()[0][0]
	require.Empty(t, e.MessageAttributes)
	require.Empty(t, e.MessageSystemAttributes)

	// An invalid span context is no trace either.
	ctx := trace.ContextWithSpanContext(context.Background(), trace.SpanContext{})
	_, err = (&producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q"}).SendBodies(ctx, [][]byte{body("u-2", 1)})
	require.NoError(t, err)
	require.Empty(t, wire.sent()[1][0].MessageAttributes)
}

// TestTraceParentLeavesRoomInTheBatch: the traceparent attribute counts
// in SendMessageBatch's 1 MiB, so a traced send of bodies that fill a
// batch exactly splits it rather than being refused.
func TestTraceParentLeavesRoomInTheBatch(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	overhead := len(body("b-0", 0))
	bodies := make([][]byte, producer.MaxBatchEntries)
	for i := range bodies {
		bodies[i] = body("b-"+string(rune('0'+i)), producer.MaxBatchBytes/producer.MaxBatchEntries-overhead)
	}
	total := 0
	for _, b := range bodies {
		total += len(b)
	}
	require.LessOrEqual(t, total, producer.MaxBatchBytes, "one batch untraced")
	require.Greater(t, total+producer.MaxBatchEntries*tracecontext.MessageAttributeBytes, producer.MaxBatchBytes, "over when traced")

	_, err := (&producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q"}).SendBodies(traced(t), bodies)
	require.NoError(t, err, "no batch refused")
	require.Len(t, wire.sent(), 2)
}

// TestTraceParentLeftOffAFullBody: a body within the attribute's size of
// notification.MaxMessageBytes goes without traceparent (the deliver
// function would count it and dead-letter the message as too large), but
// with AWSTraceHeader, which SQS does not count.
func TestTraceParentLeftOffAFullBody(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	sized := func(id string, n int) []byte {
		head := `{"version":1,"id":"` + id + `","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"`
		mid, tail := `","html":"`, `"}}`
		pad := n - len(head) - len(mid) - len(tail)
		text := min(pad, notification.MaxBodyBytes)
		return []byte(head + strings.Repeat("t", text) + mid + strings.Repeat("h", pad-text) + tail)
	}
	full := sized("full-1", notification.MaxMessageBytes-tracecontext.MessageAttributeBytes+1)
	fits := sized("fits-1", notification.MaxMessageBytes-tracecontext.MessageAttributeBytes)
	_, err := (&producer.Client{SQS: c, QueueURL: wire.srv.URL + "/q"}).SendBodies(traced(t), [][]byte{full, fits})
	require.NoError(t, err)
	var byID = map[string]int{}
	for _, b := range wire.sent() {
		for _, e := range b {
			byID[notification.IDOf([]byte(e.MessageBody))] = len(e.MessageBody)
			if notification.IDOf([]byte(e.MessageBody)) == "full-1" {
				require.Empty(t, e.MessageAttributes)
				require.NotEmpty(t, e.MessageSystemAttributes[tracecontext.SystemAttribute].StringValue)
			} else {
				require.NotEmpty(t, e.MessageAttributes[tracecontext.MessageAttribute].StringValue)
				require.Equal(t, notification.MaxMessageBytes, len(e.MessageBody)+tracecontext.MessageAttributeBytes, "exactly at the limit")
			}
		}
	}
	require.Len(t, byID, 2)
}
