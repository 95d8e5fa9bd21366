package localrunner_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localrunner"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

const queueURL = "https://sqs.eu-west-1.amazonaws.com/123456789012/herald"

type bundle struct {
	sqs *sqstest.Server
	r   *localrunner.Runner
	now time.Time
	// got is the last event the handler saw.
	got events.SQSEvent
}

// setup builds a runner over a queue in the SQS wire fake whose handler
// calls handle and records its event.
func setup(t *testing.T, handle localrunner.Handler) *bundle {
	t.Helper()
	srv := sqstest.New(t)
	b := &bundle{sqs: srv, now: time.Now()}
	srv.AddQueue(queueURL, map[string]string{"QueueArn": "arn:aws:sqs:eu-west-1:123456789012:herald"})
	b.r = &localrunner.Runner{
		SQS:      srv.Client(),
		QueueURL: queueURL,
		Handler: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			b.got = ev
			return handle(ctx, ev)
		},
	}
	return b
}

func ok(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return events.SQSEventResponse{}, nil
}

func bodies(msgs []sqstest.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.Body)
	}
	return out
}

// TestPollBuildsTheEventTheLambdaServiceSends: each record carries the
// message, its system and message attributes, the queue's ARN and the
// region taken from it.
func TestPollBuildsTheEventTheLambdaServiceSends(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	id := b.sqs.Put(queueURL, "body-1", b.now, map[string]sqstest.MessageAttribute{
		"trace": {DataType: "String", StringValue: aws.String("abc")},
		"blob":  {DataType: "Binary", BinaryValue: []byte{1, 2}},
	})
	n, err := b.r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Len(t, b.got.Records, 1)
	r := b.got.Records[0]
	require.Equal(t, id, r.MessageId)
	require.Equal(t, "body-1", r.Body)
	require.NotEmpty(t, r.ReceiptHandle)
	require.NotEmpty(t, r.Md5OfBody)
	require.Equal(t, "aws:sqs", r.EventSource)
	require.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:herald", r.EventSourceARN)
	require.Equal(t, "eu-west-1", r.AWSRegion)
	require.Equal(t, "1", r.Attributes["ApproximateReceiveCount"])
	require.Equal(t, strconv.FormatInt(b.now.UnixMilli(), 10), r.Attributes["SentTimestamp"])
	require.Equal(t, events.SQSMessageAttribute{DataType: "String", StringValue: aws.String("abc")}, r.MessageAttributes["trace"])
	require.Equal(t, events.SQSMessageAttribute{DataType: "Binary", BinaryValue: []byte{1, 2}}, r.MessageAttributes["blob"])
}

// TestPollRegionFallsBack: a set Region wins; a queue ARN without one, and
// no Region, gives us-east-1.
func TestPollRegionFallsBack(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	b.r.Region = "ap-south-1"
	b.sqs.Put(queueURL, "x", b.now, nil)
	_, err := b.r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, "ap-south-1", b.got.Records[0].AWSRegion)

	c := setup(t, ok)
	c.sqs.AddQueue(queueURL, map[string]string{"QueueArn": "not-an-arn"})
	c.sqs.Put(queueURL, "x", c.now, nil)
	_, err = c.r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, "us-east-1", c.got.Records[0].AWSRegion)

	// An ARN of three parts has no region part.
	d := setup(t, ok)
	d.sqs.AddQueue(queueURL, map[string]string{"QueueArn": "arn:aws:sqs"})
	d.sqs.Put(queueURL, "x", d.now, nil)
	_, err = d.r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, "us-east-1", d.got.Records[0].AWSRegion)
}

// TestPollDeletesAllButTheReportedFailures: with ReportBatchItemFailures,
// the records not named in the response are deleted; the named ones stay,
// hidden for the queue's visibility timeout.
func TestPollDeletesAllButTheReportedFailures(t *testing.T) {
	t.Parallel()
	var failID string
	b := setup(t, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: failID}}}, nil
	})
	b.sqs.Put(queueURL, "a", b.now, nil)
	failID = b.sqs.Put(queueURL, "b", b.now, nil)
	b.sqs.Put(queueURL, "c", b.now, nil)
	n, err := b.r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, n)
	left := b.sqs.Messages(queueURL)
	require.Equal(t, []string{"b"}, bodies(left))
	require.True(t, left[0].VisibleAt.After(b.now), "a failed record waits for its visibility timeout")
}

