package processor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
)

// TestLinesCarryEmbeddedMetrics checks each record line's EMF against the
// specification (metrics.Validate, with the clock the lines were written
// by) and the values it reports: a clock that moves 250 ms per reading
// makes every send take 250 ms.
func TestLinesCarryEmbeddedMetrics(t *testing.T) {
	t.Parallel()
	var ticks atomic.Int64
	clock := func() time.Time { return now.Add(time.Duration(ticks.Add(1)) * 250 * time.Millisecond) }
	// One record at a time, so that no other record's clock reading falls
	// between a send's start and end.
	b := setup(t, func(c *processor.Config) { c.Now, c.Concurrency = clock, 1 })

	sent := now.Add(-90 * time.Second)
	delivered := rec("m-ok", `{"version":1,"id":"ok-1","channel":"webhook","created_at":"`+now.Add(-10*time.Minute).Format(time.RFC3339)+`","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`, 3)
	delivered.Attributes["SentTimestamp"] = strconv.FormatInt(sent.UnixMilli(), 10)
	ev := events.SQSEvent{Records: []events.SQSMessage{
		delivered,
		rec("m-gone", webhookBody("permanent-1"), 1),
		rec("m-503", webhookBody("transient-1"), 2),
		rec("m-poison", `not json`, 1),
	}}
	_, err := b.p.Handle(context.Background(), ev)
	require.NoError(t, err)

	byMsg := map[string]map[string]any{}
	var batch map[string]any
	sc := bufio.NewScanner(bytes.NewReader([]byte(b.logs.String())))
	for sc.Scan() {
		require.NoError(t, metrics.Validate(sc.Bytes(), clock()), "%s", sc.Bytes())
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		if m["msg"] == "batch" {
			batch = m
			continue
		}
		byMsg[m["sqs_message_id"].(string)] = m
	}
	require.NotNil(t, batch, "one batch line")
	require.EqualValues(t, 4, batch[metrics.BatchRecords])
	require.Equal(t, processor.FunctionName, batch[metrics.DimFunction])
	require.EqualValues(t, 0, batch[metrics.Paused], "a delivering function reports not paused")

	ok := byMsg["m-ok"]
	require.Equal(t, "webhook", ok[metrics.DimChannel])
	require.Equal(t, "delivered", ok[metrics.DimOutcome])
	require.EqualValues(t, 1, ok[metrics.Notifications])
	require.InDelta(t, 250, ok[metrics.DeliveryDuration], 0.001, "one clock step per send")
	age := ok[metrics.AgeAtDelivery].(float64)
	require.Greater(t, age, 90.0, "now − SentTimestamp, at least the 90 s before the batch")
	require.Less(t, age, 90.0+float64(ticks.Load())*0.25+0.001, "no more than the clock moved")
	require.InDelta(t, age+510, ok[metrics.AgeSinceCreated], 0.001, "created 8.5 min before it was sent")
	require.EqualValues(t, 3, ok[metrics.ReceiveCountAtDelivery])
	require.NotContains(t, ok, metrics.DeadLetters)
	require.NotContains(t, ok, metrics.DimErrorClass)
	require.Equal(t, "hooks.example.com", ok["webhook_host"], "the host only, for the slowest-hosts query")

	gone := byMsg["m-gone"]
	require.Equal(t, "dead_lettered", gone[metrics.DimOutcome])
	require.Equal(t, "webhook_gone", gone[metrics.DimErrorClass])
	require.EqualValues(t, 1, gone[metrics.DeadLetters])
	require.NotContains(t, gone, metrics.AgeAtDelivery, "age is measured at delivery only")
	dims := gone["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)["Dimensions"]
	require.Equal(t, []any{[]any{"channel", "outcome"}, []any{"channel", "error_class"}}, dims, "dead letters by class")

	retry := byMsg["m-503"]
	require.Equal(t, "retry", retry[metrics.DimOutcome])
	require.EqualValues(t, 1, retry[metrics.Retries])
	require.EqualValues(t, 2, retry[metrics.ReceiveCountAtRetry], "the failing alarm's metric: the receive that failed")
	require.NotContains(t, retry, metrics.ReceiveCountAtDelivery)
	require.NotContains(t, ok, metrics.ReceiveCountAtRetry, "only a retry has it")
	require.NotContains(t, gone, metrics.ReceiveCountAtRetry, "a dead letter is not retried")
	require.NotContains(t, retry, metrics.DeadLetters)

	poison := byMsg["m-poison"]
	require.Equal(t, "unknown", poison[metrics.DimChannel], "a body that does not parse has no channel")
	require.NotContains(t, poison, metrics.DeliveryDuration, "nothing was sent")
	require.EqualValues(t, 1, poison[metrics.DeadLetters])
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
			r := rec("m-ok", webhookBody("ok-1"), 1)
			if sentTimestamp == "" {
				delete(r.Attributes, "SentTimestamp")
			} else {
				r.Attributes["SentTimestamp"] = sentTimestamp
			}
			_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
			require.NoError(t, err)
			var line map[string]any
			sc := bufio.NewScanner(bytes.NewReader([]byte(b.logs.String())))
			for sc.Scan() {
				var m map[string]any
				require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
				if m["sqs_message_id"] == "m-ok" {
					line = m
				}
			}
			require.NotNil(t, line)
			require.Equal(t, "delivered", line[metrics.DimOutcome])
			require.NotContains(t, line, metrics.AgeAtDelivery)
			require.EqualValues(t, 1, line[metrics.ReceiveCountAtDelivery])
		})
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
