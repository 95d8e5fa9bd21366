package deadletter

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

func reasonJSON(t *testing.T, class string, failedAt time.Time) string {
	t.Helper()
	raw, err := json.Marshal(redrive.Reason{
		Outcome: "permanent_failure", ErrorClass: delivery.Class(class), Attempts: 2,
		FailedAt: failedAt.UTC().Format(time.RFC3339Nano), SourceMessageID: "src-1",
		OverflowAttributes: map[string]events.SQSMessageAttribute{"z-kept": {DataType: "String", StringValue: aws.String("o")}},
	})
	require.NoError(t, err)
	return string(raw)
}

// TestReasonOfAnEarlierDeadLetteringIsNotCurrent: a letter SQS's redrive
// policy moved (it set DeadLetterQueueSourceArn), or one stored more than
// 20 minutes after its reason's failed_at, carries a herald.reason from an
// earlier dead-lettering. It is listed as moved by the redrive policy, with
// the old reason as previous_reason only: no class, attempts or failed_at
// from it, so a filter by that class does not pick it.
func TestReasonOfAnEarlierDeadLetteringIsNotCurrent(t *testing.T) {
	t.Parallel()
	failed := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	msg := func(sentAt time.Time, sourceArn string) types.Message {
		attrs := map[string]string{"SentTimestamp": strconv.FormatInt(sentAt.UnixMilli(), 10)}
		if sourceArn != "" {
			attrs["DeadLetterQueueSourceArn"] = sourceArn
		}
		return types.Message{
			MessageId: aws.String("m-1"), Body: aws.String(`{"version":1,"id":"n-1","channel":"webhook"}`), Attributes: attrs,
			MessageAttributes: map[string]types.MessageAttributeValue{
				redrive.AttrReason: str(reasonJSON(t, "webhook_gone", failed)), redrive.AttrErrorClass: str("webhook_gone"),
			},
		}
	}
	now := failed.Add(48 * time.Hour)
	for name, tc := range map[string]struct {
		m     types.Message
		stale bool
	}{
		"sent by herald at once":                 {msg(failed.Add(2*time.Second), ""), false},
		"sent by herald 20 min after (the edge)": {msg(failed.Add(20*time.Minute), ""), false},
		"stored 20 min 1 ms after the reason":    {msg(failed.Add(20*time.Minute+time.Millisecond), ""), true},
		"stored a day after the reason":          {msg(failed.Add(24*time.Hour), ""), true},
		"moved by the redrive policy (standard)": {msg(failed.Add(-time.Hour), "arn:aws:sqs:us-east-1:1:q"), true},
		"moved by the redrive policy at once":    {msg(failed.Add(time.Second), "arn:aws:sqs:us-east-1:1:q"), true},
	} {
		l := fromMessage(tc.m)
		if !tc.stale {
			require.Equal(t, MovedByHerald, l.MovedBy, name)
			require.NotNil(t, l.Reason, name)
			require.Nil(t, l.PreviousReason, name)
			require.Equal(t, "webhook_gone", l.Class, name)
			require.Equal(t, failed, l.FailedAt, name)
			continue
		}
		require.Equal(t, MovedByRedrivePolicy, l.MovedBy, name)
		require.Nil(t, l.Reason, "%s: never shown as the current reason", name)
		require.NotNil(t, l.PreviousReason, name)
		require.Equal(t, "webhook_gone", string(l.PreviousReason.ErrorClass), name)
		require.Empty(t, l.Class, name)
		require.Zero(t, l.Attempts, name)
		require.True(t, l.FailedAt.IsZero(), name)
		require.Equal(t, now.Sub(l.SentAt), l.Age(now), "%s: aged from SentTimestamp", name)
		require.False(t, Filter{Class: "webhook_gone"}.Match(&l, now), name)
		require.True(t, Filter{Class: MovedByRedrivePolicy}.Match(&l, now), name)
	}

	// An unreadable herald.reason on a letter the redrive policy moved is
	// not herald's move either.
	m := msg(failed, "arn:aws:sqs:us-east-1:1:q")
	m.MessageAttributes[redrive.AttrReason] = str("{not json")
	l := fromMessage(m)
	require.Equal(t, MovedByRedrivePolicy, l.MovedBy)
	require.Nil(t, l.PreviousReason)
	require.Empty(t, l.Class)
	require.Equal(t, "arn:aws:sqs:us-east-1:1:q", l.DeadLetterSourceARN)
}

