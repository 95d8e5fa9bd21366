package sqstest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// TestCreateQueuesAndDeleteThem: localenv's pair of queues, created through
// the SDK, has the URLs and ARNs CreateQueue and GetQueueAttributes give, a
// redrive policy to its dead-letter queue, takes messages, and is gone
// after DeleteQueue; its names cannot be taken again for 60 s.
func TestCreateQueuesAndDeleteThem(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	c := s.Client()
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.SetNow(func() time.Time { return now })

	qs, err := localenv.CreateQueues(ctx, c, "bench-1", 3, 60*time.Second)
	require.NoError(t, err)
	require.Equal(t, s.URL()+"/"+sqstest.AccountID+"/bench-1", qs.URL)
	require.Equal(t, "arn:aws:sqs:us-east-1:"+sqstest.AccountID+":bench-1-dlq", qs.DLQARN)
	require.Equal(t, "arn:aws:sqs:us-east-1:"+sqstest.AccountID+":bench-1", qs.ARN)
	n, err := localenv.MaxReceiveCount(ctx, c, qs.URL)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(qs.URL), AttributeNames: []types.QueueAttributeName{"VisibilityTimeout"}})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"VisibilityTimeout": "60"}, a.Attributes)

	// The same name with the same attributes is the same queue; with
	// others it is refused.
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("bench-1"), Attributes: map[string]string{"VisibilityTimeout": "60"}})
	require.NoError(t, err)
	require.Equal(t, qs.URL, aws.ToString(out.QueueUrl))
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("bench-1"), Attributes: map[string]string{"VisibilityTimeout": "61"}})
	require.Equal(t, "QueueAlreadyExists", code(err))

	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(qs.URL), MessageBody: aws.String("hello")})
	require.NoError(t, err)
	require.Len(t, s.Messages(qs.URL), 1)

	qs.Delete(ctx, c)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(qs.URL), MessageBody: aws.String("hello")})
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", code(err))
	_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(qs.URL)})
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", code(err))

	now = now.Add(sqstest.DeletedQueueNameReuse - time.Millisecond)
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("bench-1-dlq")})
	require.Equal(t, "AWS.SimpleQueueService.QueueDeletedRecently", code(err))
	now = now.Add(time.Millisecond)
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("bench-1-dlq")})
	require.NoError(t, err)

	fifo, err := localenv.CreateFIFOQueues(ctx, c, "bench-2", 5, 30*time.Second)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(fifo.URL, "/bench-2.fifo"), fifo.URL)
}

// TestCreateQueueRejectsWhatSQSRejects: names, attributes and redrive
// policies SQS refuses.
func TestCreateQueueRejectsWhatSQSRejects(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	c := s.Client()
	ctx := context.Background()
	_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("dlq")})
	require.NoError(t, err)
	dlqARN := "arn:aws:sqs:us-east-1:" + sqstest.AccountID + ":dlq"
	redrive := func(arn string, n any) string {
		return fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%q}`, arn, fmt.Sprint(n))
	}
	for name, tc := range map[string]struct {
		queue string
		attrs map[string]string
		want  string
	}{
		"empty name":             {"", nil, "InvalidParameterValue"},
		"a dot":                  {"a.b", nil, "InvalidParameterValue"},
		"81 characters":          {strings.Repeat("a", 81), nil, "InvalidParameterValue"},
		"80 characters":          {strings.Repeat("a", 80), nil, ""},
		"fifo name, no FIFO":     {"q.fifo", nil, "InvalidParameterValue"},
		"FIFO without .fifo":     {"q", map[string]string{"FifoQueue": "true"}, "InvalidParameterValue"},
		"FIFO name of 81":        {strings.Repeat("a", 76) + ".fifo", map[string]string{"FifoQueue": "true"}, "InvalidParameterValue"},
		"FIFO name of 80":        {strings.Repeat("a", 75) + ".fifo", map[string]string{"FifoQueue": "true"}, ""},
		"unknown attribute":      {"q1", map[string]string{"Colour": "blue"}, "InvalidAttributeName"},
		"visibility 43201":       {"q2", map[string]string{"VisibilityTimeout": "43201"}, "InvalidAttributeValue"},
		"visibility 43200":       {"q3", map[string]string{"VisibilityTimeout": "43200"}, ""},
		"visibility -1":          {"q4", map[string]string{"VisibilityTimeout": "-1"}, "InvalidAttributeValue"},
		"size 1023":              {"q5", map[string]string{"MaximumMessageSize": "1023"}, "InvalidAttributeValue"},
		"size 1024":              {"q6", map[string]string{"MaximumMessageSize": "1024"}, ""},
		"retention not a number": {"q7", map[string]string{"MessageRetentionPeriod": "long"}, "InvalidAttributeValue"},
		"redrive to nowhere":     {"q8", map[string]string{"RedrivePolicy": redrive(dlqARN+"-x", 3)}, "InvalidParameterValue"},
		"maxReceiveCount 0":      {"q9", map[string]string{"RedrivePolicy": redrive(dlqARN, 0)}, "InvalidParameterValue"},
		"maxReceiveCount 1001":   {"q10", map[string]string{"RedrivePolicy": redrive(dlqARN, 1001)}, "InvalidParameterValue"},
		"maxReceiveCount 1000":   {"q11", map[string]string{"RedrivePolicy": redrive(dlqARN, 1000)}, ""},
		"maxReceiveCount number": {"q12", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqARN + `","maxReceiveCount":4}`}, ""},
		"redrive not JSON":       {"q13", map[string]string{"RedrivePolicy": "{"}, "InvalidParameterValue"},
	} {
		_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(tc.queue), Attributes: tc.attrs})
		require.Equal(t, tc.want, code(err), name)
	}
}

