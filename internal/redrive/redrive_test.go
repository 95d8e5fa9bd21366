package redrive

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// TestQueueKeyAndFindQueue: a queue is named by ACCOUNT/NAME in its URL
// and its ARN alike (another service's ARN, a missing account or name:
// none); a record's queue is found by its eventSourceARN, the account
// counting; a single queue is every record's.
func TestQueueKeyAndFindQueue(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://sqs.us-east-1.amazonaws.com/123456789012/h-email":            "123456789012/h-email",
		"http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/q": "000000000000/q",
		"http://127.0.0.1:4566/000000000000/q.fifo":                           "000000000000/q.fifo",
		"arn:aws:sqs:us-east-1:123456789012:h-email":                          "123456789012/h-email",
		"arn:aws-cn:sqs:cn-north-1:123456789012:h-email":                      "123456789012/h-email",
		"arn:aws:sns:us-east-1:123456789012:h-email":                          "",
		"arn:aws:sqs:us-east-1::h-email":                                      "",
		"https://sqs.us-east-1.amazonaws.com/h-email":                         "",
		"":          "",
		"not a url": "",
		"arn:aws:sqs:us-east-1:123456789012:h-email:extra": "",
	} {
		require.Equal(t, want, QueueKey(in), in)
	}
	qs := []Queue{
		{Channel: notification.ChannelEmail, URL: "https://sqs.us-east-1.amazonaws.com/123456789012/h-email", DeadLetterURL: "https://sqs.us-east-1.amazonaws.com/123456789012/h-email-dlq"},
		{Channel: notification.ChannelWebhook, URL: "https://sqs.us-east-1.amazonaws.com/123456789012/h-webhook", DeadLetterURL: "https://sqs.us-east-1.amazonaws.com/123456789012/h-webhook-dlq"},
	}
	q, ok := FindQueue(qs, "arn:aws:sqs:us-east-1:123456789012:h-webhook")
	require.True(t, ok)
	require.Equal(t, notification.ChannelWebhook, q.Channel)
	_, ok = FindQueue(qs, "arn:aws:sqs:us-east-1:999999999999:h-webhook")
	require.False(t, ok, "the account counts")
	_, ok = FindQueue(qs, "")
	require.False(t, ok)
	q, ok = FindQueue(qs[:1], "")
	require.True(t, ok, "a single queue is every record's")
	require.Equal(t, "https://sqs.us-east-1.amazonaws.com/123456789012/h-email", q.URL)
}

// TestSubject: a delivery to a registered endpoint names its tenant and
// endpoint in two attributes, which are herald's; an inline message none.
func TestSubject(t *testing.T) {
	t.Parallel()
	const ep = "ep_01jekz5v8n3q4r5s6t7v8w9x0y"
	require.Equal(t, map[string]string{AttrTenant: "acme", AttrEndpoint: ep},
		Subject(&notification.Message{Tenant: "acme", Webhook: &notification.Webhook{Endpoint: ep}}))
	require.Equal(t, map[string]string{AttrEndpoint: ep},
		Subject(&notification.Message{Chat: &notification.Chat{Endpoint: ep}}))
	require.Empty(t, Subject(&notification.Message{Webhook: &notification.Webhook{URL: "https://h.example/"}}))
	require.Empty(t, Subject(nil))
	for _, name := range []string{AttrReason, AttrErrorClass, AttrTenant, AttrEndpoint} {
		require.True(t, HeraldAttribute(name), name)
	}
	for _, name := range []string{"tenant", "herald.sequence_number", "traceparent", ""} {
		require.False(t, HeraldAttribute(name), name)
	}
	require.LessOrEqual(t, 2+len(Subject(&notification.Message{Tenant: "a", Webhook: &notification.Webhook{Endpoint: ep}})), 4,
		"herald's attributes leave 6 of the SQS limit of 10 to the producer")
}
