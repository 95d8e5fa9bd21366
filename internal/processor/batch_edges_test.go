package processor_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// sends returns how many times the notification id was attempted.
func (b *bundle) sends(id string) int32 {
	n, ok := b.sent.Load(id)
	if !ok {
		return 0
	}
	return n.(*atomic.Int32).Load()
}

// deadLetters decodes the SendMessage calls: body and reason of each.
func (b *bundle) deadLetters(t *testing.T) []deadLetter {
	t.Helper()
	var out []deadLetter
	for _, raw := range b.wire.Requests("SendMessage") {
		var sm struct {
			MessageBody            string
			MessageDeduplicationId string
			MessageAttributes      map[string]struct{ DataType, StringValue string }
		}
		require.NoError(t, json.Unmarshal(raw, &sm))
		var r redrive.Reason
		require.NoError(t, json.Unmarshal([]byte(sm.MessageAttributes[redrive.AttrReason].StringValue), &r))
		out = append(out, deadLetter{body: sm.MessageBody, dedup: sm.MessageDeduplicationId, reason: r})
	}
	return out
}

type deadLetter struct {
	body, dedup string
	reason      redrive.Reason
}

// TestHandleDuplicateIDsInOneBatch: two records of one batch with the same
// notification id are one delivery; the copy is acknowledged and logged as
// a duplicate, whatever becomes of the first.
func TestHandleDuplicateIDsInOneBatch(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		fifo     bool
		records  []events.SQSMessage
		id       string
		failures []string
		dead     int
		dups     int
	}{
		{
			name:    "delivered",
			records: []events.SQSMessage{rec("m1", webhookBody("ok-dup"), 1), rec("m2", webhookBody("ok-dup"), 1)},
			id:      "ok-dup", failures: []string{}, dups: 1,
		},
		{
			name:    "first retried: the copy does not come back with it",
			records: []events.SQSMessage{rec("m1", webhookBody("transient-dup"), 1), rec("m2", webhookBody("transient-dup"), 1)},
			id:      "transient-dup", failures: []string{"m1"}, dups: 1,
		},
		{
			name:    "three copies, first dead-lettered: one dead letter",
			records: []events.SQSMessage{rec("m1", webhookBody("permanent-dup"), 1), rec("m2", webhookBody("permanent-dup"), 1), rec("m3", webhookBody("permanent-dup"), 2)},
			id:      "permanent-dup", failures: []string{}, dead: 1, dups: 2,
		},
		{
			name: "FIFO: the copy in a blocked group is acknowledged, the next record skipped",
			fifo: true,
			records: []events.SQSMessage{
				fifoRec("m1", "g", webhookBody("transient-fifo"), 1),
				fifoRec("m2", "g", webhookBody("transient-fifo"), 1),
				fifoRec("m3", "g", webhookBody("ok-after"), 1),
			},
			id: "transient-fifo", failures: []string{"m1", "m3"}, dups: 1,
		},
		{
			name: "FIFO: copies in two groups",
			fifo: true,
			records: []events.SQSMessage{
				fifoRec("m1", "a", webhookBody("ok-groups"), 1),
				fifoRec("m2", "b", webhookBody("ok-groups"), 1),
			},
			id: "ok-groups", failures: []string{}, dups: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: tt.records})
			require.NoError(t, err)
			require.ElementsMatch(t, tt.failures, failures(resp))
			require.EqualValues(t, 1, b.sends(tt.id), "one delivery")
			require.Len(t, b.deadLetters(t), tt.dead)
			dups := 0
			for _, l := range b.logs.lines(t) {
				if l["outcome"] == string(processor.Duplicate) {
					dups++
					require.Equal(t, tt.id, l["id"])
					require.Equal(t, "m1", l["duplicate_of"])
				}
			}
			require.Equal(t, tt.dups, dups)
		})
	}

	t.Run("an invalid record does not make a valid one a duplicate", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		invalid := `{"version":1,"id":"ok-shadow","channel":"webhook"}`
		resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
			rec("m1", invalid, 1), rec("m2", webhookBody("ok-shadow"), 1),
		}})
		require.NoError(t, err)
		require.Empty(t, failures(resp))
		require.EqualValues(t, 1, b.sends("ok-shadow"), "the valid record is delivered")
		require.Len(t, b.deadLetters(t), 1)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestHandleBlankMessageID: a record without a message id is never named in
