package processor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
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
