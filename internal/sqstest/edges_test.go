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
		req, err := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(`{"QueueUrl":"`+queueURL+`","WaitTimeSeconds":`+wait+`}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS.ReceiveMessage")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	status, body := post("0")
	require.Equal(t, http.StatusOK, status, body)
	status, body = post("-1")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "WaitTimeSeconds")
}
