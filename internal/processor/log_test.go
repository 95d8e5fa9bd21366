package processor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/notification"
)

// TestHandleLogLineFields: each record's one line carries the notification
// id (also of an invalid body that has one), its channel, its metadata as a
// group, the receive count and level by outcome; a body without an id has
// no id field.
func TestHandleLogLineFields(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	withMeta := `{"version":1,"id":"ok-meta","channel":"webhook","metadata":{"tenant":"acme"},"webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", withMeta, 2),
		rec("m2", webhookBody("ok-plain"), 1),
		rec("m3", `{"version":1,"id":"bad-1","channel":"carrier-pigeon"}`, 1),
		rec("m4", `no id here`, 1),
		rec("m5", webhookBody("transient-5"), 1),
	}})
	require.NoError(t, err)
	lines := logLines(t, b)

	require.Equal(t, "ok-meta", lines["m1"]["id"])
	require.Equal(t, "webhook", lines["m1"]["channel"])
	require.Equal(t, float64(2), lines["m1"]["receive_count"])
	require.Equal(t, map[string]any{"tenant": "acme"}, lines["m1"]["metadata"])
	require.Equal(t, "INFO", lines["m1"]["level"])
	require.NotContains(t, lines["m1"], "delay_seconds", "only a retry has a delay")

	require.NotContains(t, lines["m2"], "metadata", "no metadata, no group")

	require.Equal(t, "bad-1", lines["m3"]["id"], "an invalid body's id is still logged")
	require.Equal(t, "WARN", lines["m3"]["level"])

	require.NotContains(t, lines["m4"], "id")

	require.Equal(t, "retry", lines["m5"]["outcome"])
	require.Equal(t, float64(10), lines["m5"]["delay_seconds"])
	require.Equal(t, "WARN", lines["m5"]["level"])
}

// TestHandleLogsSQSFailuresAsErrors: a record whose SQS call failed is
// logged at ERROR with the SQS error beside the delivery's.
func TestHandleLogsSQSFailuresAsErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.FailAction("SendMessage")
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m1", webhookBody("permanent-1"), 1)}})
	require.NoError(t, err)
	l := logLines(t, b)["m1"]
	require.Equal(t, "ERROR", l["level"])
	require.Equal(t, "webhook_gone", l["error_class"])
	require.Contains(t, l["sqs_error"], "send to dead-letter queue")
}

// TestNewAcceptsTheSmallestValidConfig: MaxReceiveCount 1 (every failure is
// the last) is valid.
func TestNewAcceptsTheSmallestValidConfig(t *testing.T) {
	t.Parallel()
	_, client := newSQSWire(t)
	_, err := processor.New(client, processor.Config{QueueURL: "q", DeadLetterQueueURL: "d", MaxReceiveCount: 1})
	require.NoError(t, err)
	_, err = processor.New(nil, processor.Config{QueueURL: "q", DeadLetterQueueURL: "d", MaxReceiveCount: 1})
	require.ErrorContains(t, err, "nil QueueAPI")
	_, err = processor.New(client, processor.Config{QueueURL: "q", MaxReceiveCount: 1})
	require.ErrorContains(t, err, "DeadLetterQueueURL is required")
}

// infoLines runs ev through a processor logging at INFO, as the deployed
// function does by default (app.Logger, HERALD_LOG_LEVEL unset), and
// returns every line written and each "notification" line by notification
// id.
// A clock that moves 105.3 ms per reading makes each send (one record at a
// time) take 105.3 ms.
func infoLines(t *testing.T, ev events.SQSEvent) ([]byte, map[string][]map[string]any) {
	t.Helper()
	var buf syncBuffer
	var ticks atomic.Int64
	b := setup(t, func(c *processor.Config) {
		c.Logger = app.LoggerTo(&buf, slog.LevelInfo)
		c.Now = func() time.Time { return now.Add(time.Duration(ticks.Add(1)) * 105300 * time.Microsecond) }
		c.Concurrency = 1
	})
	_, err := b.p.Handle(context.Background(), ev)
	require.NoError(t, err)
	out := map[string][]map[string]any{}
	raw := []byte(buf.String())
	for line := range bytes.Lines(raw) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m), "%s", line)
		require.NotContains(t, m, "time", "Lambda stamps every event: the line need not")
		if m["level"] == nil {
			m["level"] = "INFO" // what Lambda reads a line without a level as
		}
		if m["msg"] == "notification" {
			id, _ := m["id"].(string)
			out[id] = append(out[id], m)
		}
	}
	return raw, out
}

// listedIn returns the notifications the batch lines of raw list
// (processor.MemberDelivered), by id, each with its line's channel and
// outcome, and checks that no id is listed twice or also has a line of
// its own.
func listedIn(t *testing.T, raw []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	own := map[string]bool{}
	for line := range bytes.Lines(raw) {
		var m struct {
			Msg       string             `json:"msg"`
			ID        string             `json:"id"`
			Channel   string             `json:"channel"`
			Outcome   string             `json:"outcome"`
			Delivered []processor.Listed `json:"delivered"`
		}
		require.NoError(t, json.Unmarshal(line, &m))
		if m.Msg == processor.LineNotification {
			own[m.ID] = true
		}
		if m.Msg == processor.LineBatch {
			require.NoError(t, metrics.Validate(bytes.TrimSpace(line), time.Time{}), "the list leaves the line's EMF valid: %s", line)
		}
		for _, l := range m.Delivered {
			require.Equal(t, processor.LineBatch, m.Msg, "only a batch line lists")
			require.NotContains(t, out, l.ID, "listed once")
			out[l.ID] = map[string]any{"channel": m.Channel, "outcome": m.Outcome, "ms": l.DurationMS, "host": l.Host}
		}
	}
	for id := range out {
		require.False(t, own[id], "%s is listed and has its own line", id)
	}
	return out
}

// TestInfoLinesAreCompact: at INFO a record delivered on its first receive
// with nothing to report has no line of its own: its batch line lists it
// (id, send duration, webhook host), and a batch of 10 such webhooks with
// ids and hosts of common length costs at most 130 bytes of log per
// notification, metrics included (issue 30; 250 before, issue 22). Every
// other record keeps its line: a delivery after a retry and a duplicate a
// compact one (id, channel, outcome, receive count, webhook host, send
// duration; duplicate_of for a copy), a failure full detail (SQS message
// id, class, error, delay, metadata), and none of them is listed.
func TestInfoLinesAreCompact(t *testing.T) {
	t.Parallel()
	body := func(id string) string {
		return `{"version":1,"id":"` + id + `","channel":"webhook","metadata":{"tenant":"acme"},"webhook":{"url":"https://hooks.example.com/billing/v2","event_type":"invoice.paid","payload":{"invoice_id":"INV-2026-0042"}}}`
	}
	var ev events.SQSEvent
	var ids []string
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("ok_2Yq8mT4vN1xK7pR3sW9zB6c%d", i))
		r := rec(fmt.Sprintf("059f36b4-87a3-44ab-83d2-661975830a%02d", i), body(ids[i]), 1)
		r.Attributes["SentTimestamp"] = strconv.FormatInt(now.Add(-1234*time.Millisecond).UnixMilli(), 10)
		ev.Records = append(ev.Records, r)
	}
	raw, lines := infoLines(t, ev)
	t.Logf("%.1f log bytes per delivered notification:\n%s", float64(len(raw))/10, raw)
	require.LessOrEqual(t, len(raw), 10*130, "log bytes per delivered notification")
	require.Empty(t, lines, "no line of its own on the clean path")
	require.Equal(t, 1, bytes.Count(raw, []byte("\n")), "one batch line")
	listed := listedIn(t, raw)
	require.Len(t, listed, 10)
	for _, id := range ids {
		require.Equal(t, map[string]any{"channel": "webhook", "outcome": "delivered", "ms": 105.3, "host": "hooks.example.com"}, listed[id], id)
	}

	raw, lines = infoLines(t, events.SQSEvent{Records: []events.SQSMessage{
		rec("m-ok", body("ok-meta"), 2),
		rec("m-copy", body("ok-meta"), 1),
		rec("m-503", body("transient-meta"), 1),
		rec("m-poison", `{"version":1,"id":"bad-1","channel":"carrier-pigeon"}`, 1),
		rec("m-clean", body("ok-clean"), 1),
	}})
	require.Equal(t, []string{"ok-clean"}, slices.Collect(maps.Keys(listedIn(t, raw))), "only the clean delivery is listed")
	require.NotContains(t, lines, "ok-clean")
	ok := lines["ok-meta"]
	require.Len(t, ok, 2)
	require.Equal(t, "delivered", ok[0]["outcome"])
	require.Equal(t, 2.0, ok[0]["receive_count"], "a delivery after a retry has its line")
	for _, k := range []string{"sqs_message_id", "metadata", "error", "error_class"} {
		require.NotContains(t, ok[0], k, "a delivered line at INFO is compact")
	}
	require.Equal(t, "duplicate", ok[1]["outcome"])
	require.Equal(t, "m-ok", ok[1]["duplicate_of"], "a copy names the record that carries it")

	retry := lines["transient-meta"][0]
	require.Equal(t, "WARN", retry["level"])
	require.Equal(t, "m-503", retry["sqs_message_id"])
	require.Equal(t, "webhook_http_5xx", retry["error_class"])
	require.Equal(t, "503 Service Unavailable", retry["error"])
	require.Equal(t, 10.0, retry["delay_seconds"])
	require.Equal(t, map[string]any{"tenant": "acme"}, retry["metadata"], "full detail on failures")

	poison := lines["bad-1"][0]
	require.Equal(t, "m-poison", poison["sqs_message_id"])
	require.Equal(t, "unknown", poison["channel"])
	require.Equal(t, "dead_lettered", poison["outcome"])
}

// TestDebugLinesListNothing: at DEBUG every record has its own line, in
// full detail, and no batch line lists.
func TestDebugLinesListNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, nil) // the processor tests' logger is at DEBUG
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhookBody("ok-1"), 1), rec("m2", webhookBody("ok-2"), 1),
	}})
	require.NoError(t, err)
	lines := logLines(t, b)
	require.Equal(t, "ok-1", lines["m1"]["id"])
	require.Equal(t, "ok-2", lines["m2"]["id"])
	require.Empty(t, listedIn(t, []byte(b.logs.String())))
}

// A URL's host is at most notification.MaxHostChars (253) characters, a
// DNS name's limit (RFC 1035 §2.3.4): one of 253 is sent and logged
// whole; a longer one, up to 100 KB, is an invalid message, dead-lettered
// at once, and its line stays small, without the host.
func TestWebhookHostOfAnyLengthKeepsTheLineSmall(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 100_000) + ".example.com"
	most := strings.Repeat("a", notification.MaxHostChars-len(".example.com")) + ".example.com"
	raw, lines := infoLines(t, events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", `{"version":1,"id":"long-host","channel":"webhook","webhook":{"url":"https://`+long+`/x","event_type":"t","payload":{}}}`, 1),
		rec("m2", `{"version":1,"id":"longest-host","channel":"webhook","webhook":{"url":"https://`+most+`/x","event_type":"t","payload":{}}}`, 1),
	}})
	require.Len(t, lines["long-host"], 1)
	require.Equal(t, "dead_lettered", lines["long-host"][0]["outcome"])
	require.Equal(t, "invalid_message", lines["long-host"][0]["error_class"])
	require.NotContains(t, string(raw), strings.Repeat("a", 300), "the host is not echoed")
	require.Less(t, len(raw), 4096, "small lines")
	require.NotContains(t, lines, "longest-host", "delivered on its first receive: listed")
	require.Equal(t, most, listedIn(t, raw)["longest-host"]["host"])
}