// the response (Lambda reads a blank itemIdentifier as the whole batch
// failed) and the event source mapping deletes every record the response
// does not name. So it is delivered like any other; when it would come back
// (retried, skipped behind its FIFO group), the invocation fails and the
// whole batch comes back, rather than the record being lost.
func TestHandleBlankMessageID(t *testing.T) {
	t.Parallel()

	for _, blank := range []string{"", " ", "\t"} {
		t.Run(fmt.Sprintf("delivered %q", blank), func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
				rec(blank, webhookBody("ok-blank"), 1),
				rec("m2", webhookBody("transient-other"), 1),
				rec("m3", webhookBody("ok-other"), 1),
			}})
			require.NoError(t, err)
			require.Equal(t, []string{"m2"}, failures(resp))
			require.EqualValues(t, 1, b.sends("ok-blank"), "delivered")
			require.Empty(t, b.deadLetters(t))
		})
		t.Run(fmt.Sprintf("retried %q: the batch comes back", blank), func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
				rec("m1", webhookBody("ok-other"), 1),
				rec(blank, webhookBody("transient-blank"), 1),
			}})
			require.ErrorContains(t, err, "no SQS message id")
			require.ErrorContains(t, err, `"transient-blank", retry`)
			require.Empty(t, resp.BatchItemFailures)
			require.EqualValues(t, 1, b.sends("transient-blank"), "attempted")
			require.EqualValues(t, 1, b.sends("ok-other"))
			require.Empty(t, b.deadLetters(t))
		})
	}

	t.Run("failed for good: dead-lettered with its reason", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
			rec("", webhookBody("permanent-blank"), 1),
			rec(" ", webhookBody("transient-last-blank"), 5),
		}})
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
		got := map[string]delivery.Class{}
		for _, dl := range b.deadLetters(t) {
			got[dl.reason.NotificationID] = dl.reason.ErrorClass
		}
		require.Equal(t, map[string]delivery.Class{"permanent-blank": "webhook_gone", "transient-last-blank": "webhook_http_5xx"}, got)
	})

	t.Run("a duplicate without an id rests on the earlier record", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
			rec("m1", webhookBody("transient-dup"), 1),
			rec("", webhookBody("transient-dup"), 1),
		}})
		require.NoError(t, err, "the earlier record is retried and reported")
		require.Equal(t, []string{"m1"}, failures(resp))
		require.EqualValues(t, 1, b.sends("transient-dup"))
	})

	t.Run("FIFO: skipped behind its group, the batch comes back", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *processor.Config) {
			c.QueueURL += ".fifo"
			c.DeadLetterQueueURL += ".fifo"
		})
		resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
			fifoRec("m1", "g", webhookBody("transient-first"), 1),
			fifoRec("", "g", webhookBody("ok-behind"), 1),
			fifoRec("m3", "h", webhookBody("ok-h"), 1),
		}})
		require.ErrorContains(t, err, `"ok-behind", skipped`)
		require.Empty(t, resp.BatchItemFailures)
		require.Zero(t, b.sends("ok-behind"), "not attempted behind its group")
	})

	t.Run("FIFO dead-letter queue: deduplicated by the body's digest", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *processor.Config) {
			c.QueueURL += ".fifo"
			c.DeadLetterQueueURL += ".fifo"
		})
		body := webhookBody("permanent-fifo-blank")
		resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{fifoRec("", "g", body, 1)}})
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
		dl := b.deadLetters(t)
		require.Len(t, dl, 1)
		sum := sha256.Sum256([]byte(body))
		require.Equal(t, hex.EncodeToString(sum[:]), dl[0].dedup)
	})

	t.Run("dead-letter queue down: the whole batch fails", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.wire.FailAction("SendMessage")
		resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
			rec("", webhookBody("permanent-blank"), 1), rec("m2", webhookBody("ok-2"), 1),
		}})
		require.ErrorContains(t, err, `"permanent-blank", failed`)
		require.Empty(t, resp.BatchItemFailures)
	})
}

