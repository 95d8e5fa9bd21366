package processor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// TestDeadLetterToARegisteredEndpointKeepsSixOfTheOriginalsAttributes: a
// dead letter of a delivery to a registered endpoint carries herald's two
// attributes and the two of its subject (tenant, endpoint), so it keeps 6
// of the original's 10 attributes, the first by name, and the other 4 go
// into the reason's overflow: the SQS limit of 10, met on the first send.
func TestDeadLetterToARegisteredEndpointKeepsSixOfTheOriginalsAttributes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const endpoint = "ep_0123456789abcdefghjkmnpqrs"
	r := rec("m1", `{"version":1,"id":"permanent-ep","channel":"webhook","tenant":"acme","webhook":{"endpoint":"`+endpoint+`","event_type":"t","payload":{}}}`, 1)
	r.MessageAttributes = map[string]events.SQSMessageAttribute{}
	for i := range 10 {
		v := fmt.Sprint("v", i)
		r.MessageAttributes[fmt.Sprint("a", i)] = events.SQSMessageAttribute{DataType: "String", StringValue: &v}
	}
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, b.wire.Requests("SendMessage"), 1, "fits the SQS limit on the first send")
	dl := b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Equal(t, []string{"a0", "a1", "a2", "a3", "a4", "a5", redrive.AttrEndpoint, redrive.AttrErrorClass, redrive.AttrReason, redrive.AttrTenant},
		slices.Sorted(slices.Values(dl[0].attrs)))
	require.Empty(t, dl[0].reason.DroppedAttributes)
	require.Len(t, dl[0].reason.OverflowAttributes, 4)
	for _, name := range []string{"a6", "a7", "a8", "a9"} {
		require.Equal(t, "v"+name[1:], *dl[0].reason.OverflowAttributes[name].StringValue, name)
	}
}

// TestNewDefaultReserveIsTwoSeconds: with Config.Reserve unset, no
// delivery starts within 2 s of the invocation's deadline: a batch with
// 1.9 s left is retried at once (visibility 0, class deadline), unsent.
// (The deadline is real and always less than the reserve away: nothing
// here depends on how fast the test runs.)
func TestNewDefaultReserveIsTwoSeconds(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(1900*time.Millisecond))
	defer cancel()
	resp, err := b.p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{rec("m1", webhookBody("ok-1"), 1)}})
	require.NoError(t, err)
	require.Equal(t, []string{"m1"}, failures(resp))
	require.Zero(t, b.sends("ok-1"), "not started inside the reserve")
	l := logLines(t, b)["m1"]
	require.Equal(t, "retry", l["outcome"])
	require.Equal(t, string(delivery.ClassDeadline), l["error_class"])
	require.Equal(t, 0.0, l["delay_seconds"])
}

// fakeTracer records what it is told of each record and samples the
// notifications whose id is in sampled.
type fakeTracer struct {
	sampled map[string]bool
	mu      sync.Mutex
	started map[string]processor.TracedRecord // by SQS message id
}

var sampledTrace = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}

func (f *fakeTracer) StartRecord(ctx context.Context, rec processor.TracedRecord) (context.Context, trace.Span) {
	f.mu.Lock()
	f.started[rec.Message.MessageId] = rec
	f.mu.Unlock()
	cfg := trace.SpanContextConfig{TraceID: sampledTrace, SpanID: trace.SpanID{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}}
	if f.sampled[rec.NotificationID] {
		cfg.TraceFlags = trace.FlagsSampled
	}
	span := trace.SpanFromContext(trace.ContextWithSpanContext(ctx, trace.NewSpanContext(cfg)))
	return trace.ContextWithSpan(ctx, span), span
}

func (f *fakeTracer) EndRecord(trace.Span, processor.RecordEnd) {}

