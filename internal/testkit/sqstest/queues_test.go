package sqstest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// TestGetQueueURL: a queue is found by its name, the last segment of its
// URL; a name no queue has is QueueDoesNotExist, as SQS answers it.
func TestGetQueueURL(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	ctx := context.Background()
	for name, want := range map[string]string{"q": queueURL, "q.fifo": fifoURL} {
		out, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		require.NoError(t, err, name)
		require.Equal(t, want, aws.ToString(out.QueueUrl))
	}
	for _, name := range []string{"nope", "123456789012", "q-dlq"} {
		_, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", code(err), name)
		var notFound *types.QueueDoesNotExist
		require.True(t, errors.As(err, &notFound), "%s: %v", name, err)
	}
}

// TestPurgeQueue: a purge deletes every message, visible or in flight; a
// second purge of the queue within 60 s is PurgeQueueInProgress (HTTP
// 403), one at 60 s goes through, and another queue's purge is its own.
func TestPurgeQueue(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.SetNow(func() time.Time { return now })
	s.Put(queueURL, "visible", now, nil)
	s.Put(queueURL, "in flight", now, nil)
	_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL)})
	require.NoError(t, err)
	visible, inFlight := s.Counts(queueURL)
	require.Equal(t, [2]int{1, 1}, [2]int{visible, inFlight})

	purge := func(url string) error {
		_, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
		return err
	}
	require.NoError(t, purge(queueURL))
	require.Empty(t, s.Messages(queueURL))

	s.Put(queueURL, "after", now, nil)
	now = now.Add(sqstest.PurgeInterval - time.Millisecond)
	err = purge(queueURL)
	require.Equal(t, "AWS.SimpleQueueService.PurgeQueueInProgress", code(err))
	var re *awshttp.ResponseError
	require.True(t, errors.As(err, &re))
	require.Equal(t, 403, re.HTTPStatusCode())
	var ae smithy.APIError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, smithy.FaultClient, ae.ErrorFault())
	require.Len(t, s.Messages(queueURL), 1, "a refused purge deletes nothing")
	require.NoError(t, purge(fifoURL), "each queue has its own interval")

	now = now.Add(time.Millisecond)
	require.NoError(t, purge(queueURL), "60 s after the last purge")
	require.Empty(t, s.Messages(queueURL))
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", code(purge(queueURL+"-gone")))
}
