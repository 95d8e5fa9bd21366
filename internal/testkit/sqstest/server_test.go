package sqstest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

const (
	queueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/q"
	fifoURL  = "https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo"
)

func setup(t *testing.T) (*sqstest.Server, *sqs.Client) {
	t.Helper()
	s := sqstest.New(t)
	s.AddQueue(queueURL, map[string]string{"MaximumMessageSize": "1024"})
	s.AddQueue(fifoURL, nil)
	return s, s.Client()
}

// code returns the SQS error code the SDK reports for err, "" for none.
func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func entries(n int, id func(int) string, handle string, timeout int32) []types.ChangeMessageVisibilityBatchRequestEntry {
	out := make([]types.ChangeMessageVisibilityBatchRequestEntry, n)
	for i := range out {
		out[i] = types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(id(i)), ReceiptHandle: aws.String(handle), VisibilityTimeout: timeout}
	}
	return out
}

// TestRejectsWhatSQSRejectsInBatches: the request-level batch rules of
// ChangeMessageVisibilityBatch and DeleteMessageBatch.
func TestRejectsWhatSQSRejectsInBatches(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	ctx := context.Background()
	seq := func(i int) string { return fmt.Sprint(i) }
	for name, tc := range map[string]struct {
		entries []types.ChangeMessageVisibilityBatchRequestEntry
		want    string
	}{
		"11 entries":     {entries(11, seq, "h", 0), "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"},
		"no entries":     {[]types.ChangeMessageVisibilityBatchRequestEntry{}, "AWS.SimpleQueueService.EmptyBatchRequest"},
		"duplicate ids":  {entries(2, func(int) string { return "same" }, "h", 0), "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"},
		"id with a dot":  {entries(1, func(int) string { return "a.b" }, "h", 0), "AWS.SimpleQueueService.InvalidBatchEntryId"},
		"id of 81 chars": {entries(1, func(int) string { return strings.Repeat("a", 81) }, "h", 0), "AWS.SimpleQueueService.InvalidBatchEntryId"},
		"10 entries":     {entries(10, seq, "h", 0), ""},
	} {
		_, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL), Entries: tc.entries})
		require.Equal(t, tc.want, code(err), name)
	}
	del := make([]types.DeleteMessageBatchRequestEntry, 11)
	for i := range del {
		del[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: aws.String("h")}
	}
	_, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: del})
	require.Equal(t, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", code(err))
	_, err = c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL + "-missing"), Entries: del[:1]})
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", code(err))
}

// TestRejectsBadEntries: an empty receipt handle, a visibility timeout
// outside 0–43,200 s, or one ending over 12 h after the receive fail their
// entry alone.
func TestRejectsBadEntries(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	now := time.Now()
	s.SetNow(func() time.Time { return now })
	s.Put(queueURL, "m", now, nil)
	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), VisibilityTimeout: 60})
	require.NoError(t, err)
	received := aws.ToString(got.Messages[0].ReceiptHandle)
	out, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL), Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
		{Id: aws.String("empty"), ReceiptHandle: aws.String(""), VisibilityTimeout: 10},
		{Id: aws.String("over"), ReceiptHandle: aws.String("h"), VisibilityTimeout: 43201},
		{Id: aws.String("negative"), ReceiptHandle: aws.String("h"), VisibilityTimeout: -1},
		{Id: aws.String("limit"), ReceiptHandle: aws.String("h"), VisibilityTimeout: 43200},
		{Id: aws.String("received"), ReceiptHandle: aws.String(received), VisibilityTimeout: 120},
	}})
	require.NoError(t, err)
	failed := map[string]string{}
	for _, f := range out.Failed {
		failed[aws.ToString(f.Id)] = aws.ToString(f.Code)
	}
	require.Equal(t, map[string]string{"empty": "ReceiptHandleIsInvalid", "over": "InvalidParameterValue", "negative": "InvalidParameterValue"}, failed)
	require.Equal(t, now.Add(120*time.Second), s.Messages(queueURL)[0].VisibleAt)

	// 12 h counts from the receive: 11 h later, 2 h more is refused.
	now = now.Add(11 * time.Hour)
	_, err = c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL), Entries: entries(1, func(int) string { return "a" }, received, 0)})
	require.NoError(t, err)
	s.SetNow(func() time.Time { return now })
	got, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), VisibilityTimeout: 60})
	require.NoError(t, err)
	again := aws.ToString(got.Messages[0].ReceiptHandle)
	now = now.Add(11 * time.Hour)
	s.SetNow(func() time.Time { return now.Add(-11*time.Hour + 30*time.Second) })
	out, err = c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL), Entries: entries(1, func(int) string { return "a" }, again, 43200)})
	require.NoError(t, err)
	require.Len(t, out.Failed, 1, "30 s after the receive, 12 h more ends past the limit")
	out, err = c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL), Entries: entries(1, func(int) string { return "a" }, received, 10)})
	require.NoError(t, err)
	require.Equal(t, "ReceiptHandleIsInvalid", aws.ToString(out.Failed[0].Code), "a handle of an earlier receive is stale")
}

