package processor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// batchLines returns the batch's metric lines, each checked against the
// EMF specification (metrics.Validate at the clock's time), keyed by
// "channel/outcome" (the line without outcome, the function's alone, by "").
func batchLines(t *testing.T, b *bundle, at time.Time) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader([]byte(b.logs.String())))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		if m["msg"] != "batch" {
			require.NotContains(t, m, "_aws", "%s", sc.Bytes())
			continue
		}
		require.NoError(t, metrics.Validate(sc.Bytes(), at), "%s", sc.Bytes())
		key := ""
		if m[metrics.DimOutcome] != nil {
			key = m[metrics.DimChannel].(string) + "/" + m[metrics.DimOutcome].(string)
		}
		require.NotContains(t, out, key, "one line per channel and outcome")
		out[key] = m
	}
	return out
}

// directives returns the line's MetricDirectives as dimension sets → metric
// names.
func directives(t *testing.T, line map[string]any) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, d := range line["_aws"].(map[string]any)["CloudWatchMetrics"].([]any) {
		d := d.(map[string]any)
		dims, _ := json.Marshal(d["Dimensions"])
		var names []string
		for _, m := range d["Metrics"].([]any) {
			names = append(names, m.(map[string]any)["Name"].(string))
		}
		out[string(dims)] = names
	}
	return out
}

// TestBatchLinesCarryEmbeddedMetrics checks the batch's EMF against the
// specification and the values it reports: one document per channel,
// outcome and error class, counts as one number, per-record values as
// arrays, the ages and receive count of deliveries after a retry only,
// and the function's Paused 0 on the first (the environment's first
// batch). A clock
// that moves 250 ms per reading makes every send take 250 ms.
func TestBatchLinesCarryEmbeddedMetrics(t *testing.T) {
	t.Parallel()
	var ticks atomic.Int64
	clock := func() time.Time { return now.Add(time.Duration(ticks.Add(1)) * 250 * time.Millisecond) }
	// One record at a time, so that no other record's clock reading falls
	// between a send's start and end.
	b := setup(t, func(c *processor.Config) { c.Now, c.Concurrency = clock, 1 })

	sent := now.Add(-90 * time.Second)
	created := `"created_at":"` + now.Add(-10*time.Minute).Format(time.RFC3339) + `",`
	delivered := rec("m-ok", `{"version":1,"id":"ok-1","channel":"webhook",`+created+`"webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`, 3)
	delivered.Attributes["SentTimestamp"] = strconv.FormatInt(sent.UnixMilli(), 10)
	delivered2 := rec("m-ok2", webhookBody("ok-2"), 1)
	delivered2.Attributes["SentTimestamp"] = strconv.FormatInt(sent.UnixMilli(), 10)
	ev := events.SQSEvent{Records: []events.SQSMessage{
		delivered,
		rec("m-gone", webhookBody("permanent-1"), 1),
		rec("m-503", webhookBody("transient-1"), 1),
		rec("m-503b", webhookBody("transient-2"), 2),
		rec("m-poison", `not json`, 1),
		delivered2,
	}}
	_, err := b.p.Handle(context.Background(), ev)
	require.NoError(t, err)

	lines := batchLines(t, b, clock())
	require.Len(t, lines, 4, "delivered, dead-lettered webhook, retried webhook, dead-lettered unknown")
	ok := lines["webhook/delivered"]
	require.NotNil(t, ok)
	require.Equal(t, metrics.FunctionDeliver, ok[metrics.DimFunction], "the first line carries the batch's own metrics")
	require.EqualValues(t, 0, ok[metrics.Paused], "a delivering function reports not paused")
	require.Equal(t, map[string][]string{
		`[["channel","outcome"]]`: {metrics.Notifications, metrics.DeliveryDuration, metrics.AgeAtDelivery, metrics.AgeSinceCreated, metrics.ReceiveCountAtDelivery},
		`[["function"]]`:          {metrics.Paused},
	}, directives(t, ok), "no error class: one set; the function's metrics in their own directive")
	require.EqualValues(t, 2, ok[metrics.Notifications], "a count is one number")
	require.Equal(t, []any{250.0, 250.0}, ok[metrics.DeliveryDuration], "one value per send, one clock step each")
	ages := ok[metrics.AgeAtDelivery].([]any)
	require.Len(t, ages, 1, "ok-2, delivered on its first receive, is the clean path: counted and timed only")
	for _, a := range ages {
		require.Greater(t, a.(float64), 90.0, "now − SentTimestamp, at least the 90 s before the batch")
		require.Less(t, a.(float64), 90.0+float64(ticks.Load())*0.25+0.001, "no more than the clock moved")
	}
	since := ok[metrics.AgeSinceCreated].([]any)
	require.Len(t, since, 1)
	require.InDelta(t, ages[0].(float64)+510, since[0], 0.011, "created 8.5 min before it was sent")
	require.Equal(t, []any{3.0}, ok[metrics.ReceiveCountAtDelivery])
	require.NotContains(t, ok, metrics.DeadLetters)
	require.NotContains(t, ok, metrics.DimErrorClass)

	gone := lines["webhook/dead_lettered"]
	require.Equal(t, "webhook_gone", gone[metrics.DimErrorClass])
	require.EqualValues(t, 1, gone[metrics.DeadLetters])
	require.EqualValues(t, 1, gone[metrics.Notifications])
	require.NotContains(t, gone, metrics.AgeAtDelivery, "age is measured at delivery only")
	require.NotContains(t, gone, metrics.Paused, "once per batch")
	require.Equal(t, map[string][]string{
		`[["channel","outcome"],["channel","error_class"]]`: {metrics.Notifications, metrics.DeliveryDuration, metrics.DeadLetters},
	}, directives(t, gone), "dead letters by class")

	retry := lines["webhook/retry"]
	require.EqualValues(t, 2, retry[metrics.Retries])
	require.EqualValues(t, 2, retry[metrics.Notifications])
	require.Len(t, retry[metrics.DeliveryDuration], 2)
	require.Equal(t, []any{1.0, 2.0}, retry[metrics.ReceiveCountAtRetry], "the failing alarm's metric: the receive that failed, one per record")
	require.NotContains(t, retry, metrics.ReceiveCountAtDelivery)
	require.NotContains(t, ok, metrics.ReceiveCountAtRetry, "only a retry has it")
	require.NotContains(t, gone, metrics.ReceiveCountAtRetry, "a dead letter is not retried")
	require.NotContains(t, retry, metrics.DeadLetters)

	poison := lines["unknown/dead_lettered"]
	require.NotNil(t, poison, "a body that does not parse has no channel")
	require.Equal(t, "invalid_message", poison[metrics.DimErrorClass])
	require.NotContains(t, poison, metrics.DeliveryDuration, "nothing was sent")
	require.EqualValues(t, 1, poison[metrics.DeadLetters])
}

