package processor_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
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
		var r processor.Reason
		require.NoError(t, json.Unmarshal([]byte(sm.MessageAttributes[processor.AttrReason].StringValue), &r))
		out = append(out, deadLetter{body: sm.MessageBody, dedup: sm.MessageDeduplicationId, reason: r})
	}
	return out
}

type deadLetter struct {
	body, dedup string
	reason      processor.Reason
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

// TestHandleNearMaxSizeMessages: a message at or near SQS's 1 MiB that
// fails permanently leaves the queue on its first receive with its reason,
// its dead letter fitting the dead-letter queue's 1 MiB as SQS counts it;
// one above notification.MaxMessageBytes is not attempted and its dead
// letter keeps the head of its body, its size and digest.
func TestHandleNearMaxSizeMessages(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name      string
		size      int
		attrs     int // bytes of message attributes
		sent      bool
		class     delivery.Class
		truncated bool
		binary    bool // the attribute is Binary, not String
		runeAtCut bool // a two-byte character straddles MaxMessageBytes
		keptBytes int  // when set, the dead letter keeps exactly this many bytes of the body
	}{
		{name: "at MaxMessageBytes, refused for good", size: notification.MaxMessageBytes, sent: true, class: "webhook_gone"},
		{name: "body and attributes at MaxMessageBytes", size: notification.MaxMessageBytes - 4096, attrs: 4096, sent: true, class: "webhook_gone"},
		{name: "one byte over", size: notification.MaxMessageBytes + 1, class: processor.ClassMessageTooLarge, truncated: true},
		{name: "1 MiB", size: notification.SQSMaxMessageBytes, class: processor.ClassMessageTooLarge, truncated: true},
		{name: "attributes push it over", size: notification.MaxMessageBytes - 100, attrs: 4096, class: processor.ClassMessageTooLarge, truncated: true},
		{name: "an attribute's name and type count", size: notification.MaxMessageBytes - 4096 + 1, attrs: 4096, class: processor.ClassMessageTooLarge, truncated: true},
		{name: "a binary attribute counts", size: notification.MaxMessageBytes - 100, attrs: 4096, binary: true, class: processor.ClassMessageTooLarge, truncated: true},
		{name: "body at MaxMessageBytes, an attribute pushes it over: body kept whole", size: notification.MaxMessageBytes, attrs: 64, class: processor.ClassMessageTooLarge, truncated: true, keptBytes: notification.MaxMessageBytes},
		{name: "cut before a character that straddles the limit", size: notification.MaxMessageBytes + 10, runeAtCut: true, class: processor.ClassMessageTooLarge, truncated: true, keptBytes: notification.MaxMessageBytes - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			b.wire.AddQueue(b.dlqURL, map[string]string{"MaximumMessageSize": strconv.Itoa(notification.SQSMaxMessageBytes)})
			id := "permanent-big"
			body := bigBody(t, id, tt.size)
			if tt.runeAtCut {
				at := notification.MaxMessageBytes - 1
				require.Equal(t, "bb", body[at:at+2], "inside the html padding")
				body = body[:at] + "é" + body[at+2:]
			}
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
			require.Empty(t, resp.BatchItemFailures, "it leaves the queue on its first receive")
			require.Equal(t, boolInt(tt.sent), int(b.sends(id)))
			dl := b.deadLetters(t)
			require.Len(t, dl, 1, "one dead letter, sent once")
			require.Equal(t, tt.class, dl[0].reason.ErrorClass)
			require.Equal(t, id, dl[0].reason.NotificationID)
			if !tt.truncated {
				require.Equal(t, body, dl[0].body, "the body is kept whole")
				require.Zero(t, dl[0].reason.OriginalBodyBytes)
				return
			}
			require.Equal(t, body[:len(dl[0].body)], dl[0].body, "the head of the body")
			require.LessOrEqual(t, len(dl[0].body), notification.MaxMessageBytes)
			if tt.keptBytes > 0 {
				require.Len(t, dl[0].body, tt.keptBytes)
			}
			require.Equal(t, len(body), dl[0].reason.OriginalBodyBytes)
			sum := sha256.Sum256([]byte(body))
			require.Equal(t, hex.EncodeToString(sum[:]), dl[0].reason.OriginalBodySHA256)
			require.Contains(t, dl[0].reason.Error, "not attempted")
			if tt.attrs > 0 {
				require.Equal(t, []string{"trace"}, dl[0].reason.DroppedAttributes)
			}
		})
	}
}
