package deadletter

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/redrive"
)

func str(s string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(s)}
}

func TestDescribeBodyNamesHostOrDomainOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, id, channel, dest string }{
		{`{"id":"a","channel":"webhook","webhook":{"url":"https://user:pw@Hooks.Example.com:8443/p/a?token=x#f"}}`, "a", "webhook", "Hooks.Example.com"},
		{`{"id":"b","channel":"email","email":{"to":["Jana <Jana@Example.ORG>","x@y.z"]}}`, "b", "email", "example.org"},
		{`{"id":"c","channel":"email","email":{"bcc":["b@bcc.example"]}}`, "c", "email", "bcc.example"},
		{`{"id":"d","channel":"email","email":{"to":7}}`, "d", "email", ""},
		{`{"id":"e","channel":"chat","chat":{"service":"slack","url":"https://hooks.slack.com/services/T0/B0/SECRETTOKEN"}}`, "e", "chat", "hooks.slack.com"},
		{`{"id":"f","channel":"chat","chat":{"service":"teams","url":"https://prod-1.westeurope.logic.azure.com:443/workflows/w/triggers/manual/paths/invoke?sig=SECRET"}}`, "f", "chat", "prod-1.westeurope.logic.azure.com"},
		{`{"id":5,"channel":"sms"}`, "", "", ""},
		{`not json`, "", "", ""},
	} {
		id, ch, dest, _ := describeBody(tc.body)
		require.Equal(t, []string{tc.id, tc.channel, tc.dest}, []string{id, ch, dest}, tc.body)
	}
}

func TestFromMessageReadsReason(t *testing.T) {
	t.Parallel()
	reason, _ := json.Marshal(redrive.Reason{Outcome: "attempts_exhausted", ErrorClass: "webhook_http_5xx", Attempts: 13, FailedAt: "2026-11-30T10:00:00.000Z", NotificationID: "n-1", Channel: "webhook"})
	l := fromMessage(types.Message{
		MessageId: aws.String("m-1"), ReceiptHandle: aws.String("rh"), Body: aws.String(`{"version":1}`),
		Attributes:        map[string]string{"SentTimestamp": "1796000000000", "MessageGroupId": "g"},
		MessageAttributes: map[string]types.MessageAttributeValue{redrive.AttrReason: str(string(reason))},
	})
	require.Equal(t, MovedByHerald, l.MovedBy)
	require.Equal(t, "n-1", l.NotificationID, "from the reason when the body has none")
	require.Equal(t, "webhook", l.Channel, "from the reason when the body has none")
	require.Equal(t, "webhook_http_5xx", l.Class)
	require.Equal(t, 13, l.Attempts)
	require.Equal(t, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), l.FailedAt)
	require.Equal(t, "g", l.GroupID)
	require.Equal(t, time.Hour, l.Age(l.FailedAt.Add(time.Hour)), "age from failed_at")

	p := fromMessage(types.Message{MessageId: aws.String("m-2"), Body: aws.String(`{}`), Attributes: map[string]string{"SentTimestamp": "1796000000000"}})
	require.Equal(t, MovedByRedrivePolicy, p.MovedBy)
	require.Nil(t, p.Reason)
	require.Equal(t, 2*time.Minute, p.Age(time.UnixMilli(1796000000000).Add(2*time.Minute)), "age from SentTimestamp without a reason")
}

func TestFilter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	l := &Letter{MessageID: "m-1", NotificationID: "n-1", Channel: "webhook", Class: "webhook_gone", MovedBy: MovedByHerald, FailedAt: now.Add(-2 * time.Hour)}
	require.True(t, Filter{}.Match(l, now))
	require.True(t, Filter{IDs: []string{"x", "n-1"}}.Match(l, now))
	require.True(t, Filter{IDs: []string{"m-1"}}.Match(l, now), "by SQS message id")
	require.False(t, Filter{IDs: []string{"n-2"}}.Match(l, now))
	require.True(t, Filter{Class: "webhook_gone", Channel: "webhook"}.Match(l, now))
	require.False(t, Filter{Class: "webhook_http_5xx"}.Match(l, now))
	require.False(t, Filter{Channel: "email"}.Match(l, now))
	require.True(t, Filter{OlderThan: time.Hour}.Match(l, now))
	require.False(t, Filter{OlderThan: 2 * time.Hour}.Match(l, now), "older than is strict")
	require.False(t, Filter{Class: MovedByRedrivePolicy}.Match(l, now))
	require.True(t, Filter{Class: MovedByRedrivePolicy}.Match(&Letter{MovedBy: MovedByRedrivePolicy}, now))
}

func TestProducerAttributesLeaveHeraldsOut(t *testing.T) {
	t.Parallel()
	attrs := map[string]types.MessageAttributeValue{
		redrive.AttrReason: str("{}"), redrive.AttrErrorClass: str("x"), "tenant": str("t-1"),
		redrive.AttrTenant: str("acme"), redrive.AttrEndpoint: str("ep_01jekz5v8n3q4r5s6t7v8w9x0y"),
	}
	l := &Letter{attributes: attrs, Reason: &redrive.Reason{OverflowAttributes: map[string]events.SQSMessageAttribute{
		"z-overflow": {DataType: "String", StringValue: aws.String("o")},
	}}}
	got := ProducerAttributes(l)
	require.Len(t, got, 2)
	require.Equal(t, "t-1", aws.ToString(got["tenant"].StringValue))
	require.Equal(t, "o", aws.ToString(got["z-overflow"].StringValue), "attributes herald kept in the reason come back")

	for i := range 12 {
		attrs[fmt.Sprintf("a%02d", i)] = str("v")
	}
	got = ProducerAttributes(&Letter{attributes: attrs})
	require.Len(t, got, redrive.MaxMessageAttributes, "at most the SQS limit")
	require.NotContains(t, got, redrive.AttrReason)
	require.Nil(t, ProducerAttributes(&Letter{attributes: map[string]types.MessageAttributeValue{redrive.AttrReason: str("{}")}}))
}