// TestHandleEventTimeIsCreatedAtElseSentTimestamp: the sender sees the
// notification's created_at, or when the producer gave none the time SQS
// accepted the message; never the attempt time.
func TestHandleEventTimeIsCreatedAtElseSentTimestamp(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]time.Time{}
	capture := senderFunc(func(_ context.Context, m *notification.Message) error {
		mu.Lock()
		defer mu.Unlock()
		require.NotNil(t, m.CreatedAt)
		seen[m.ID] = *m.CreatedAt
		return nil
	})
	b := setup(t, func(c *processor.Config) {
		c.Senders = map[notification.Channel]processor.Sender{notification.ChannelWebhook: capture}
	})
	withCreated := `{"version":1,"id":"created","channel":"webhook","created_at":"2026-01-02T03:04:05.678+01:00","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`
	other := rec("m2", webhookBody("sent"), 1)
	other.Attributes["SentTimestamp"] = "1764500000123"
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m1", withCreated, 1), other}})
	require.NoError(t, err)
	require.True(t, time.Date(2026, 1, 2, 2, 4, 5, 678000000, time.UTC).Equal(seen["created"]), "%v", seen["created"])
	require.True(t, time.UnixMilli(1764500000123).Equal(seen["sent"]), "%v", seen["sent"])
}

// bigBody returns a valid email message of exactly n bytes: its text and
// html share the padding, each within notification.MaxBodyBytes.
func bigBody(t *testing.T, id string, n int) string {
	t.Helper()
	head := fmt.Sprintf(`{"version":1,"id":%q,"channel":"email","email":{"from":"a@example.com","to":["b@example.com"],"subject":"s","text":"`, id)
	mid := `","html":"`
	tail := `"}}`
	pad := n - len(head) - len(mid) - len(tail)
	require.Positive(t, pad)
	return head + strings.Repeat("a", pad/2) + mid + strings.Repeat("b", pad-pad/2) + tail
}

// storedDeadLetters decodes the dead letters the dead-letter queue holds
// (not the refused sends): body, attributes and reason of each.
func (b *bundle) storedDeadLetters(t *testing.T) []storedLetter {
	t.Helper()
	var out []storedLetter
	for _, m := range b.wire.Messages(b.dlqURL) {
		var r redrive.Reason
		if a, ok := m.MsgAttrs[redrive.AttrReason]; ok { // none in a letter moved without a reason
			require.NoError(t, json.Unmarshal([]byte(aws.ToString(a.StringValue)), &r))
		}
		size := len(m.Body)
		for name, a := range m.MsgAttrs {
			size += len(name) + len(a.DataType) + len(aws.ToString(a.StringValue)) + len(a.BinaryValue)
		}
		out = append(out, storedLetter{body: m.Body, attrs: slices.Sorted(maps.Keys(m.MsgAttrs)), size: size, reason: r})
	}
	return out
}

type storedLetter struct {
	body   string
	attrs  []string
	size   int // as SQS counts it: body and attributes' names, types and values
	reason redrive.Reason
}