// TestRejectsBadReceivesAndSends: receive and send parameter rules.
func TestRejectsBadReceivesAndSends(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	ctx := context.Background()
	for _, in := range []*sqs.ReceiveMessageInput{
		{QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 11},
		{QueueUrl: aws.String(queueURL), WaitTimeSeconds: 21},
		{QueueUrl: aws.String(queueURL), VisibilityTimeout: 43201},
	} {
		_, err := c.ReceiveMessage(ctx, in)
		require.Equal(t, "InvalidParameterValue", code(err))
	}
	for name, tc := range map[string]struct {
		in   sqs.SendMessageInput
		want string
	}{
		"fits":              {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(strings.Repeat("x", 1024))}, ""},
		"one byte too many": {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(strings.Repeat("x", 1025))}, "InvalidParameterValue"},
		"attributes count": {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), MessageAttributes: map[string]types.MessageAttributeValue{
			"a": {DataType: aws.String("String"), StringValue: aws.String(strings.Repeat("v", 1020))},
		}}, "InvalidParameterValue"},
		"invalid character":   {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("a\x00b")}, "InvalidMessageContents"},
		"dedup on standard":   {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")}, "InvalidParameterValue"},
		"FIFO without group":  {sqs.SendMessageInput{QueueUrl: aws.String(fifoURL), MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")}, "MissingParameter"},
		"FIFO without dedup":  {sqs.SendMessageInput{QueueUrl: aws.String(fifoURL), MessageBody: aws.String("x"), MessageGroupId: aws.String("g")}, "InvalidParameterValue"},
		"FIFO with both":      {sqs.SendMessageInput{QueueUrl: aws.String(fifoURL), MessageBody: aws.String("x"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d")}, ""},
		"delay over 15 min":   {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), DelaySeconds: 901}, "InvalidParameterValue"},
		"empty string value":  {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), MessageAttributes: map[string]types.MessageAttributeValue{"a": {DataType: aws.String("String"), StringValue: aws.String("")}}}, "InvalidParameterValue"},
		"unknown queue":       {sqs.SendMessageInput{QueueUrl: aws.String(queueURL + "-missing"), MessageBody: aws.String("x")}, "AWS.SimpleQueueService.NonExistentQueue"},
		"eleven attributes":   {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), MessageAttributes: eleven()}, "InvalidParameterValue"},
		"attribute data type": {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), MessageAttributes: map[string]types.MessageAttributeValue{"a": {DataType: aws.String(""), StringValue: aws.String("v")}}}, "InvalidParameterValue"},
	} {
		_, err := c.SendMessage(ctx, &tc.in)
		require.Equal(t, tc.want, code(err), name)
	}
}

