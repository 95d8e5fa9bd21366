package sqstest_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// TestMessageIDsAreUUIDs: SendMessage and Put give each message a distinct
// id of SQS's form, a UUID.
func TestMessageIDsAreUUIDs(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 3 {
		out, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x")})
		require.NoError(t, err)
		id := aws.ToString(out.MessageId)
		require.Regexp(t, uuid, id)
		require.False(t, seen[id], "id %s given twice", id)
		seen[id] = true
	}
	id := s.Put(queueURL, "y", time.Now(), nil)
	require.Regexp(t, uuid, id)
	require.False(t, seen[id])
}

// TestMessageAttributeNamesAll: ".*" as a message attribute name asks for
// every one, as "All" does; "name.*" for those the name starts.
func TestMessageAttributeNamesAll(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	str := func(v string) types.MessageAttributeValue {
		return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	for names, want := range map[string][]string{".*": {"herald.a", "herald.b", "other"}, "herald.*": {"herald.a", "herald.b"}, "other": {"other"}} {
		url := queueURL + "-" + strings.Trim(names, ".*")
		s.AddQueue(url, nil)
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"),
			MessageAttributes: map[string]types.MessageAttributeValue{"herald.a": str("1"), "herald.b": str("2"), "other": str("3")}})
		require.NoError(t, err)
		got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MessageAttributeNames: []string{names}})
		require.NoError(t, err)
		require.Len(t, got.Messages, 1)
		var keys []string
		for k := range got.Messages[0].MessageAttributes {
			keys = append(keys, k)
		}
		require.ElementsMatch(t, want, keys, names)
	}
}

// TestWaitTimeSecondsZeroOnTheWire: a WaitTimeSeconds of 0, a short poll,
// is valid (the SDK leaves a 0 out; another client may send it).
func TestWaitTimeSecondsZeroOnTheWire(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	post := func(wait string) (int, string) {
		return postJSON(t, s.URL(), "ReceiveMessage", `{"QueueUrl":"`+queueURL+`","WaitTimeSeconds":`+wait+`}`)
	}
	status, body := post("0")
	require.Equal(t, http.StatusOK, status, body)
	status, body = post("-1")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "WaitTimeSeconds")
}

// TestMoveByRedrivePolicy: a moved message keeps its id, body and message
// attributes and gets DeadLetterQueueSourceArn; a standard dead-letter
// queue keeps its SentTimestamp, a FIFO one sets it to now.
func TestMoveByRedrivePolicy(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s.SetNow(func() time.Time { return now })
	dlq := s.AddQueue("https://sqs.us-east-1.amazonaws.com/123456789012/dlq", nil)
	fifoDLQ := s.AddQueue("https://sqs.us-east-1.amazonaws.com/123456789012/dlq.fifo", map[string]string{"FifoQueue": "true"})
	sent := now.Add(-time.Hour)
	a := s.Put(queueURL, "a", sent, map[string]sqstest.MessageAttribute{"k": {DataType: "String", StringValue: aws.String("v")}})
	b := s.PutInGroup(fifoURL, "g-1", "b", sent, nil)
	s.MoveByRedrivePolicy(queueURL, dlq, a)
	s.MoveByRedrivePolicy(fifoURL, fifoDLQ, b)
	for _, tc := range []struct{ from, to, id, body, sentAt, group string }{
		{queueURL, dlq, a, "a", "1796115600000", ""},
		{fifoURL, fifoDLQ, b, "b", "1796119200000", "g-1"},
	} {
		visible, inFlight := s.Counts(tc.from)
		require.Zero(t, visible+inFlight, "gone from %s", tc.from)
		got, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(tc.to),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}, MessageAttributeNames: []string{"All"}})
		require.NoError(t, err)
		require.Len(t, got.Messages, 1, tc.to)
		m := got.Messages[0]
		require.Equal(t, tc.id, aws.ToString(m.MessageId))
		require.Equal(t, tc.body, aws.ToString(m.Body))
		require.Equal(t, tc.sentAt, m.Attributes["SentTimestamp"], tc.to)
		require.Equal(t, tc.group, m.Attributes["MessageGroupId"], tc.to)
		require.Equal(t, "arn:aws:sqs:us-east-1:123456789012:"+tc.from[strings.LastIndex(tc.from, "/")+1:], m.Attributes["DeadLetterQueueSourceArn"])
		if tc.id == a {
			require.Equal(t, "v", aws.ToString(m.MessageAttributes["k"].StringValue))
		}
	}
}