// TestTracedRecordChannel: a Tracer is told the notification's channel,
// also on a queue of every channel, and the queue's for a body that does
// not parse.
func TestTracedRecordChannel(t *testing.T) {
	t.Parallel()
	tr := &fakeTracer{started: map[string]processor.TracedRecord{}}
	b := setup(t, func(c *processor.Config) { c.Tracer = tr })
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m1", webhookBody("ok-1"), 1)}})
	require.NoError(t, err)
	require.Equal(t, notification.ChannelWebhook, tr.started["m1"].Channel, "the notification's, on a queue of every channel")
	require.Equal(t, "ok-1", tr.started["m1"].NotificationID)

	tr = &fakeTracer{started: map[string]processor.TracedRecord{}}
	b = setup(t, func(c *processor.Config) {
		c.Tracer = tr
		c.QueueURL, c.DeadLetterQueueURL = "", ""
		c.Queues = []redrive.Queue{{Channel: notification.ChannelEmail, URL: emailQueue, DeadLetterURL: emailDLQ}}
	})
	b.wire.AddQueue(emailQueue, nil)
	b.wire.AddQueue(emailDLQ, nil)
	_, err = b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{from(emailARN, rec("m2", `{"version":1,"id":"bad-2"`, 1))}})
	require.NoError(t, err)
	require.Equal(t, notification.ChannelEmail, tr.started["m2"].Channel, "an invalid body: its queue's channel")
}

// infoLogged runs ev through a processor logging at INFO whose config
// mutate adjusts, and returns every line written.
func infoLogged(t *testing.T, mutate func(*processor.Config), ev events.SQSEvent) []map[string]any {
	t.Helper()
	var buf syncBuffer
	b := setup(t, func(c *processor.Config) {
		c.Logger = app.LoggerTo(&buf, slog.LevelInfo)
		if mutate != nil {
			mutate(c)
		}
	})
	for _, u := range []string{emailQueue, emailDLQ, webhookQueue, webhookDLQ} {
		b.wire.AddQueue(u, nil)
	}
	_, err := b.p.Handle(context.Background(), ev)
	require.NoError(t, err)
	raw := []byte(buf.String())
	listedIn(t, raw) // no record both listed and with a line of its own
	var out []map[string]any
	for line := range bytes.Lines(raw) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m), "%s", line)
		out = append(out, m)
	}
	return out
}

// ownLines is the "notification" lines of lines by notification id.
func ownLines(lines []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, l := range lines {
		if l["msg"] == processor.LineNotification {
			out[l["id"].(string)] = l
		}
	}
	return out
}

// listedIDs is the notification ids the batch lines list.
func listedIDs(t *testing.T, lines []map[string]any) []string {
	t.Helper()
	var ids []string
	for _, l := range lines {
		if l["msg"] != processor.LineBatch || l[processor.MemberDelivered] == nil {
			continue
		}
		for _, e := range l[processor.MemberDelivered].([]any) {
			ids = append(ids, e.(map[string]any)["id"].(string))
		}
	}
	slices.Sort(ids)
	return ids
}

// TestSampledRecordHasItsOwnLineWithItsTraceID: at INFO a clean delivery
// whose span was sampled is not listed: its own line carries its trace_id.
// One not sampled is listed, and no line has a trace_id for it.
func TestSampledRecordHasItsOwnLineWithItsTraceID(t *testing.T) {
	t.Parallel()
	tr := &fakeTracer{sampled: map[string]bool{"ok-sampled": true}, started: map[string]processor.TracedRecord{}}
	lines := infoLogged(t, func(c *processor.Config) { c.Tracer = tr }, events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("ok-sampled"), 1), rec("m2", webhookBody("ok-plain"), 1),
	}})
	require.Equal(t, []string{"ok-plain"}, listedIDs(t, lines))
	own := ownLines(lines)
	require.Len(t, own, 1)
	require.Equal(t, "delivered", own["ok-sampled"]["outcome"])
	require.Equal(t, sampledTrace.String(), own["ok-sampled"]["trace_id"])
	for _, l := range lines {
		if l["id"] != "ok-sampled" {
			require.NotContains(t, l, "trace_id", "only the sampled record's line: %v", l)
		}
	}
}

