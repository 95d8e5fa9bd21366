package producer_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/producer"
)

// A send whose answer cannot be trusted (SQS stored the messages, but the
// answer's digest is wrong, the connection was cut or the answer came after
// the caller gave up) is reported unknown, never "not sent": the queue
// holds them. The error names the queue and how to check.
func TestUntrustedAnswerIsUnknownNotNotSent(t *testing.T) {
	t.Parallel()
	faults := map[string]func(s *sqstest.Server, cancel func()){
		"garbled digest": func(s *sqstest.Server, _ func()) { s.GarbleDigest("SendMessageBatch") },
		"cut":            func(s *sqstest.Server, _ func()) { s.CutAfterStore("SendMessageBatch") },
		"late answer":    func(s *sqstest.Server, cancel func()) { s.StallAfterStore("SendMessageBatch", cancel) },
	}
	for name, fault := range faults {
		for _, queue := range []string{"herald", "herald.fifo"} {
			t.Run(name+" "+queue, func(t *testing.T) {
				t.Parallel()
				s := sqstest.New(t)
				url := s.AddQueue(s.URL()+"/123456789012/"+queue, nil)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				fault(s, cancel)
				c := &producer.Client{SQS: s.Client(), QueueURL: url, GroupID: "g"}
				results, err := c.SendBodies(ctx, bodies("u-1", "u-2"))
				var notSent *producer.NotSentError
				require.ErrorAs(t, err, &notSent)
				stored := len(s.Messages(url))
				require.Positive(t, stored, "SQS holds what was reported")
				require.Len(t, notSent.Unknown, stored, "each stored one is unknown")
				for i, r := range results[:stored] {
					require.ErrorIs(t, r.Err, producer.ErrOutcomeUnknown, "notification %d", i)
					require.Contains(t, r.Err.Error(), url, "names the queue")
					require.Contains(t, r.Err.Error(), r.ID, "names the id")
					require.NotContains(t, r.Err.Error(), "not sent")
				}
				if queue == "herald.fifo" {
					// One per group per call: u-2 waits behind u-1, whose
					// outcome is unknown, and was surely not sent.
					require.Equal(t, 1, stored)
					require.ErrorIs(t, results[1].Err, producer.ErrGroupBlocked)
					require.Equal(t, []string{"u-2"}, notSent.IDs)
					require.Contains(t, results[0].Err.Error(), "within 5 minutes")
				} else {
					require.Equal(t, 2, stored)
					require.Empty(t, notSent.IDs)
					require.Contains(t, notSent.Error(), "unknown outcome")
					require.NotContains(t, notSent.Error(), "not sent:")
				}
			})
		}
	}
}

// An answer of SQS's own (an error it returns) and a request that never
// left are "not sent": nothing was stored.
func TestRefusedOrNeverSentIsNotSent(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	url := s.AddQueue(s.URL()+"/123456789012/herald", nil)
	s.FailAction("SendMessageBatch")
	results, err := (&producer.Client{SQS: s.Client(), QueueURL: url}).SendBodies(context.Background(), bodies("r-1"))
	var notSent *producer.NotSentError
	require.ErrorAs(t, err, &notSent)
	require.Equal(t, []string{"r-1"}, notSent.IDs)
	require.Empty(t, notSent.Unknown)
	require.NotErrorIs(t, results[0].Err, producer.ErrOutcomeUnknown)

	closed := httptest.NewServer(nil)
	closed.Close() // the connection is refused: the request never left
	client := sqs.NewFromConfig(awstest.Config(closed.URL))
	results, err = (&producer.Client{SQS: client, QueueURL: closed.URL + "/123456789012/herald"}).SendBodies(context.Background(), bodies("r-2"))
	require.ErrorAs(t, err, &notSent)
	require.Equal(t, []string{"r-2"}, notSent.IDs)
	require.False(t, producer.OutcomeUnknown(results[0].Err), "%v", results[0].Err)
	require.False(t, errors.Is(results[0].Err, producer.ErrOutcomeUnknown))
}

// The SDK retries a call whose connection was cut (a RequestSendError is a
// connection error to its retryer), and one without an answer in time: each
// retry of a call SQS may have stored stores it again, and the last
// attempt's error is all the caller sees, so an SQS error answer to a retry
// would read as "not sent". A call whose outcome is unknown is not retried:
// once stored, once reported unknown, with the SDK's retries on.
func TestUnknownOutcomeIsNotRetriedBySDK(t *testing.T) {
	t.Parallel()
	for _, queue := range []string{"herald", "herald.fifo"} {
		s := sqstest.New(t)
		url := s.AddQueue(s.URL()+"/123456789012/"+queue, nil)
		s.CutAfterStore("SendMessageBatch")
		cfg := awstest.Config(s.URL())
		cfg.RetryMaxAttempts = 0 // the retryer's own: 3
		cfg.Retryer = func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 3
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			})
		}
		c := &producer.Client{SQS: sqs.NewFromConfig(cfg), QueueURL: url, GroupID: "g"}
		results, err := c.SendBodies(context.Background(), bodies("k-1"))
		require.Error(t, err, queue)
		require.ErrorIs(t, results[0].Err, producer.ErrOutcomeUnknown, queue)
		require.Equal(t, 1, len(s.Requests("SendMessageBatch")), "%s: not sent again by the SDK", queue)
		require.Len(t, s.Messages(url), 1, queue)
	}
	// An error answer (500 InternalError: nothing stored) is still retried.
	s := sqstest.New(t)
	url := s.AddQueue(s.URL()+"/123456789012/herald", nil)
	s.FailAction("SendMessageBatch")
	cfg := awstest.Config(s.URL())
	cfg.RetryMaxAttempts = 3
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})
	}
	results, err := (&producer.Client{SQS: sqs.NewFromConfig(cfg), QueueURL: url}).SendBodies(context.Background(), bodies("k-2"))
	require.Error(t, err)
	require.NotErrorIs(t, results[0].Err, producer.ErrOutcomeUnknown)
	require.Equal(t, 3, len(s.Requests("SendMessageBatch")), "retried by the SDK")
}