// TestFIFODeduplication: a second send with a deduplication id already sent
// is accepted and answered with the first message's id, and not queued.
func TestFIFODeduplication(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	send := func(body, dedup string) string {
		out, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(fifoURL), MessageBody: aws.String(body),
			MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(dedup)})
		require.NoError(t, err)
		return aws.ToString(out.MessageId)
	}
	first := send("one", "d-1")
	require.Equal(t, first, send("two", "d-1"))
	require.NotEqual(t, first, send("three", "d-2"))
	visible, _ := s.Counts(fifoURL)
	require.Equal(t, 2, visible)
}

// TestDeleteMessageBatchDeletes: a received message deleted in a batch is
// gone, the others stay.
func TestDeleteMessageBatchDeletes(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	for _, body := range []string{"a", "b", "c"} {
		s.Put(queueURL, body, time.Now(), nil)
	}
	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10})
	require.NoError(t, err)
	require.Len(t, got.Messages, 3)
	out, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("0"), ReceiptHandle: got.Messages[1].ReceiptHandle},
	}})
	require.NoError(t, err)
	require.Len(t, out.Successful, 1)
	var left []string
	for _, m := range s.Messages(queueURL) {
		left = append(left, m.Body)
	}
	require.ElementsMatch(t, []string{"a", "b", "c"}, append(left, aws.ToString(got.Messages[1].Body)))
	require.Len(t, left, 2)
}

// TestSendAtTheEdges: a standard queue takes a DelaySeconds of 0 (sent on
// the wire: the SDK leaves a 0 out), 5 and 900, not -1; a FIFO queue refuses
// any delay of its own; a body of exactly the characters at the ends of the
// ranges SQS allows is sent, one just outside them refused.
func TestSendAtTheEdges(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	post := func(delay string) (int, string) {
		return postJSON(t, s.URL(), "SendMessage", `{"QueueUrl":"`+queueURL+`","MessageBody":"x","DelaySeconds":`+delay+`}`)
	}
	status, body := post("0")
	require.Equal(t, http.StatusOK, status, body)
	status, body = post("-1")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "DelaySeconds")

	for name, tc := range map[string]struct {
		in   sqs.SendMessageInput
		want string
	}{
		"delay 5":          {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), DelaySeconds: 5}, ""},
		"delay 900":        {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), DelaySeconds: 900}, ""},
		"FIFO with delay":  {sqs.SendMessageInput{QueueUrl: aws.String(fifoURL), MessageBody: aws.String("x"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d5"), DelaySeconds: 5}, "InvalidParameterValue"},
		"tab, LF, CR":      {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("\t\n\r")}, ""},
		"range ends":       {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(" \uD7FF\uE000\uFFFD\U00010000\U0010FFFF")}, ""},
		"below space":      {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("\x1f")}, "InvalidMessageContents"},
		"above U+FFFD":     {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("\uFFFE")}, "InvalidMessageContents"},
		"between 8 and 10": {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("\x0b")}, "InvalidMessageContents"},
	} {
		_, err := c.SendMessage(ctx, &tc.in)
		require.Equal(t, tc.want, code(err), name)
	}
}

// postJSON sends body to the fake as SQS's JSON protocol carries action
// (what the SDK cannot send, such as a negative wait) and returns the
// status and the answer's body.
func postJSON(t *testing.T, url, action, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(answer)
}