// TestSendMessageBatch: each entry is stored as a SendMessage would store
// it, and answered by its id with the body's digest (which the SDK checks);
// an entry SendMessage would refuse fails alone; the batch rules and the
// 1 MiB total are the request's.
func TestSendMessageBatch(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("one")},
		{Id: aws.String("b"), MessageBody: aws.String("")},
		{Id: aws.String("c"), MessageBody: aws.String("three")},
		{Id: aws.String("d"), MessageBody: aws.String(strings.Repeat("x", 1025))},
	}})
	require.NoError(t, err)
	require.Len(t, out.Successful, 2)
	require.Equal(t, "a", aws.ToString(out.Successful[0].Id))
	require.Equal(t, "c", aws.ToString(out.Successful[1].Id))
	msgs := s.Messages(queueURL)
	require.Len(t, msgs, 2)
	require.Equal(t, []string{"one", "three"}, []string{msgs[0].Body, msgs[1].Body})
	require.Equal(t, msgs[1].ID, aws.ToString(out.Successful[1].MessageId))
	require.Len(t, out.Failed, 2)
	require.Equal(t, "b", aws.ToString(out.Failed[0].Id))
	require.Equal(t, "MissingParameter", aws.ToString(out.Failed[0].Code))
	require.True(t, out.Failed[0].SenderFault)
	require.Equal(t, "InvalidParameterValue", aws.ToString(out.Failed[1].Code), "over the queue's MaximumMessageSize of 1024")

	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(fifoURL), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("x")},
	}})
	require.NoError(t, err, "a FIFO entry without a group fails alone")

	entries := func(n, size int) []types.SendMessageBatchRequestEntry {
		out := make([]types.SendMessageBatchRequestEntry, n)
		for i := range out {
			out[i] = types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String(strings.Repeat("y", size))}
		}
		return out
	}
	big := sqstest.New(t)
	bigURL := big.AddQueue("https://sqs.us-east-1.amazonaws.com/123456789012/big", nil)
	for name, tc := range map[string]struct {
		entries []types.SendMessageBatchRequestEntry
		want    string
	}{
		"none":             {[]types.SendMessageBatchRequestEntry{}, "AWS.SimpleQueueService.EmptyBatchRequest"},
		"11":               {entries(11, 1), "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"},
		"same ids":         {append(entries(1, 1), entries(1, 1)...), "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"},
		"1 MiB and a byte": {append(entries(4, 1<<18), types.SendMessageBatchRequestEntry{Id: aws.String("z"), MessageBody: aws.String("y")}), "AWS.SimpleQueueService.BatchRequestTooLong"},
		"1 MiB":            {entries(4, 1<<18), ""},
	} {
		_, err := big.Client().SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(bigURL), Entries: tc.entries})
		require.Equal(t, tc.want, code(err), name)
	}
}

// TestLongPoll: with LongPoll, an empty receive waits for a message sent
// meanwhile and answers it, or answers none when its WaitTimeSeconds pass;
// without, it answers at once.
func TestLongPoll(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	receive := func(wait int32) []types.Message {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), WaitTimeSeconds: wait})
		require.NoError(t, err)
		return out.Messages
	}
	require.Empty(t, receive(20), "no long polling unless asked for")

	s.LongPoll()
	got := make(chan []types.Message)
	go func() { got <- receive(20) }()
	// The receive is waiting when the fake has its call.
	require.Eventually(t, func() bool { return len(s.Requests("ReceiveMessage")) == 2 }, 5*time.Second, time.Millisecond)
	_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("late")})
	require.NoError(t, err)
	msgs := <-got
	require.Len(t, msgs, 1)
	require.Equal(t, "late", aws.ToString(msgs[0].Body))

	require.Empty(t, receive(1), "nothing within the wait")
	require.Empty(t, receive(0))
	require.Len(t, s.Requests("ReceiveMessage"), 4, "a long poll is one call")
}