// TestHandleNearMaxSizeMessages: a message at or near SQS's 1 MiB that
// fails permanently leaves the queue on its first receive with its reason
// and its whole body; one above notification.MaxMessageBytes is not
// attempted. When the dead letter would exceed the dead-letter queue's
// 1 MiB the reason shrinks, never the body: first the original's
// attributes go (their names stay), then all of the reason but its
// outcome, class and ids; when even that does not fit, the message goes
// as it came, with no reason (that is in its log line), counted.
func TestHandleNearMaxSizeMessages(t *testing.T) {
	t.Parallel()

	const (
		full     = "full"     // the whole reason, the original's attributes kept
		noAttrs  = "noAttrs"  // the original's attributes left out, their names in the reason
		shortest = "shortest" // outcome, class and ids only
		bare     = "bare"     // as it came: the body and the producer's attributes, no reason
	)
	tests := []struct {
		name   string
		size   int
		attrs  int // bytes of message attributes
		binary bool
		sent   bool
		class  delivery.Class
		letter string
		tries  int // SendMessage calls: a step that would change nothing is not tried
	}{
		{name: "at MaxMessageBytes, refused for good", size: notification.MaxMessageBytes, sent: true, class: "webhook_gone", letter: full},
		{name: "body and attributes at MaxMessageBytes", size: notification.MaxMessageBytes - 4096, attrs: 4096, sent: true, class: "webhook_gone", letter: full},
		{name: "one byte over", size: notification.MaxMessageBytes + 1, class: processor.ClassMessageTooLarge, letter: full},
		{name: "attributes push it over", size: notification.MaxMessageBytes - 100, attrs: 4096, class: processor.ClassMessageTooLarge, letter: full},
		{name: "an attribute's name and type count", size: notification.MaxMessageBytes - 4096 + 1, attrs: 4096, class: processor.ClassMessageTooLarge, letter: full},
		{name: "a binary attribute counts", size: notification.MaxMessageBytes - 100, attrs: 4096, binary: true, class: processor.ClassMessageTooLarge, letter: full},
		{name: "16 KiB of attributes at 1 MiB: they go, the body stays", size: notification.SQSMaxMessageBytes - 16384, attrs: 16384, class: processor.ClassMessageTooLarge, letter: noAttrs, tries: 2},
		{name: "binary attributes at 1 MiB", size: notification.SQSMaxMessageBytes - 2048, attrs: 2048, binary: true, class: processor.ClassMessageTooLarge, letter: noAttrs, tries: 2},
		{name: "500 bytes below 1 MiB: the shortest reason", size: notification.SQSMaxMessageBytes - 500, class: processor.ClassMessageTooLarge, letter: shortest, tries: 2},
		{name: "attributes and 450 bytes below 1 MiB: the shortest reason", size: notification.SQSMaxMessageBytes - 450 - 50, attrs: 50, class: processor.ClassMessageTooLarge, letter: shortest, tries: 3},
		{name: "1 MiB: as it came", size: notification.SQSMaxMessageBytes, class: processor.ClassMessageTooLarge, letter: bare, tries: 3},
		{name: "100 bytes below 1 MiB: as it came", size: notification.SQSMaxMessageBytes - 100, class: processor.ClassMessageTooLarge, letter: bare, tries: 3},
		{name: "attributes and 100 bytes below 1 MiB: as it came, with its attributes", size: notification.SQSMaxMessageBytes - 100 - 200, attrs: 200, class: processor.ClassMessageTooLarge, letter: bare, tries: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			id := "permanent-big"
			body := bigBody(t, id, tt.size)
			r := rec("m1", body, 1)
			switch {
			case tt.attrs > 0 && tt.binary:
				v := []byte(strings.Repeat("v", tt.attrs-len("trace")-len("Binary")))
				r.MessageAttributes = map[string]events.SQSMessageAttribute{"trace": {DataType: "Binary", BinaryValue: v}}
			case tt.attrs > 0:
				v := strings.Repeat("v", tt.attrs-len("trace")-len("String"))
				r.MessageAttributes = map[string]events.SQSMessageAttribute{"trace": {DataType: "String", StringValue: &v}}
			}

			resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
			require.NoError(t, err)
			require.Equal(t, boolInt(tt.sent), int(b.sends(id)))
			dl := b.storedDeadLetters(t)
			lines := b.logs.lines(t)
			require.Len(t, lines, 1)
			require.Len(t, b.wire.Requests("SendMessage"), max(tt.tries, 1))
			require.Empty(t, resp.BatchItemFailures, "it leaves the queue on its first receive")
			for _, l := range batchLines(t, b, now) {
				require.NotContains(t, l, metrics.DeadLettersTooLarge)
			}
			require.Len(t, dl, 1, "one dead letter")
			require.Equal(t, body, dl[0].body, "the body is kept whole")
			require.LessOrEqual(t, dl[0].size, notification.SQSMaxMessageBytes)
			if tt.letter == bare {
				require.Equal(t, tt.size+tt.attrs, dl[0].size, "the message as it came")
				wantAttrs := []string(nil)
				if tt.attrs > 0 {
					wantAttrs = []string{"trace"}
				}
				require.Equal(t, wantAttrs, dl[0].attrs, "the producer's attributes, no reason")
				require.Equal(t, "WARN", lines[0]["level"])
				require.Equal(t, string(processor.DeadLettered), lines[0]["outcome"])
				require.Equal(t, string(tt.class), lines[0]["error_class"], "the reason is in the log line")
				require.Contains(t, lines[0]["error"], "not attempted")
				require.EqualValues(t, 1, batchLines(t, b, now)["unknown/dead_lettered"][metrics.DeadLettersWithoutReason], "counted on the batch's metrics line (a message above MaxMessageBytes is not parsed)")
				return
			}
			for _, l := range batchLines(t, b, now) {
				require.NotContains(t, l, metrics.DeadLettersWithoutReason)
			}
			require.Equal(t, tt.class, dl[0].reason.ErrorClass)
			require.Equal(t, id, dl[0].reason.NotificationID)
			require.Equal(t, "permanent_failure", dl[0].reason.Outcome)
			require.Equal(t, "m1", dl[0].reason.SourceMessageID)
			switch tt.letter {
			case full:
				require.NotEmpty(t, dl[0].reason.SourceQueueARN)
				require.Empty(t, dl[0].reason.DroppedAttributes)
				if tt.attrs > 0 {
					require.Contains(t, dl[0].attrs, "trace")
				}
			case noAttrs:
				require.Equal(t, []string{"trace"}, dl[0].reason.DroppedAttributes)
				require.Equal(t, []string{redrive.AttrErrorClass, redrive.AttrReason}, dl[0].attrs)
				require.NotEmpty(t, dl[0].reason.SourceQueueARN, "the rest of the reason stays")
			case shortest:
				require.Contains(t, dl[0].reason.Error, "reason shortened")
				require.Empty(t, dl[0].reason.SourceQueueARN)
				require.Empty(t, dl[0].reason.Channel)
				require.Empty(t, dl[0].reason.DroppedAttributes)
				require.Equal(t, []string{redrive.AttrErrorClass, redrive.AttrReason}, dl[0].attrs)
			}
			if tt.class == processor.ClassMessageTooLarge && tt.letter != shortest {
				require.Contains(t, dl[0].reason.Error, "not attempted")
			}
		})
	}
}