// TestPollFailsTheWholeBatch: a handler error, or a response naming a
// message that is not in the batch (or an empty id), deletes nothing.
func TestPollFailsTheWholeBatch(t *testing.T) {
	t.Parallel()
	for name, handle := range map[string]localrunner.Handler{
		"handler error": func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, errors.New("boom")
		},
		"unknown id": func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "not-in-batch"}}}, nil
		},
		"empty id": func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ""}}}, nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, handle)
			b.sqs.Put(queueURL, "a", b.now, nil)
			b.sqs.Put(queueURL, "b", b.now, nil)
			n, err := b.r.Poll(context.Background())
			require.NoError(t, err, "the batch comes back; the runner goes on")
			require.Equal(t, 2, n)
			require.Len(t, b.sqs.Messages(queueURL), 2)
			require.Empty(t, b.sqs.Requests("DeleteMessageBatch"))
		})
	}
}

// TestPollReportsFailedDeletes: a delete call or entry SQS refuses is an
// error, and the message stays.
func TestPollReportsFailedDeletes(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	stuck := b.sqs.Put(queueURL, "a", b.now, nil)
	b.sqs.Put(queueURL, "b", b.now, nil)
	b.sqs.FailMessage("DeleteMessageBatch", stuck)
	_, err := b.r.Poll(context.Background())
	require.ErrorContains(t, err, "delete: 1 of 2 entries failed")
	require.Equal(t, []string{"a"}, bodies(b.sqs.Messages(queueURL)))

	c := setup(t, ok)
	c.sqs.Put(queueURL, "a", c.now, nil)
	c.sqs.FailAction("DeleteMessageBatch")
	_, err = c.r.Poll(context.Background())
	require.ErrorContains(t, err, "delete:")
}

// TestPollEmptyQueueInvokesNothing: no records, no invocation.
func TestPollEmptyQueueInvokesNothing(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	b := setup(t, func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
		calls.Add(1)
		return events.SQSEventResponse{}, nil
	})
	n, err := b.r.Poll(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, calls.Load())
}

// TestPollReceiveWithinSQSLimits: BatchSize and WaitTime outside SQS's
// ranges (1–10 messages, 0–20 s) fall back to 10 and are capped at 20 s,
// which SQS (and the wire fake) accepts.
func TestPollReceiveWithinSQSLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		batch    int
		wait     time.Duration
		wantMax  int
		wantWait int
	}{
		{batch: 0, wait: 0, wantMax: 10, wantWait: 1},
		{batch: 11, wait: time.Minute, wantMax: 10, wantWait: 20},
		{batch: 1, wait: 20 * time.Second, wantMax: 1, wantWait: 20},
		{batch: 10, wait: 3 * time.Second, wantMax: 10, wantWait: 3},
		{batch: -1, wait: -time.Second, wantMax: 10, wantWait: 1},
	} {
		b := setup(t, ok)
		b.r.BatchSize, b.r.WaitTime = tc.batch, tc.wait
		for range 12 {
			b.sqs.Put(queueURL, "m", b.now, nil)
		}
		n, err := b.r.Poll(context.Background())
		require.NoError(t, err, "%+v", tc)
		require.Equal(t, tc.wantMax, n, "%+v", tc)
		var in struct{ MaxNumberOfMessages, WaitTimeSeconds int }
		require.NoError(t, json.Unmarshal(b.sqs.Requests("ReceiveMessage")[0], &in))
		require.Equal(t, tc.wantMax, in.MaxNumberOfMessages, "%+v", tc)
		require.Equal(t, tc.wantWait, in.WaitTimeSeconds, "%+v", tc)
	}
}