func TestSendBackInputKeepsFIFOGroup(t *testing.T) {
	t.Parallel()
	l := &Letter{MessageID: "m-1", Body: "b", GroupID: "tenant-7"}
	in := SendBackInput(l, "https://sqs.example/1/q.fifo")
	require.Equal(t, "tenant-7", aws.ToString(in.MessageGroupId))
	require.Equal(t, "redrive-m-1", aws.ToString(in.MessageDeduplicationId))
	require.Equal(t, "b", aws.ToString(in.MessageBody))
	std := SendBackInput(l, "https://sqs.example/1/q")
	require.Nil(t, std.MessageGroupId)
	require.Nil(t, std.MessageDeduplicationId)
}

// The id and channel of an invalid body are listed only when they are what
// herald accepts: an address, a megabyte or a terminal escape sequence a
// producer put there stays in the body, for dlq show.
func TestDescribeBodyListsOnlyValidIDAndChannel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, id, channel string }{
		{`{"id":"jana@example.org","channel":"jana@example.org"}`, "", ""},
		{"{\"id\":\"\\u001b]0;owned\\u0007\",\"channel\":\"\\u001b[2J\"}", "", ""},
		{`{"id":"` + strings.Repeat("x", 129) + `","channel":"webhook"}`, "", "webhook"},
		{`{"id":"a","id":"b","channel":"email"}`, "", "email"},
		{`{"id":"ok-1","channel":"email"}`, "ok-1", "email"},
	} {
		id, ch, _, _ := describeBody(tc.body)
		require.Equal(t, []string{tc.id, tc.channel}, []string{id, ch}, tc.body)
	}
}

// A herald.reason that is not readable JSON still says herald moved the
// letter (the redrive policy writes no attribute), with the class from
// herald.error_class: neither listed nor chosen as redrive_policy.
func TestFromMessageWithUnreadableReason(t *testing.T) {
	t.Parallel()
	l := fromMessage(types.Message{
		MessageId: aws.String("m-1"), Body: aws.String(`{"version":1,"id":"n-1"}`),
		MessageAttributes: map[string]types.MessageAttributeValue{
			redrive.AttrReason: str(`{"outcome":"permanent_fail`), redrive.AttrErrorClass: str("webhook_gone"),
		},
	})
	require.Equal(t, MovedByHerald, l.MovedBy)
	require.Nil(t, l.Reason)
	require.Equal(t, "webhook_gone", l.Class)
	require.False(t, Filter{Class: MovedByRedrivePolicy}.Match(&l, time.Now()))
	require.True(t, Filter{Class: "webhook_gone"}.Match(&l, time.Now()))
}

// An empty id names no letter: `--id "$ID"` with ID unset must not choose
// every letter whose body has no valid id.
func TestFilterEmptyIDMatchesNothing(t *testing.T) {
	t.Parallel()
	now := time.Now()
	noID := &Letter{MessageID: "m-1", MovedBy: MovedByRedrivePolicy}
	require.False(t, Filter{IDs: []string{""}}.Match(noID, now))
	require.True(t, Filter{IDs: []string{"", "m-1"}}.Match(noID, now))
}

// TestBodyNamesWinOverTheReason: the id and channel the body gives are the
// letter's; the reason's fill in only what the body lacks.
func TestBodyNamesWinOverTheReason(t *testing.T) {
	t.Parallel()
	reason, _ := json.Marshal(redrive.Reason{ErrorClass: "ses_message_rejected", FailedAt: "2026-11-30T10:00:00.000Z", NotificationID: "from-reason", Channel: "webhook"})
	l := fromMessage(types.Message{
		MessageId: aws.String("m-1"), Body: aws.String(`{"version":1,"id":"from-body","channel":"email","email":{"to":["a@b.example"]}}`),
		Attributes:        map[string]string{"SentTimestamp": "1796000000000"},
		MessageAttributes: map[string]types.MessageAttributeValue{redrive.AttrReason: str(string(reason))},
	})
	require.Equal(t, "from-body", l.NotificationID)
	require.Equal(t, "email", l.Channel)
	require.Equal(t, "b.example", l.Destination)
}

// TestSortLetters: without sequence numbers (a standard queue), oldest
// failure first, then by SQS message id.
func TestSortLetters(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	got := sortLetters([]Letter{
		{MessageID: "m-4", NotificationID: "b", FailedAt: t0},
		{MessageID: "m-3", NotificationID: "a", FailedAt: t0.Add(time.Second)},
		{MessageID: "m-2", NotificationID: "a", FailedAt: t0},
		{MessageID: "m-1", NotificationID: "a", FailedAt: t0},
		{MessageID: "m-0", NotificationID: "z", FailedAt: t0.Add(-time.Second)},
	})
	var ids []string
	for _, l := range got {
		ids = append(ids, l.MessageID)
	}
	require.Equal(t, []string{"m-0", "m-1", "m-2", "m-4", "m-3"}, ids)
}