// TestBatchLinesSplitAtTheValuesLimit: a metric member holds at most
// metrics.MaxValuesPerMetric values, so 250 delivered records are three
// lines of 100, 100 and 50, and 200 two lines of 100 (no empty third), their
// counts adding up to the batch.
func TestBatchLinesSplitAtTheValuesLimit(t *testing.T) {
	t.Parallel()
	for n, want := range map[int][]float64{250: {100, 100, 50}, 200: {100, 100}} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			var ev events.SQSEvent
			for i := range n {
				ev.Records = append(ev.Records, rec(fmt.Sprintf("m%d", i), webhookBody(fmt.Sprintf("ok-%d", i)), 1))
			}
			_, err := b.p.Handle(context.Background(), ev)
			require.NoError(t, err)
			var counts []float64
			paused := 0
			sc := bufio.NewScanner(bytes.NewReader([]byte(b.logs.String())))
			for sc.Scan() {
				var m map[string]any
				require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
				if m["msg"] != "batch" {
					continue
				}
				require.NoError(t, metrics.Validate(sc.Bytes(), now), "%s", sc.Bytes())
				counts = append(counts, m[metrics.Notifications].(float64))
				if _, ok := m[metrics.Paused]; ok {
					paused++
				}
			}
			require.Equal(t, want, counts)
			require.Equal(t, 1, paused, "Paused 0 once per batch")
		})
	}
}

// TestEmptyBatchStillReportsNotPaused: a batch of no records, an
// environment's first, writes the function's line alone (Paused 0).
func TestEmptyBatchStillReportsNotPaused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	_, err := b.p.Handle(context.Background(), events.SQSEvent{})
	require.NoError(t, err)
	lines := batchLines(t, b, now)
	require.Len(t, lines, 1)
	require.EqualValues(t, 0, lines[""][metrics.Paused])
	require.NotContains(t, lines[""], metrics.Notifications)
}