func eleven() map[string]types.MessageAttributeValue {
	out := map[string]types.MessageAttributeValue{}
	for i := range 11 {
		out[fmt.Sprint("a", i)] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("v")}
	}
	return out
}

func receive(t *testing.T, c *sqs.Client, url string, max, wait, visibility int32) []string {
	t.Helper()
	out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: max, WaitTimeSeconds: wait, VisibilityTimeout: visibility})
	require.NoError(t, err)
	var bodies []string
	for _, m := range out.Messages {
		bodies = append(bodies, aws.ToString(m.Body))
	}
	return bodies
}

// TestFIFOGroupBlocksWhileInFlight: a FIFO receive returns nothing of a
// message group while an earlier message of it is in flight, and the rest
// of the group, in order, once that one is deleted or visible again.
func TestFIFOGroupBlocksWhileInFlight(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	now := time.Unix(1_800_000_000, 0)
	s.SetNow(func() time.Time { return now })
	for i := range 3 {
		s.PutInGroup(fifoURL, "a", fmt.Sprint("a", i), now, nil)
		s.PutInGroup(fifoURL, "b", fmt.Sprint("b", i), now, nil)
	}
	require.Equal(t, []string{"a0", "b0"}, receive(t, c, fifoURL, 2, 0, 60))
	require.Empty(t, receive(t, c, fifoURL, 10, 0, 60), "both groups held")
	visible, inFlight := s.Counts(fifoURL)
	require.Equal(t, []int{4, 2}, []int{visible, inFlight})

	now = now.Add(60 * time.Second) // a0 and b0 visible again: first again
	require.Equal(t, []string{"a0", "b0", "a1", "b1", "a2", "b2"}, receive(t, c, fifoURL, 10, 0, 60), "one receive may return several of a group, in order")

	s2, c2 := setup(t)
	s2.PutInGroup(fifoURL, "a", "a0", time.Now(), nil)
	s2.PutInGroup(fifoURL, "a", "a1", time.Now(), nil)
	s2.Put(queueURL, "standard", time.Now(), nil)
	got, err := c2.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(fifoURL), VisibilityTimeout: 60})
	require.NoError(t, err)
	require.Equal(t, "a0", aws.ToString(got.Messages[0].Body))
	require.Empty(t, receive(t, c2, fifoURL, 10, 0, 60))
	_, err = c2.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(fifoURL), ReceiptHandle: got.Messages[0].ReceiptHandle})
	require.NoError(t, err)
	require.Equal(t, []string{"a1"}, receive(t, c2, fifoURL, 10, 0, 60), "deleting the held message frees its group")
	require.Panics(t, func() { s2.PutInGroup(queueURL, "a", "x", time.Now(), nil) }, "a standard queue has no groups")
}

// TestDeleteMessage: the newest receipt handle deletes; an earlier one, an
// empty one or a failed action does not.
func TestDeleteMessage(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	s.SetNow(func() time.Time { return now })
	id := s.Put(queueURL, "m", now, nil)
	first, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), VisibilityTimeout: 1})
	require.NoError(t, err)
	now = now.Add(time.Second)
	second, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), VisibilityTimeout: 60})
	require.NoError(t, err)
	require.Len(t, second.Messages, 1)

	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: first.Messages[0].ReceiptHandle})
	require.Equal(t, "ReceiptHandleIsInvalid", code(err), "the first receive's handle is stale")
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String("")})
	require.Equal(t, "MissingParameter", code(err))
	s.FailMessage("DeleteMessage", id)
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: second.Messages[0].ReceiptHandle})
	require.Equal(t, "InternalError", code(err))
	require.Len(t, s.Messages(queueURL), 1)

	s2, c2 := setup(t)
	m := s2.Put(queueURL, "m", now, nil)
	got, err := c2.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), VisibilityTimeout: 60})
	require.NoError(t, err)
	_, err = c2.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String("made-by-hand")})
	require.NoError(t, err, "a handle the server did not issue is accepted")
	require.Len(t, s2.Messages(queueURL), 1, "and deletes nothing")
	_, err = c2.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: got.Messages[0].ReceiptHandle})
	require.NoError(t, err)
	require.Empty(t, s2.Messages(queueURL), m)
	s2.FailAction("DeleteMessage")
	_, err = c2.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String("h")})
	require.Equal(t, "InternalError", code(err))
}

