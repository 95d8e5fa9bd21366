package sqstest_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// TestSequenceNumbersGrowOnFIFO: each message stored in a FIFO queue gets a
// SequenceNumber, larger than the one before (numbers above 2^64, of equal
// length, so text order is number order), in the send's answer and on
// receive; a standard queue's messages have none.
func TestSequenceNumbersGrowOnFIFO(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	fifo := s.AddQueue(queueURL+".fifo", nil)
	var seqs []string
	for _, id := range []string{"a", "b"} {
		out, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(fifo), MessageBody: aws.String(id), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(id)})
		require.NoError(t, err)
		require.Len(t, aws.ToString(out.SequenceNumber), 20)
		seqs = append(seqs, aws.ToString(out.SequenceNumber))
	}
	require.Less(t, seqs[0], seqs[1])
	batch, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(fifo), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("c"), MessageBody: aws.String("c"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("c")},
	}})
	require.NoError(t, err)
	require.Less(t, seqs[1], aws.ToString(batch.Successful[0].SequenceNumber))
	msgs := s.Messages(fifo)
	require.Equal(t, seqs[0], msgs[0].Attributes["SequenceNumber"])
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x")})
	require.NoError(t, err)
	require.NotContains(t, s.Messages(queueURL)[0].Attributes, "SequenceNumber")
}

// TestMoveByRedrivePolicyNumbersAnew: a message the redrive policy moves to
// a FIFO dead-letter queue gets a SequenceNumber of its own there, larger
// than every number given before the move.
func TestMoveByRedrivePolicyNumbersAnew(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	src, dlq := s.AddQueue(queueURL+"-src.fifo", nil), s.AddQueue(queueURL+"-dlq.fifo", nil)
	id := s.PutInGroup(src, "g", "a", s.Now(), nil)
	s.PutInGroup(src, "g", "b", s.Now(), nil)
	before := s.Messages(src)
	s.MoveByRedrivePolicy(src, dlq, id)
	moved := s.Messages(dlq)[0]
	require.Equal(t, id, moved.ID)
	require.Less(t, before[1].Attributes["SequenceNumber"], moved.Attributes["SequenceNumber"])
}

// TestAnswersThatCannotBeTrusted: each fault after the store stores the
// messages and gives the SDK an error, so a caller that takes the error for
// "not sent" is wrong.
func TestAnswersThatCannotBeTrusted(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]func(s *sqstest.Server, action string, cancel func()){
		"garbled digest": func(s *sqstest.Server, action string, _ func()) { s.GarbleDigest(action) },
		"cut":            func(s *sqstest.Server, action string, _ func()) { s.CutAfterStore(action) },
		"stalled":        func(s *sqstest.Server, action string, cancel func()) { s.StallAfterStore(action, cancel) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, c := setup(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fault(s, "SendMessage", cancel)
			fault(s, "SendMessageBatch", cancel)
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("one")})
			require.Error(t, err)
			if name != "stalled" {
				_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("1"), MessageBody: aws.String("two")}}})
				require.Error(t, err)
				require.Len(t, s.Messages(queueURL), 2, "both stored")
				return
			}
			require.ErrorIs(t, err, context.Canceled)
			require.Len(t, s.Messages(queueURL), 1, "stored")
		})
	}
}

// TestFailSendContaining: a SendMessage whose body holds the part fails and
// stores nothing; the others are stored.
func TestFailSendContaining(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	s.FailSendContaining(`"id":"a-2"`)
	for _, b := range []string{`{"id":"a-1"}`, `{"id":"a-2"}`, `{"id":"a-3"}`} {
		_, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(b)})
		if b == `{"id":"a-2"}` {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
	}
	require.Len(t, s.Messages(queueURL), 2)
}