// TestNoPauserWritesNoPaused: the fan-out's processor has no Pauser, so
// its batches write no Paused metric: a Paused 0 by function would return
// the deliver function's paused alarm to OK while it is still paused.
func TestNoPauserWritesNoPaused(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *processor.Config) { c.Pauser = nil })
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m-ok", webhookBody("ok-1"), 1)}})
	require.NoError(t, err)
	_, err = b.p.Handle(context.Background(), events.SQSEvent{})
	require.NoError(t, err)
	lines := batchLines(t, b, now)
	require.EqualValues(t, 1, lines["webhook/delivered"][metrics.Notifications])
	for key, line := range lines {
		require.NotContains(t, line, metrics.Paused, key)
		require.NotContains(t, line, metrics.DimFunction, key)
	}
}

// TestAgeAtDeliveryNeedsASentTimestamp: a record whose SentTimestamp is
// missing, malformed or 0 reports no AgeAtDelivery (an age from the epoch
// would swamp the metric's statistics), but is delivered and counted.
func TestAgeAtDeliveryNeedsASentTimestamp(t *testing.T) {
	t.Parallel()
	for name, sentTimestamp := range map[string]string{"zero": "0", "negative": "-5", "malformed": "yesterday", "missing": ""} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			r := rec("m-ok", webhookBody("ok-1"), 2) // after a retry: the clean path has no age
			if sentTimestamp == "" {
				delete(r.Attributes, "SentTimestamp")
			} else {
				r.Attributes["SentTimestamp"] = sentTimestamp
			}
			_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
			require.NoError(t, err)
			line := batchLines(t, b, now)["webhook/delivered"]
			require.NotNil(t, line)
			require.NotContains(t, line, metrics.AgeAtDelivery)
			require.EqualValues(t, 1, line[metrics.Notifications])
			require.Equal(t, []any{2.0}, line[metrics.ReceiveCountAtDelivery])
		})
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFailureMetricsKeepTheirLevel: a batch line takes the level of its
// records' lines, so with the logger at WARN the metrics of failures are
// still written and the delivered ones' are not, as their lines; the
// function's Paused 0 rides on an INFO line, its own when no outcome line
// is INFO.
func TestFailureMetricsKeepTheirLevel(t *testing.T) {
	t.Parallel()
	ev := events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("permanent-1"), 1),
		rec("m2", webhookBody("ok-2"), 1),
	}}
	levels := func(min slog.Level) map[string]string {
		var buf syncBuffer
		b := setup(t, func(c *processor.Config) {
			c.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: min}))
		})
		_, err := b.p.Handle(context.Background(), ev)
		require.NoError(t, err)
		out := map[string]string{}
		for line := range bytes.Lines([]byte(buf.String())) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(line, &m))
			if m["msg"] != "batch" {
				continue
			}
			key := fmt.Sprint(m[metrics.DimOutcome])
			if _, ok := m[metrics.Paused]; ok {
				key += "+batch"
			}
			out[key] = m["level"].(string)
		}
		return out
	}
	require.Equal(t, map[string]string{"dead_lettered": "WARN", "delivered+batch": "INFO"}, levels(slog.LevelInfo))
	require.Equal(t, map[string]string{"dead_lettered": "WARN"}, levels(slog.LevelWarn))

	ev.Records = ev.Records[:1]
	require.Equal(t, map[string]string{"dead_lettered": "WARN", "<nil>+batch": "INFO"}, levels(slog.LevelInfo), "no INFO outcome line: the function's own")
}

// definedMetrics returns the metric names the batch lines written since
// from define (their EMF directives), in b's log.
func definedMetrics(t *testing.T, logs *syncBuffer, from int) []string {
	t.Helper()
	var names []string
	for line := range bytes.Lines([]byte(logs.String()[from:])) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m))
		if m["msg"] != "batch" {
			continue
		}
		for _, ns := range directives(t, m) {
			names = append(names, ns...)
		}
	}
	slices.Sort(names)
	return names
}