// TestReceiveClock: the simulated clock moves by the receive cost when a
// receive returns messages and by the wait of an empty one, and not
// otherwise; visibility timeouts run out on it.
func TestReceiveClock(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	start := time.Unix(1_800_000_000, 0)
	s.SetReceiveClock(start, 300*time.Millisecond)
	s.Put(queueURL, "m", start, nil)
	require.Equal(t, []string{"m"}, receive(t, c, queueURL, 1, 5, 1))
	require.Equal(t, start.Add(300*time.Millisecond), s.Now())
	require.Empty(t, receive(t, c, queueURL, 1, 0, 1))
	require.Equal(t, start.Add(300*time.Millisecond), s.Now(), "an empty receive without a wait takes no time")
	_, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queueURL)})
	require.NoError(t, err)
	require.Equal(t, start.Add(300*time.Millisecond), s.Now(), "only receives move it")
	require.Empty(t, receive(t, c, queueURL, 1, 1, 1))
	require.Equal(t, start.Add(1300*time.Millisecond), s.Now(), "an empty long poll takes its wait")
	require.Equal(t, []string{"m"}, receive(t, c, queueURL, 1, 1, 1), "the 1 s visibility timeout ran out")
	require.Equal(t, 2, s.Messages(queueURL)[0].ReceiveCount)
}

// TestOnSendAndCounts: the hook runs once before each SendMessage, and
// GetQueueAttributes counts visible and in-flight messages as they are now.
func TestOnSendAndCounts(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	calls := 0
	s.OnSend(func() {
		require.Len(t, s.Messages(queueURL), calls, "before the send is stored")
		calls++
	})
	for range 3 {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("m")})
		require.NoError(t, err)
	}
	_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), VisibilityTimeout: 60})
	require.NoError(t, err)
	require.Equal(t, 3, calls, "a receive runs no hook")
	s.OnSend(nil)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("m")})
	require.NoError(t, err)
	require.Equal(t, 3, calls)
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queueURL), AttributeNames: []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	}})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"ApproximateNumberOfMessages": "3", "ApproximateNumberOfMessagesNotVisible": "1"}, out.Attributes)
}

