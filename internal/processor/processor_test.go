package processor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/notification"
)

// senderFunc lets a test decide each delivery's result by notification id.
type senderFunc func(ctx context.Context, m *notification.Message) error

func (f senderFunc) Send(ctx context.Context, m *notification.Message) error { return f(ctx, m) }

type bundle struct {
	wire   *sqstest.Server
	dlqURL string
	p      *processor.Processor
	logs   *syncBuffer
	sent   *sync.Map // notification id → attempts
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines returns the record lines ("notification"), after checking that
// every line written is CloudWatch Embedded Metric Format.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		switch m["msg"] {
		case "batch":
			require.NoError(t, metrics.Validate(sc.Bytes(), time.Time{}), "%s", sc.Bytes())
		case "notification":
			require.NotContains(t, m, "_aws", "metrics are per batch, not per record")
			out = append(out, m)
		}
	}
	return out
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// setup builds a processor whose senders answer by id: "ok…" delivered,
// "transient…" a 503, "limited…" a 429 with Retry-After 5 min,
// "permanent…" a 410.
func setup(t *testing.T, mutate func(*processor.Config)) *bundle {
	t.Helper()
	wire, client := newSQSWire(t)
	b := &bundle{wire: wire, logs: &syncBuffer{}, sent: &sync.Map{}}
	send := senderFunc(func(_ context.Context, m *notification.Message) error {
		n, _ := b.sent.LoadOrStore(m.ID, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		switch {
		case hasPrefix(m.ID, "transient"):
			return delivery.Transient("webhook_http_5xx", errors.New("503 Service Unavailable"))
		case hasPrefix(m.ID, "limited"):
			return &delivery.TransientError{Class: "webhook_http_429", RetryAfter: 5 * time.Minute, Err: errors.New("429")}
		case hasPrefix(m.ID, "permanent"):
			return delivery.Permanent("webhook_gone", errors.New("410 Gone"))
		}
		return nil
	})
	cfg := processor.Config{
		QueueURL:           "https://sqs.us-east-1.amazonaws.com/123456789012/herald",
		DeadLetterQueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq",
		MaxReceiveCount:    5,
		Backoff:            backoff.Policy{Base: 10 * time.Second, Cap: time.Hour, Rand: func() float64 { return 0 }},
		Senders: map[notification.Channel]processor.Sender{
			notification.ChannelWebhook: send,
			notification.ChannelEmail:   send,
		},
		// DEBUG: every line has sqs_message_id, which the tests key on
		// (log_test.go checks the compact lines of INFO).
		Logger: slog.New(slog.NewJSONHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    func() time.Time { return now },
		// As the deliver function's: a processor that can pause reports
		// Paused 0 (none of these senders asks for a pause).
		Pauser: pauserFunc(func(redrive.Queue, string, error) error { return nil }),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	wire.AddQueue(cfg.QueueURL, nil)
	b.dlqURL = wire.AddQueue(cfg.DeadLetterQueueURL, nil)
	p, err := processor.New(client, cfg)
	require.NoError(t, err)
	b.p = p
	return b
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func webhookBody(id string) string {
	return fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`, id)
}

func rec(msgID, body string, receiveCount int) events.SQSMessage {
	return events.SQSMessage{
		MessageId:      msgID,
		ReceiptHandle:  "rh-" + msgID,
		Body:           body,
		EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:herald",
		Attributes: map[string]string{
			"ApproximateReceiveCount": strconv.Itoa(receiveCount),
			"SentTimestamp":           "1764500000000",
		},
	}
}

func failures(resp events.SQSEventResponse) []string {
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

func TestHandleOutcomes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	expired, err := os.ReadFile("../../testdata/cases/webhook-expired.json")
	require.NoError(t, err)
	ev := events.SQSEvent{Records: []events.SQSMessage{
		rec("m-ok", webhookBody("ok-1"), 1),
		rec("m-expired", string(expired), 1),
		rec("m-transient", webhookBody("transient-1"), 3),
		rec("m-limited", webhookBody("limited-1"), 1),
		rec("m-permanent", webhookBody("permanent-1"), 1),
		rec("m-invalid", `{"version":1,"id":"x"`, 1),
		rec("m-last", webhookBody("transient-last"), 5),
	}}

	resp, err := b.p.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m-transient", "m-limited"}, failures(resp))

	_, tried := b.sent.Load("evt_stale_0001")
	require.False(t, tried, "an expired notification is never sent")

	// One visibility call sets both delays: 10 s·2² for receive 3, and the
	// 429's Retry-After over the 10 s of receive 1.
	vis := b.wire.Requests("ChangeMessageVisibilityBatch")
	require.Len(t, vis, 1)
	var in struct {
		QueueUrl string
		Entries  []struct {
			ReceiptHandle     string
			VisibilityTimeout int
		}
	}
	require.NoError(t, json.Unmarshal(vis[0], &in))
	require.Equal(t, "https://sqs.us-east-1.amazonaws.com/123456789012/herald", in.QueueUrl)
	delays := map[string]int{}
	for _, e := range in.Entries {
		delays[e.ReceiptHandle] = e.VisibilityTimeout
	}
	require.Equal(t, map[string]int{"rh-m-transient": 40, "rh-m-limited": 300}, delays)

	// Three dead letters, each with the original body and its reason.
	reasons := map[string]redrive.Reason{}
	for _, raw := range b.wire.Requests("SendMessage") {
		var sm struct {
			QueueUrl          string
			MessageBody       string
			MessageAttributes map[string]struct{ DataType, StringValue string }
		}
		require.NoError(t, json.Unmarshal(raw, &sm))
		require.Equal(t, "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq", sm.QueueUrl)
		var r redrive.Reason
		require.NoError(t, json.Unmarshal([]byte(sm.MessageAttributes[redrive.AttrReason].StringValue), &r))
		require.Equal(t, string(r.ErrorClass), sm.MessageAttributes[redrive.AttrErrorClass].StringValue)
		for _, m := range ev.Records {
			if m.MessageId == r.SourceMessageID {
				require.Equal(t, m.Body, sm.MessageBody, "the original body is kept")
			}
		}
		reasons[r.SourceMessageID] = r
	}
	require.Len(t, reasons, 3)
	require.Equal(t, "permanent_failure", reasons["m-permanent"].Outcome)
	require.Equal(t, delivery.Class("webhook_gone"), reasons["m-permanent"].ErrorClass)
	require.Equal(t, "permanent-1", reasons["m-permanent"].NotificationID)
	require.Equal(t, delivery.ClassInvalidMessage, reasons["m-invalid"].ErrorClass)
	require.Contains(t, reasons["m-invalid"].Error, "invalid JSON")
	require.Equal(t, "attempts_exhausted", reasons["m-last"].Outcome)
	require.Equal(t, 5, reasons["m-last"].Attempts)
	require.Equal(t, delivery.Class("webhook_http_5xx"), reasons["m-last"].ErrorClass)
	require.Equal(t, int64(1764500000000), reasons["m-last"].OriginalSentTimestamp)
	require.Equal(t, "2026-11-30T12:00:00.000Z", reasons["m-last"].FailedAt)

	// One log line per record, with its outcome.
	outcomes := map[string]string{}
	for _, l := range b.logs.lines(t) {
		outcomes[l["sqs_message_id"].(string)] = l["outcome"].(string)
	}
	require.Equal(t, map[string]string{
		"m-ok": "delivered", "m-expired": "dropped", "m-transient": "retry", "m-limited": "retry",
		"m-permanent": "dead_lettered", "m-invalid": "dead_lettered", "m-last": "dead_lettered",
	}, outcomes)
}

func TestHandleAllDeliveredMakesNoSQSCall(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("a", webhookBody("ok-a"), 1), rec("b", webhookBody("ok-b"), 2),
	}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Empty(t, b.wire.Requests("ChangeMessageVisibilityBatch"))
	require.Empty(t, b.wire.Requests("SendMessage"))
}

func TestHandleChunksVisibilityChangesByTen(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	var ev events.SQSEvent
	for i := range 23 {
		ev.Records = append(ev.Records, rec(fmt.Sprint("m", i), webhookBody(fmt.Sprint("transient-", i)), 1))
	}
	resp, err := b.p.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, resp.BatchItemFailures, 23)
	require.Len(t, b.wire.Requests("ChangeMessageVisibilityBatch"), 3, "⌈23/10⌉ calls")
}

func TestHandleVisibilityEntryFailureStaysFailed(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.FailReceiptHandle("rh-m1")
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("transient-1"), 1), rec("m2", webhookBody("transient-2"), 1), rec("m3", webhookBody("ok-3"), 1),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m2"}, failures(resp))
	byID := map[string]map[string]any{}
	for _, l := range b.logs.lines(t) {
		byID[l["sqs_message_id"].(string)] = l
	}
	require.Equal(t, "failed", byID["m1"]["outcome"])
	require.Contains(t, byID["m1"]["sqs_error"], "ReceiptHandleIsInvalid")
	require.Equal(t, "retry", byID["m2"]["outcome"])
	require.Equal(t, "delivered", byID["m3"]["outcome"])
}

func TestHandleDeadLetterMoveFailureLeavesRecordToRedrive(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.FailAction("SendMessage")
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("permanent-1"), 1), rec("m2", "not json", 1),
	}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m1", "m2"}, failures(resp), "not acknowledged: the redrive policy still has them")
	require.Empty(t, b.wire.Requests("ChangeMessageVisibilityBatch"))
}

func TestHandleKeepsOriginalAttributesWithinTheLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	r := rec("m1", webhookBody("permanent-1"), 1)
	r.MessageAttributes = map[string]events.SQSMessageAttribute{}
	for i := range 10 {
		v := fmt.Sprint("v", i)
		r.MessageAttributes[fmt.Sprint("a", i)] = events.SQSMessageAttribute{DataType: "String", StringValue: &v}
	}
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
	require.NoError(t, err)
	sends := b.wire.Requests("SendMessage")
	require.Len(t, sends, 1)
	var sm struct {
		MessageAttributes map[string]struct{ StringValue string }
	}
	require.NoError(t, json.Unmarshal(sends[0], &sm))
	require.Len(t, sm.MessageAttributes, 10, "the SQS limit")
	require.Equal(t, "v0", sm.MessageAttributes["a0"].StringValue)
	var reason redrive.Reason
	require.NoError(t, json.Unmarshal([]byte(sm.MessageAttributes[redrive.AttrReason].StringValue), &reason))
	require.Len(t, reason.OverflowAttributes, 2)
	require.Equal(t, "v9", *reason.OverflowAttributes["a9"].StringValue, "nothing is lost")
}

func TestHandleExpiredContextStartsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	resp, err := b.p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("ok-1"), 1), rec("m2", webhookBody("ok-2"), 1),
	}})
	require.NoError(t, err, "never an error for the whole batch")
	require.ElementsMatch(t, []string{"m1", "m2"}, failures(resp))
	_, tried := b.sent.Load("ok-1")
	require.False(t, tried)
}

// TestHandleBoundsConcurrency: at most Concurrency sends at once, and that
// many. The first sends wait until three are in flight (a gate, not a sleep
// that a loaded machine may outlast before the next send starts), or 2 s
// when fewer ever are; each then stays 20 ms more, time for a fourth to
// start if the bound let one.
func TestHandleBoundsConcurrency(t *testing.T) {
	t.Parallel()
	var inFlight, peak atomic.Int32
	three := make(chan struct{})
	var once sync.Once
	slow := senderFunc(func(context.Context, *notification.Message) error {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n >= 3 {
			once.Do(func() { close(three) })
		}
		fallback := time.NewTimer(2 * time.Second)
		select {
		case <-three:
		case <-fallback.C:
		}
		fallback.Stop()
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		return nil
	})
	b := setup(t, func(c *processor.Config) {
		c.Concurrency = 3
		c.Senders = map[notification.Channel]processor.Sender{notification.ChannelWebhook: slow}
	})
	var ev events.SQSEvent
	for i := range 12 {
		ev.Records = append(ev.Records, rec(fmt.Sprint("m", i), webhookBody(fmt.Sprint("ok-", i)), 1))
	}
	resp, err := b.p.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Equal(t, int32(3), peak.Load())
}

func TestNewRejectsIncompleteConfig(t *testing.T) {
	t.Parallel()
	_, client := newSQSWire(t)
	_, err := processor.New(client, processor.Config{QueueURL: "q", DeadLetterQueueURL: "d"})
	require.ErrorContains(t, err, "MaxReceiveCount 0")
	_, err = processor.New(client, processor.Config{DeadLetterQueueURL: "d", MaxReceiveCount: 3})
	require.ErrorContains(t, err, "QueueURL is required")
}

func TestHandleRecoversFromASenderPanic(t *testing.T) {
	t.Parallel()
	boom := senderFunc(func(_ context.Context, m *notification.Message) error {
		if hasPrefix(m.ID, "panics") {
			var nilMap map[string]int
			nilMap["x"] = 1
		}
		return nil
	})
	b := setup(t, func(c *processor.Config) {
		c.Senders = map[notification.Channel]processor.Sender{notification.ChannelWebhook: boom}
	})
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("panics-1"), 1), rec("m2", webhookBody("ok-2"), 1), rec("m3", webhookBody("panics-3"), 5),
	}})
	require.NoError(t, err)
	require.Equal(t, []string{"m1"}, failures(resp), "the panicking record is retried, the others are settled")
	sends := b.wire.Requests("SendMessage")
	require.Len(t, sends, 1, "on its last receive the panicking record is dead-lettered")
	require.Contains(t, string(sends[0]), string(processor.ClassPanic))
}

func TestHandleNotStartedOnLastReceiveWithNoTimeForTheMoveStaysForRedrive(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	resp, err := b.p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{rec("m1", webhookBody("ok-1"), 5)}})
	require.NoError(t, err)
	// The expired context also fails the dead-letter send, so the record
	// stays with the redrive policy; what matters is the attempt and no delivery.
	require.Equal(t, []string{"m1"}, failures(resp))
	_, tried := b.sent.Load("ok-1")
	require.False(t, tried)
	lines := b.logs.lines(t)
	require.Len(t, lines, 1)
	require.Equal(t, "failed", lines[0]["outcome"])
	require.Equal(t, string(delivery.ClassDeadline), lines[0]["error_class"])
	require.Contains(t, lines[0]["sqs_error"], "send to dead-letter queue")
}

func TestHandleHeraldNamedProducerAttributesCostNoSlot(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	r := rec("m1", webhookBody("permanent-1"), 1)
	r.MessageAttributes = map[string]events.SQSMessageAttribute{}
	for _, name := range []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", redrive.AttrReason, "z"} {
		v := "v-" + name
		r.MessageAttributes[name] = events.SQSMessageAttribute{DataType: "String", StringValue: &v}
	}
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
	require.NoError(t, err)
	var sm struct {
		MessageAttributes map[string]struct{ StringValue string }
	}
	require.NoError(t, json.Unmarshal(b.wire.Requests("SendMessage")[0], &sm))
	require.Equal(t, "v-z", sm.MessageAttributes["z"].StringValue, "8 producer attributes fit beside herald's 2")
	var reason redrive.Reason
	require.NoError(t, json.Unmarshal([]byte(sm.MessageAttributes[redrive.AttrReason].StringValue), &reason))
	require.Equal(t, "v-"+redrive.AttrReason, *reason.OverflowAttributes[redrive.AttrReason].StringValue, "the producer's own herald.reason is kept, not trusted")
}

func TestHandleOversizedDeadLetterKeepsBodyAndReason(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	r := rec("m1", webhookBody("permanent-1"), 1)
	r.MessageAttributes = map[string]events.SQSMessageAttribute{}
	big := strings.Repeat("x", 2000)
	for i := range 10 {
		r.MessageAttributes[fmt.Sprint("a", i)] = events.SQSMessageAttribute{DataType: "String", StringValue: &big}
	}
	// Room for the body, the reason and 8 of the attributes, not for the
	// 2 overflowing ones inside the reason as well.
	b.wire.AddQueue(b.dlqURL, map[string]string{"MaximumMessageSize": fmt.Sprint(8*2000 + 2000)})
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	sends := b.wire.Requests("SendMessage")
	require.Len(t, sends, 2, "refused once, then sent smaller")
	var sm struct {
		MessageBody       string
		MessageAttributes map[string]struct{ StringValue string }
	}
	require.NoError(t, json.Unmarshal(sends[1], &sm))
	require.Equal(t, r.Body, sm.MessageBody)
	var reason redrive.Reason
	require.NoError(t, json.Unmarshal([]byte(sm.MessageAttributes[redrive.AttrReason].StringValue), &reason))
	require.Equal(t, []string{"a8", "a9"}, reason.DroppedAttributes)
	require.Equal(t, delivery.Class("webhook_gone"), reason.ErrorClass)

	// With room for nothing but the body and a short reason, the original's
	// attributes go too, and their names stay.
	b2 := setup(t, nil)
	b2.wire.AddQueue(b2.dlqURL, map[string]string{"MaximumMessageSize": "2000"})
	resp, err = b2.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	sends = b2.wire.Requests("SendMessage")
	require.Len(t, sends, 3)
	sm.MessageAttributes = nil
	require.NoError(t, json.Unmarshal(sends[2], &sm))
	require.Len(t, sm.MessageAttributes, 2)
	require.NoError(t, json.Unmarshal([]byte(sm.MessageAttributes[redrive.AttrReason].StringValue), &reason))
	require.Len(t, reason.DroppedAttributes, 10)
}