// TestLetterDeadLetteredSentBackAndMovedAgain: herald dead-letters a
// notification; SQS's move task sends it back with all its attributes,
// herald.reason among them; it fails again without herald settling it (a
// timeout) and the redrive policy moves it. The scan shows it as moved by
// the redrive policy with the old reason as history, and a redrive sends
// the producer's message back: its own attributes and those herald kept in
// the old reason, none of herald's.
func TestLetterDeadLetteredSentBackAndMovedAgain(t *testing.T) {
	t.Parallel()
	w := sqstest.New(t)
	w.AddQueue(dlqURL, nil)
	w.AddQueue(mainURL, nil)
	failed := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	w.SetReceiveClock(failed.Add(time.Hour), receiveCost)
	sval := func(s string) *string { return &s }
	attrs := map[string]sqstest.MessageAttribute{
		"tenant":               {DataType: "String", StringValue: sval("t-1")},
		redrive.AttrReason:     {DataType: "String", StringValue: sval(reasonJSON(t, "webhook_gone", failed))},
		redrive.AttrErrorClass: {DataType: "String", StringValue: sval("webhook_gone")},
	}
	// As the move task left it on the main queue, an hour after herald gave up.
	id := w.Put(mainURL, `{"version":1,"id":"n-1","channel":"webhook"}`, failed.Add(time.Hour), attrs)
	w.MoveByRedrivePolicy(mainURL, dlqURL, id)

	ctx := context.Background()
	client := w.Client()
	letters, err := Scan(ctx, client, dlqURL, time.Minute)
	require.NoError(t, err)
	require.Len(t, letters, 1)
	l := letters[0]
	require.Equal(t, MovedByRedrivePolicy, l.MovedBy)
	require.Nil(t, l.Reason)
	require.NotNil(t, l.PreviousReason)
	require.Equal(t, "arn:aws:sqs:us-east-1:123456789012:q", l.DeadLetterSourceARN)

	rep, err := Redrive(ctx, client, dlqURL, mainURL, letters, func(*Letter) bool { return true }, false)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Sent)
	sent := w.Messages(mainURL)
	require.Len(t, sent, 1)
	require.NotContains(t, sent[0].MsgAttrs, redrive.AttrReason, "never herald's reason")
	require.NotContains(t, sent[0].MsgAttrs, redrive.AttrErrorClass)
	require.Equal(t, "t-1", aws.ToString(sent[0].MsgAttrs["tenant"].StringValue))
	require.Equal(t, "o", aws.ToString(sent[0].MsgAttrs["z-kept"].StringValue), "the producer's attribute herald kept in the old reason")
	require.Empty(t, w.Messages(dlqURL))
}

// TestRedriveRefusesACutBodyOfAnEarlierDeadLettering: the body herald cut
// when it dead-lettered the message stays cut through a move back and a
// second move by the redrive policy; the previous reason still says so.
func TestRedriveRefusesACutBodyOfAnEarlierDeadLettering(t *testing.T) {
	t.Parallel()
	l := Letter{MessageID: "m-1", Body: `{"version":1`, MovedBy: MovedByRedrivePolicy,
		PreviousReason: &redrive.Reason{ErrorClass: processor.ClassMessageTooLarge, OriginalBodyBytes: 1_100_000}}
	rep, err := Redrive(context.Background(), nil, dlqURL, mainURL, []Letter{l}, func(*Letter) bool { return true }, true)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Failed)
	require.Contains(t, rep.Results[0].Error, "1100000")
}