// TestDebugLineHasNoTraceIDWhenNotSampled: at DEBUG every record has a
// line; one whose span was not sampled has no trace_id.
func TestDebugLineHasNoTraceIDWhenNotSampled(t *testing.T) {
	t.Parallel()
	tr := &fakeTracer{sampled: map[string]bool{"ok-sampled": true}, started: map[string]processor.TracedRecord{}}
	b := setup(t, func(c *processor.Config) { c.Tracer = tr })
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("ok-sampled"), 1), rec("m2", webhookBody("ok-plain"), 1),
	}})
	require.NoError(t, err)
	lines := logLines(t, b)
	require.Equal(t, sampledTrace.String(), lines["m1"]["trace_id"])
	require.NotContains(t, lines["m2"], "trace_id")
}

// TestChannelQueueListsItsOwnChannelsCleanDeliveries: at INFO, on a
// channel's queue, a clean delivery of that channel is listed by its batch
// line; one of another channel (a producer's misroute, delivered where it
// is) gets its own line with queue_channel, and is not listed.
func TestChannelQueueListsItsOwnChannelsCleanDeliveries(t *testing.T) {
	t.Parallel()
	lines := infoLogged(t, func(c *processor.Config) {
		c.QueueURL, c.DeadLetterQueueURL = "", ""
		c.Queues = []redrive.Queue{
			{Channel: notification.ChannelEmail, URL: emailQueue, DeadLetterURL: emailDLQ},
			{Channel: notification.ChannelWebhook, URL: webhookQueue, DeadLetterURL: webhookDLQ},
		}
	}, events.SQSEvent{Records: []events.SQSMessage{
		from(webhookARN, rec("m1", webhookBody("ok-own"), 1)),
		from(webhookARN, rec("m2", emailOf("ok-misrouted"), 1)),
	}})
	require.Equal(t, []string{"ok-own"}, listedIDs(t, lines))
	own := ownLines(lines)
	require.Len(t, own, 1)
	require.Equal(t, "delivered", own["ok-misrouted"]["outcome"])
	require.Equal(t, "email", own["ok-misrouted"]["channel"])
	require.Equal(t, "webhook", own["ok-misrouted"]["queue_channel"])
}

// TestBatchLineListsNothingWithoutACleanDelivery: a batch line none of
// whose records is on the clean path has no MemberDelivered member (not
// an empty or null one).
func TestBatchLineListsNothingWithoutACleanDelivery(t *testing.T) {
	t.Parallel()
	lines := infoLogged(t, nil, events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("transient-1"), 1),
		rec("m2", webhookBody("ok-again"), 2),
	}})
	var batches int
	for _, l := range lines {
		if l["msg"] != processor.LineBatch {
			continue
		}
		batches++
		require.NotContains(t, l, processor.MemberDelivered, "%v", l)
	}
	require.Equal(t, 2, batches, "a line of retries and one of a delivery after a retry")
}

// TestPausedZeroExactlyAQuietPeriodLater: a queue's batch exactly
// processor.PausedQuiet after its last one here reports Paused 0 again.
// (The clock is the processor's, read for the metrics' time only.)
func TestPausedZeroExactlyAQuietPeriodLater(t *testing.T) {
	t.Parallel()
	var at time.Time
	var logs syncBuffer
	b := setup(t, func(c *processor.Config) {
		c.Logger = app.LoggerTo(&logs, slog.LevelInfo)
		c.Now = func() time.Time { return at }
	})
	paused := func(after time.Duration, id string) bool {
		at = now.Add(after)
		start := len(logs.String())
		_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m-"+id, webhookBody(id), 1)}})
		require.NoError(t, err)
		return slices.Contains(definedMetrics(t, &logs, start), metrics.Paused)
	}
	require.True(t, paused(0, "ok-1"), "the queue's first batch here")
	require.True(t, paused(processor.PausedQuiet, "ok-2"), "exactly a quiet period later")
	require.False(t, paused(processor.PausedQuiet+time.Second, "ok-3"), "a second later")
}