// TestAcceptsTheEdges: what SQS allows at each limit passes, one past it
// is refused.
func TestAcceptsTheEdges(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	for _, tc := range []struct {
		in   sqs.ReceiveMessageInput
		want string
	}{
		{sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), WaitTimeSeconds: 20}, ""},
		{sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), WaitTimeSeconds: -1}, "InvalidParameterValue"},
		{sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), VisibilityTimeout: 43200}, ""},
		{sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), VisibilityTimeout: -1}, "InvalidParameterValue"},
	} {
		_, err := c.ReceiveMessage(ctx, &tc.in)
		require.Equal(t, tc.want, code(err), "%+v", tc.in)
	}
	s.AddQueue(queueURL+"-zero", map[string]string{"VisibilityTimeout": "0"})
	s.Put(queueURL+"-zero", "m", time.Now(), nil)
	_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL + "-zero")})
	require.NoError(t, err, "a queue's visibility timeout of 0")

	ten := eleven()
	delete(ten, "a0")
	threeAttrs := map[string]types.MessageAttributeValue{
		"tenant":   {DataType: aws.String("String"), StringValue: aws.String("acme")},
		"priority": {DataType: aws.String("Number.int"), StringValue: aws.String("7")},
		"trace":    {DataType: aws.String("Binary"), BinaryValue: []byte{1, 2, 3}},
	}
	threeBytes := len("tenant") + len("String") + len("acme") + len("priority") + len("Number.int") + len("7") + len("trace") + len("Binary") + 3
	bin := func(n int) map[string]types.MessageAttributeValue {
		return map[string]types.MessageAttributeValue{"b": {DataType: aws.String("Binary"), BinaryValue: make([]byte, n)}}
	}
	for name, tc := range map[string]struct {
		in   sqs.SendMessageInput
		want string
	}{
		"ten attributes":           {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), MessageAttributes: ten}, ""},
		"a string attribute":       {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x"), MessageAttributes: map[string]types.MessageAttributeValue{"a": {DataType: aws.String("String"), StringValue: aws.String("v")}}}, ""},
		"binary fills it exactly":  {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(strings.Repeat("x", 1000)), MessageAttributes: bin(1024 - 1000 - len("b") - len("Binary"))}, ""},
		"binary one byte too many": {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(strings.Repeat("x", 1000)), MessageAttributes: bin(1024 - 1000 - len("b") - len("Binary") + 1)}, "InvalidParameterValue"},
		// Names, types (a custom type label counts) and values, each byte.
		"three attributes fill it exactly": {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(strings.Repeat("x", 1024-threeBytes)), MessageAttributes: threeAttrs}, ""},
		"three attributes, one byte over":  {sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(strings.Repeat("x", 1024-threeBytes+1)), MessageAttributes: threeAttrs}, "InvalidParameterValue"},
	} {
		_, err := c.SendMessage(ctx, &tc.in)
		require.Equal(t, tc.want, code(err), name)
	}

	// 12 hours from the receive exactly is allowed; a timeout of 0 too.
	now := time.Unix(1_800_000_000, 0)
	s.SetNow(func() time.Time { return now })
	s.AddQueue(queueURL+"-12h", nil)
	s.Put(queueURL+"-12h", "m", now, nil)
	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL + "-12h"), VisibilityTimeout: 60})
	require.NoError(t, err)
	h := aws.ToString(got.Messages[0].ReceiptHandle)
	now = now.Add(30 * time.Second)
	out, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL + "-12h"), Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
		{Id: aws.String("edge"), ReceiptHandle: aws.String(h), VisibilityTimeout: 43200 - 30},
		{Id: aws.String("zero"), ReceiptHandle: aws.String("made-by-hand"), VisibilityTimeout: 0},
	}})
	require.NoError(t, err)
	require.Empty(t, out.Failed, "12 h after the receive exactly, and a timeout of 0")
}

// TestQueueAndMessageAttributes: a queue's ARN ends in its name; a FIFO
// message carries its MessageGroupId, a standard one none; a refusal says
// who is at fault as SQS does (Sender below 500, Receiver from 500).
func TestQueueAndMessageAttributes(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(fifoURL), AttributeNames: []types.QueueAttributeName{"QueueArn"}})
	require.NoError(t, err)
	require.Equal(t, "arn:aws:sqs:us-east-1:123456789012:q.fifo", attrs.Attributes["QueueArn"])

	s.PutInGroup(fifoURL, "g-1", "f", time.Now(), nil)
	s.Put(queueURL, "s", time.Now(), nil)
	for url, want := range map[string]string{fifoURL: "g-1", queueURL: ""} {
		got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		require.NoError(t, err)
		require.Equal(t, want, got.Messages[0].Attributes["MessageGroupId"], url)
	}

	var ae smithy.APIError
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("")})
	require.True(t, errors.As(err, &ae))
	require.Equal(t, smithy.FaultClient, ae.ErrorFault())
	s.FailAction("SendMessage")
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String("x")})
	require.True(t, errors.As(err, &ae))
	require.Equal(t, smithy.FaultServer, ae.ErrorFault())
}