// TestDeadLetterShrinksTheReasonStepByStep: against dead-letter queues of
// shrinking MaximumMessageSize, a dead letter gives up first the end of a
// long error and the overflow attributes, then the original's attributes,
// then all but the outcome, class and ids, never a byte of the body; one
// byte below the shortest, it is left to the redrive policy.
func TestDeadLetterShrinksTheReasonStepByStep(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("e", 1000)
	run := func(t *testing.T, limit int, attrs int) (*bundle, events.SQSMessage, events.SQSEventResponse) {
		t.Helper()
		b := setup(t, func(c *processor.Config) {
			c.Senders[notification.ChannelWebhook] = senderFunc(func(context.Context, *notification.Message) error {
				return delivery.Permanent("webhook_gone", errors.New("410 Gone: "+long))
			})
		})
		b.wire.AddQueue(b.dlqURL, map[string]string{"MaximumMessageSize": strconv.Itoa(limit)})
		r := rec("m1", webhookBody("permanent-shrink"), 1)
		r.MessageAttributes = map[string]events.SQSMessageAttribute{}
		v := strings.Repeat("v", 200)
		for i := range attrs {
			r.MessageAttributes[fmt.Sprint("a", i)] = events.SQSMessageAttribute{DataType: "String", StringValue: &v}
		}
		resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
		require.NoError(t, err)
		return b, r, resp
	}
	b, r, _ := run(t, notification.SQSMaxMessageBytes, 10)
	dl := b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Len(t, b.wire.Requests("SendMessage"), 1)
	require.Len(t, dl[0].reason.Error, len("410 Gone: ")+1000)
	require.Len(t, dl[0].reason.OverflowAttributes, 2)
	fullSize := dl[0].size

	b, _, _ = run(t, fullSize-1, 10)
	dl = b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Len(t, b.wire.Requests("SendMessage"), 2, "refused once")
	require.Equal(t, "410 Gone: "+long[:256-len("410 Gone: ")-len(delivery.Ellipsis)]+delivery.Ellipsis, dl[0].reason.Error, "a short error")
	require.Nil(t, dl[0].reason.OverflowAttributes)
	require.Equal(t, []string{"a8", "a9"}, dl[0].reason.DroppedAttributes)
	require.Len(t, dl[0].attrs, 10)
	shortErrSize := dl[0].size

	b, _, _ = run(t, shortErrSize-1, 10)
	dl = b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Len(t, b.wire.Requests("SendMessage"), 3)
	require.Len(t, dl[0].reason.DroppedAttributes, 10)
	require.Len(t, dl[0].attrs, 2)
	noAttrSize := dl[0].size

	b, r, _ = run(t, noAttrSize-1, 10)
	dl = b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Len(t, b.wire.Requests("SendMessage"), 4)
	require.Equal(t, r.Body, dl[0].body)
	require.Contains(t, dl[0].reason.Error, "reason shortened")
	require.Equal(t, delivery.Class("webhook_gone"), dl[0].reason.ErrorClass)
	require.Equal(t, "permanent_failure", dl[0].reason.Outcome)
	require.Equal(t, "permanent-shrink", dl[0].reason.NotificationID)
	require.Equal(t, 1, dl[0].reason.Attempts)
	require.Less(t, dl[0].size-len(r.Body), 512, "a few hundred bytes beside the body")
	shortestSize := dl[0].size

	// Ten attributes of 200 bytes are more than the shortest reason: the
	// message as it came does not fit either. It is left to the redrive
	// policy, untouched, counted.
	b, _, resp := run(t, shortestSize-1, 10)
	require.Empty(t, b.storedDeadLetters(t))
	require.Len(t, b.wire.Requests("SendMessage"), 5, "the message as it came is tried last")
	require.Equal(t, []string{"m1"}, failures(resp))
	require.Empty(t, b.wire.Requests("ChangeMessageVisibilityBatch"), "untouched: it comes back after the queue's visibility timeout")
	line := b.logs.lines(t)[0]
	require.Equal(t, "ERROR", line["level"])
	require.Contains(t, line["sqs_error"], "redrive policy")
	require.EqualValues(t, 1, batchLines(t, b, now)["webhook/failed"][metrics.DeadLettersTooLarge])

	// Without attributes a long error alone is cut first.
	b, _, _ = run(t, notification.SQSMaxMessageBytes, 0)
	dl = b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	b, _, _ = run(t, dl[0].size-1, 0)
	dl = b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Len(t, b.wire.Requests("SendMessage"), 2)
	require.Equal(t, "410 Gone: "+long[:256-len("410 Gone: ")-len(delivery.Ellipsis)]+delivery.Ellipsis, dl[0].reason.Error)
	require.NotEmpty(t, dl[0].reason.SourceQueueARN, "not the shortest reason")
}

// A body may spell, as JSON escapes, characters SQS refuses in a message
// attribute (U+FFFE, U+FFFF: "the same restrictions on the content as the
// message body"); the reason names them, in a member's path, and is sent
// with them escaped: the dead letter keeps its full reason, not the
// shortest one for a refusal that was no matter of size.
func TestDeadLetterReasonOfCharactersSQSRefuses(t *testing.T) {
	t.Parallel()
	for _, name := range []string{`\uffff`, `\ufffe`, `x\uffff\ufffey`} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			body := `{"version":1,"id":"odd-member","channel":"webhook","` + name + `":1,"webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`
			r := rec("m1", body, 1)
			resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
			require.NoError(t, err)
			require.Empty(t, failures(resp))
			dl := b.storedDeadLetters(t)
			require.Len(t, dl, 1)
			require.Len(t, b.wire.Requests("SendMessage"), 1, "not refused")
			require.Equal(t, delivery.ClassInvalidMessage, dl[0].reason.ErrorClass)
			var want string
			require.NoError(t, json.Unmarshal([]byte(`"`+name+`"`), &want))
			require.Contains(t, dl[0].reason.Error, want+": unknown field", "the full reason")
			require.Equal(t, body, dl[0].body)
		})
	}
}