// TestPollGivesTheHandlerTheFunctionTimeout: the handler's context ends
// after FunctionTimeout (30 s by default), as an invocation's does.
func TestPollGivesTheHandlerTheFunctionTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set, want time.Duration
	}{{0, 30 * time.Second}, {-time.Second, 30 * time.Second}, {5 * time.Second, 5 * time.Second}} {
		var left time.Duration
		b := setup(t, func(ctx context.Context, _ events.SQSEvent) (events.SQSEventResponse, error) {
			deadline, ok := ctx.Deadline()
			require.True(t, ok)
			left = time.Until(deadline)
			return events.SQSEventResponse{}, nil
		})
		b.r.FunctionTimeout = tc.set
		b.sqs.Put(queueURL, "x", b.now, nil)
		_, err := b.r.Poll(context.Background())
		require.NoError(t, err)
		require.LessOrEqual(t, left, tc.want)
		require.Greater(t, left, tc.want-5*time.Second, "set %v", tc.set)
	}
}

// TestPollNeedsAQueue: missing fields and a queue SQS does not know are
// errors before any receive.
func TestPollNeedsAQueue(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	b.r.QueueURL = "https://sqs.eu-west-1.amazonaws.com/123456789012/missing"
	_, err := b.r.Poll(context.Background())
	require.ErrorContains(t, err, "queue https://sqs.eu-west-1.amazonaws.com/123456789012/missing")
	require.Empty(t, b.sqs.Requests("ReceiveMessage"))

	for name, r := range map[string]*localrunner.Runner{
		"no SQS":     {QueueURL: queueURL, Handler: ok},
		"no queue":   {SQS: b.sqs.Client(), Handler: ok},
		"no handler": {SQS: b.sqs.Client(), QueueURL: queueURL},
	} {
		_, err := r.Poll(context.Background())
		require.ErrorContains(t, err, "required", name)
	}
}

// TestPollReportsAFailedReceive: a receive error is returned.
func TestPollReportsAFailedReceive(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	b.sqs.FailAction("ReceiveMessage")
	_, err := b.r.Poll(context.Background())
	require.ErrorContains(t, err, "receive:")
}

// TestRunDeliversUntilCancelled: Run polls until its context ends, going on
// after a failed poll, and returns nil.
func TestRunDeliversUntilCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Int32
	b := setup(t, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		seen.Add(int32(len(ev.Records)))
		return events.SQSEventResponse{}, nil
	})
	b.r.BatchSize = 1
	for range 3 {
		b.sqs.Put(queueURL, "m", b.now, nil)
	}
	done := make(chan error, 1)
	go func() { done <- b.r.Run(ctx) }()
	require.Eventually(t, func() bool { return len(b.sqs.Messages(queueURL)) == 0 }, 10*time.Second, 10*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	require.Equal(t, int32(3), seen.Load(), "one invocation per message, each deleted after it")
}

// TestRunReturnsNilWhenCancelledDuringAFailingPoll: a poll that fails
// because the context ended is not reported.
func TestRunReturnsNilWhenCancelledDuringAFailingPoll(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	b.sqs.FailAction("ReceiveMessage")
	// Polls at about 0, 1 and 2 s: the second has 1.5 s of slack for a
	// loaded machine, and a fourth would come at 3 s, after the end.
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.NoError(t, b.r.Run(ctx))
	require.GreaterOrEqual(t, time.Since(start), 2400*time.Millisecond, "a failed poll with time left is retried, not the end of Run")
	require.Less(t, time.Since(start), 5*time.Second)
	n := len(b.sqs.Requests("ReceiveMessage"))
	require.GreaterOrEqual(t, n, 2, "polled again a second after the failure")
	require.LessOrEqual(t, n, 3, "a failed poll waits a second before the next")
}

// TestPollEveryRecordFailedDeletesNothing: when the response names every
// record, no DeleteMessageBatch is sent (SQS refuses an empty batch) and
// the poll succeeds.
func TestPollEveryRecordFailedDeletesNothing(t *testing.T) {
	t.Parallel()
	var ids []string
	b := setup(t, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, id := range ids {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		}
		return resp, nil
	})
	ids = append(ids, b.sqs.Put(queueURL, "a", b.now, nil), b.sqs.Put(queueURL, "b", b.now, nil))
	n, err := b.r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Empty(t, b.sqs.Requests("DeleteMessageBatch"))
	require.Len(t, b.sqs.Messages(queueURL), 2)
}