// TestCleanPathWritesTwoMetrics: on a warm environment a batch delivered
// on its first receive defines Notifications and DeliveryDuration and
// nothing else, at INFO and at DEBUG; every other metric is written when
// there is something to count: a delivery after a retry adds its ages and
// receive count, a retry its count and receive count, a dead letter its
// count.
func TestCleanPathWritesTwoMetrics(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var ticks atomic.Int64
		var logs syncBuffer
		b := setup(t, func(c *processor.Config) {
			c.Now = func() time.Time { return now.Add(time.Duration(ticks.Add(1)) * time.Millisecond) }
			c.Logger = app.LoggerTo(&logs, level)
		})
		handle := func(rs ...events.SQSMessage) []string {
			from := len(logs.String())
			_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: rs})
			require.NoError(t, err)
			return definedMetrics(t, &logs, from)
		}
		created := `{"version":1,"id":"ok-c","channel":"webhook","created_at":"` + now.Add(-time.Minute).Format(time.RFC3339) + `","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`
		require.Contains(t, handle(rec("m0", webhookBody("ok-0"), 1)), metrics.Paused, "%s: the environment's first batch", level)
		require.Equal(t, []string{metrics.DeliveryDuration, metrics.Notifications},
			handle(rec("m1", webhookBody("ok-1"), 1), rec("m2", created, 1)), "%s: a warm clean batch", level)
		require.Equal(t, []string{metrics.AgeAtDelivery, metrics.AgeSinceCreated, metrics.DeliveryDuration, metrics.Notifications, metrics.ReceiveCountAtDelivery},
			handle(rec("m3", created, 2)), "%s: delivered after a retry", level)
		require.Equal(t, []string{metrics.DeliveryDuration, metrics.Notifications, metrics.ReceiveCountAtRetry, metrics.Retries},
			handle(rec("m4", webhookBody("transient-4"), 1)), "%s: a retry", level)
		require.Equal(t, []string{metrics.DeadLetters, metrics.DeliveryDuration, metrics.Notifications},
			handle(rec("m5", webhookBody("permanent-5"), 1)), "%s: a dead letter", level)
	}
}

// TestPausedZeroWhenAResumeCanHaveHappened: Paused 0 is written on a
// queue's first batch in an environment, not on the next one a few
// seconds later, again on the first after processor.PausedQuiet without a
// batch of that queue, and on the first after this environment paused the
// queue, however soon; each queue (by channel) keeps its own time.
func TestPausedZeroWhenAResumeCanHaveHappened(t *testing.T) {
	t.Parallel()
	refusing := &delivery.TransientError{Class: "ses_sending_paused", RetryAfter: time.Hour, Err: errors.New("SendingPausedException"), PausesChannel: true}
	send := senderFunc(func(_ context.Context, m *notification.Message) error {
		if hasPrefix(m.ID, "refused") {
			return refusing
		}
		return nil
	})
	var at time.Time
	var logs syncBuffer
	b := channelQueues(t)
	p, err := processor.New(b.wire.Client(), processor.Config{
		Queues:          []redrive.Queue{{Channel: notification.ChannelEmail, URL: emailQueue, DeadLetterURL: emailDLQ}, {Channel: notification.ChannelWebhook, URL: webhookQueue, DeadLetterURL: webhookDLQ}},
		MaxReceiveCount: 5,
		Senders:         map[notification.Channel]processor.Sender{notification.ChannelEmail: send, notification.ChannelWebhook: send},
		Pauser:          pauserFunc(func(redrive.Queue, string, error) error { return nil }),
		Logger:          app.LoggerTo(&logs, slog.LevelInfo),
		Now:             func() time.Time { return at },
	})
	require.NoError(t, err)
	paused := func(after time.Duration, id string) bool {
		at = now.Add(after)
		start := len(logs.String())
		_, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{from(emailARN, rec("m-"+id, emailOf(id), 1))}})
		require.NoError(t, err)
		return slices.Contains(definedMetrics(t, &logs, start), metrics.Paused)
	}
	require.True(t, paused(0, "ok-1"), "the queue's first batch here")
	require.False(t, paused(10*time.Second, "ok-2"), "10 s later")
	require.False(t, paused(10*time.Second+processor.PausedQuiet-time.Nanosecond, "ok-3"), "just under a quiet minute after the last")
	require.True(t, paused(20*time.Second+2*processor.PausedQuiet, "ok-4"), "after a quiet minute")
	require.False(t, paused(25*time.Second+2*processor.PausedQuiet, "refused-5"), "the batch that pauses the queue (its pause line says 1)")
	require.True(t, paused(30*time.Second+2*processor.PausedQuiet, "ok-6"), "the first after this environment paused it, 5 s later")
	require.False(t, paused(35*time.Second+2*processor.PausedQuiet, "ok-7"))
	at = now.Add(36*time.Second + 2*processor.PausedQuiet)
	start := len(logs.String())
	_, err = p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{from(webhookARN, rec("w-1", webhookBody("ok-w-1"), 1))}})
	require.NoError(t, err)
	require.Contains(t, definedMetrics(t, &logs, start), metrics.Paused, "another queue's first batch here")
}
