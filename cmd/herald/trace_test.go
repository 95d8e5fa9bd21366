package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/notification"
)

// logEvent is one CloudWatch Logs event of filterLogsWire.
type logEvent struct {
	at      time.Time
	message string
}

// filterLogsWire answers FilterLogEvents in CloudWatch Logs' JSON 1.1 protocol
// (POST /, X-Amz-Target Logs_20140328.FilterLogEvents, Content-Type
// application/x-amz-json-1.1), from groups: the events of the named group
// between startTime and endTime (Unix milliseconds, inclusive, as the API
// documents), whose message contains the filter pattern's quoted term,
// pageSize at a time with a nextToken. A group it does not hold is
// ResourceNotFoundException. It records the requests.
func filterLogsWire(t *testing.T, groups map[string][]logEvent, pageSize int) (*cloudwatchlogs.Client, func() []map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var requests []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		fail := func(status int, typ, msg string) {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"__type":%q,"message":%q}`, typ, msg)
		}
		if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "Logs_20140328.FilterLogEvents" || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
			fail(http.StatusBadRequest, "UnknownOperationException", "not FilterLogEvents in JSON 1.1")
			return
		}
		var in struct {
			LogGroupName  string `json:"logGroupName"`
			FilterPattern string `json:"filterPattern"`
			StartTime     *int64 `json:"startTime"`
			EndTime       *int64 `json:"endTime"`
			NextToken     string `json:"nextToken"`
		}
		raw := map[string]any{}
		body := new(bytes.Buffer)
		_, _ = body.ReadFrom(r.Body)
		require.NoError(t, json.Unmarshal(body.Bytes(), &in))
		require.NoError(t, json.Unmarshal(body.Bytes(), &raw))
		mu.Lock()
		requests = append(requests, raw)
		mu.Unlock()
		switch {
		case in.LogGroupName == "":
			fail(http.StatusBadRequest, "InvalidParameterException", "Either logGroupName or logGroupIdentifier must be specified")
			return
		case in.StartTime != nil && in.EndTime != nil && *in.EndTime < *in.StartTime:
			fail(http.StatusBadRequest, "InvalidParameterException", "endTime must be after startTime")
			return
		}
		evs, ok := groups[in.LogGroupName]
		if !ok {
			fail(http.StatusBadRequest, "ResourceNotFoundException", "The specified log group does not exist.")
			return
		}
		term, err := strconv.Unquote(in.FilterPattern)
		if err != nil {
			fail(http.StatusBadRequest, "InvalidParameterException", "this fake takes one quoted term")
			return
		}
		var match []logEvent
		for _, ev := range evs {
			ms := ev.at.UnixMilli()
			if (in.StartTime != nil && ms < *in.StartTime) || (in.EndTime != nil && ms > *in.EndTime) || !strings.Contains(ev.message, term) {
				continue
			}
			match = append(match, ev)
		}
		from := 0
		if in.NextToken != "" {
			from, _ = strconv.Atoi(strings.TrimPrefix(in.NextToken, "page-"))
		}
		to := min(from+pageSize, len(match))
		out := map[string]any{"searchedLogStreams": []any{}}
		var page []map[string]any
		for i, ev := range match[from:to] {
			page = append(page, map[string]any{"logStreamName": "2026/12/05/[$LATEST]abc", "timestamp": ev.at.UnixMilli(), "ingestionTime": ev.at.UnixMilli() + 5, "message": ev.message, "eventId": strconv.Itoa(from + i)})
		}
		out["events"] = page
		if to < len(match) {
			out["nextToken"] = "page-" + strconv.Itoa(to)
		}
		require.NoError(t, json.NewEncoder(w).Encode(out))
	}))
	t.Cleanup(srv.Close)
	return cloudwatchlogs.NewFromConfig(awstest.Config(srv.URL)), func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), requests...)
	}
}

// functionLines runs the deliver function's handler (processor) on
// notification body, received receives times (maxReceive the queue's
// maxReceiveCount), with a webhook sender that
// fails with 503 on the receives in fail, and returns its log lines as the
// deployed function writes them (app.LoggerTo: no time), one per call of
// Handle, stamped 61 s apart from start.
func functionLines(t *testing.T, body string, receives, maxReceive int, fail map[int]bool, start time.Time) []logEvent {
	t.Helper()
	return functionLinesOn(t, sqstest.New(t), body, receives, maxReceive, fail, start)
}

// The queues functionLinesOn adds to its wire.
const (
	traceQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-webhook"
	traceDLQURL   = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-webhook-dlq"
)

// functionLinesOn is functionLines with the queues on wire, where the
// function sends its dead letters.
func functionLinesOn(t *testing.T, wire *sqstest.Server, body string, receives, maxReceive int, fail map[int]bool, start time.Time) []logEvent {
	t.Helper()
	queue := wire.AddQueue(traceQueueURL, nil)
	dlq := wire.AddQueue(traceDLQURL, nil)
	var out []logEvent
	for n := 1; n <= receives; n++ {
		var buf bytes.Buffer
		now := start.Add(time.Duration(n-1) * 61 * time.Second)
		p, err := processor.New(wire.Client(), processor.Config{
			QueueURL: queue, DeadLetterQueueURL: dlq, MaxReceiveCount: maxReceive,
			Backoff: backoff.Policy{Base: time.Minute, Cap: time.Hour, Rand: func() float64 { return 0 }},
			Senders: map[notification.Channel]processor.Sender{notification.ChannelWebhook: senderFunc(func(context.Context, *notification.Message) error {
				if fail[n] {
					return delivery.Transient("webhook_http_5xx", errors.New("webhook answered 503 Service Unavailable"))
				}
				return nil
			})},
			Logger: app.LoggerTo(&buf, slog.LevelInfo),
			Now:    func() time.Time { return now },
		})
		require.NoError(t, err)
		_, err = p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{
			MessageId: "m-1", ReceiptHandle: "rh-" + strconv.Itoa(n), Body: body,
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:herald-webhook",
			Attributes:     map[string]string{"ApproximateReceiveCount": strconv.Itoa(n), "SentTimestamp": strconv.FormatInt(start.UnixMilli(), 10)},
		}}})
		require.NoError(t, err)
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			out = append(out, logEvent{at: now, message: l})
		}
	}
	return out
}

type senderFunc func(context.Context, *notification.Message) error

func (f senderFunc) Send(ctx context.Context, m *notification.Message) error { return f(ctx, m) }

func webhookNotification(id string) string {
	return fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`, id)
}

// TestTraceRetriedThenDelivered: the deliver function's own lines of a
// webhook that failed twice are read back from the log group, across
// pages, among other notifications' lines, in the time range asked:
// receives 1 and 2 retried after 1m and 2m, delivered on receive 3.
func TestTraceRetriedThenDelivered(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	lines := functionLines(t, webhookNotification("ntf_1"), 3, 5, map[int]bool{1: true, 2: true}, start)
	others := functionLines(t, webhookNotification("ntf_10"), 1, 5, nil, start.Add(time.Second))
	old := logEvent{at: start.Add(-48 * time.Hour), message: `{"msg":"notification","id":"ntf_1","channel":"webhook","outcome":"delivered","receive_count":1}`}
	api, requests := filterLogsWire(t, map[string][]logEvent{"deliver-group": append(append(append([]logEvent{old}, lines...), others...),
		logEvent{at: start, message: "START RequestId: ntf_1 Version: $LATEST"})}, 2)

	tg, err := resolveTraceGroups(nil, "herald", map[string]string{outputDeliverLogGroup: "deliver-group", outputDeliverFunction: "herald-deliver"})
	require.NoError(t, err)
	end := start.Add(time.Hour)
	steps, read, err := tg.read(context.Background(), api, "ntf_1", end.Add(-24*time.Hour), end)
	require.NoError(t, err)
	require.Equal(t, []string{"deliver-group"}, read)
	r := buildTrace("ntf_1", steps)

	require.Len(t, r.Steps, 3, "the old line and ntf_10's lines are not ntf_1's path: %+v", r.Steps)
	for i, s := range r.Steps {
		require.Equal(t, start.Add(time.Duration(i)*61*time.Second), s.Time, "the event's timestamp: the deployed line has no time")
		require.Equal(t, i+1, s.ReceiveCount)
		require.Equal(t, "webhook", s.Queue)
		require.Equal(t, "herald", s.Source)
	}
	require.Equal(t, "retry", r.Steps[0].Outcome)
	require.Equal(t, "webhook_http_5xx", r.Steps[0].ErrorClass)
	require.Contains(t, r.Steps[0].Error, "503 Service Unavailable")
	require.Equal(t, []int{60, 120}, r.RetryDelays)
	require.Equal(t, "delivered", r.Final)
	require.Equal(t, "delivered on receive 3 after 2 retries (1m0s, 2m0s)", r.Summary)

	reqs := requests()
	require.Len(t, reqs, 3, "three pages of two")
	require.Equal(t, `"ntf_1"`, reqs[0]["filterPattern"])
	require.Equal(t, float64(end.Add(-24*time.Hour).UnixMilli()), reqs[0]["startTime"])
	require.Equal(t, float64(end.UnixMilli()), reqs[0]["endTime"])
	require.Equal(t, "page-2", reqs[1]["nextToken"])
}

// TestTraceFindsADeliveryInItsBatchLine: a webhook delivered on its first
// receive has no line of its own at INFO: its batch line lists it, and
// trace finds it there (delivered on receive 1, its send's duration), in
// the log group and in a file; an id the line does not list (ntf_1 beside
// a listed ntf_10) is not found there.
func TestTraceFindsADeliveryInItsBatchLine(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	clean := functionLines(t, webhookNotification("ntf_10"), 1, 5, nil, start)
	require.Len(t, clean, 1, "one line: the batch's")
	require.Contains(t, clean[0].message, `"msg":"batch"`)

	api, _ := filterLogsWire(t, map[string][]logEvent{"deliver-group": clean}, 10)
	tg, err := resolveTraceGroups(nil, "herald", map[string]string{outputDeliverLogGroup: "deliver-group", outputDeliverFunction: "herald-deliver"})
	require.NoError(t, err)
	steps, _, err := tg.read(context.Background(), api, "ntf_10", start.Add(-time.Hour), start.Add(time.Hour))
	require.NoError(t, err)
	r := buildTrace("ntf_10", steps)
	require.Len(t, r.Steps, 1)
	require.Equal(t, traceStep{Time: start, Source: "herald", Queue: "webhook", Channel: "webhook", ReceiveCount: 1, Outcome: "delivered"}, r.Steps[0])
	require.Equal(t, "delivered on receive 1", r.Summary)

	steps, err = readLogFile(strings.NewReader(joinLines(clean)), "ntf_1")
	require.NoError(t, err)
	require.Empty(t, steps, "ntf_10's batch line does not list ntf_1")

	line := `{"msg":"batch","channel":"webhook","outcome":"delivered","delivered":[{"id":"a","ms":12.5,"host":"h.example.com"},{"id":"b","ms":80.1}]}`
	st, ok := stepOf([]byte(line), "b", start)
	require.True(t, ok)
	require.Equal(t, 80.1, st.DurationMS, "its own duration, not its neighbour's")
	_, ok = stepOf([]byte(line), "c", start)
	require.False(t, ok)
}

// TestTraceOutcomes: what the last lines mean, for each way a notification
// ends or waits.
func TestTraceOutcomes(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	dead := functionLines(t, webhookNotification("ntf_d"), 3, 3, map[int]bool{1: true, 2: true, 3: true}, start)
	steps, err := readLogFile(strings.NewReader(joinLines(dead)), "ntf_d")
	require.NoError(t, err)
	for i := range steps {
		steps[i].Time = dead[i].at
	}
	r := buildTrace("ntf_d", steps)
	require.Equal(t, "dead_lettered", r.Final)
	require.Equal(t, "dead-lettered on receive 3 (webhook_http_5xx) after 2 retries (1m0s, 2m0s)", r.Summary)

	retrying := functionLines(t, webhookNotification("ntf_r"), 2, 5, map[int]bool{1: true, 2: true}, start)
	steps = nil
	for _, l := range retrying {
		if s, ok := stepOf([]byte(l.message), "ntf_r", l.at); ok {
			steps = append(steps, s)
		}
	}
	r = buildTrace("ntf_r", steps)
	require.Equal(t, "retrying", r.Final)
	require.Equal(t, "retrying (webhook_http_5xx): receive 3 comes after "+start.Add(61*time.Second+2*time.Minute).Format(time.RFC3339), r.Summary)

	for _, tc := range []struct{ line, final, summary string }{
		{`{"msg":"notification","id":"x","channel":"webhook","outcome":"dropped","receive_count":1,"error_class":"expired"}`, "dropped", "dropped on receive 1 (expired): not delivered, not retried"},
		{`{"msg":"notification","id":"x","channel":"email","outcome":"duplicate","receive_count":1,"delivered_at":"2026-12-04T09:00:00Z"}`, "duplicate", "settled as a duplicate"},
		{`{"msg":"notification","id":"x","channel":"chat","queue_channel":"email","outcome":"moved","receive_count":1,"moved_to":"chat"}`, "moved", "moved to the chat queue"},
		{`{"level":"ERROR","msg":"notification","id":"x","channel":"email","outcome":"failed","receive_count":4,"sqs_error":"boom"}`, "failed", "failed on receive 4: it comes back after the queue's visibility timeout"},
		{`{"msg":"batch","id":"x"}`, "unknown", "no line of the deliver function names it"},
	} {
		steps, err := readLogFile(strings.NewReader(tc.line+"\n"), "x")
		require.NoError(t, err)
		r := buildTrace("x", steps)
		require.Equal(t, tc.final, r.Final, tc.line)
		require.Contains(t, r.Summary, tc.summary, tc.line)
	}
	// Two receives logged in the same millisecond, the later one first
	// (log events of one timestamp come in any order): receive count
	// orders them, and the later receive's outcome is the fate.
	same := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	steps = nil
	for _, l := range []string{
		`{"msg":"notification","id":"x","channel":"webhook","outcome":"delivered","receive_count":2}`,
		`{"msg":"notification","id":"x","channel":"webhook","outcome":"retry","receive_count":1,"error_class":"webhook_timeout","delay_seconds":0}`,
	} {
		st, ok := stepOf([]byte(l), "x", same)
		require.True(t, ok)
		steps = append(steps, st)
	}
	r = buildTrace("x", steps)
	require.Equal(t, []int{1, 2}, []int{r.Steps[0].ReceiveCount, r.Steps[1].ReceiveCount})
	require.Equal(t, "delivered on receive 2 after 1 retry (0s)", r.Summary)

	moved, _ := readLogFile(strings.NewReader(`{"msg":"notification","id":"x","channel":"chat","queue_channel":"email","outcome":"moved","receive_count":1,"moved_to":"chat"}`), "x")
	require.Equal(t, "email", moved[0].Queue, "the queue it was received from")
	require.Equal(t, "chat", moved[0].Channel)
}

func joinLines(evs []logEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.message + "\n")
	}
	return b.String()
}

// TestTraceEmailWithSESEvents: an email's attempt from the deliver
// function's group and what SES did from the feedback function's, in time
// order; the trace id column appears when a line carries one; an event id
// finds the notifications of the event.
func TestTraceEmailWithSESEvents(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	api, _ := filterLogsWire(t, map[string][]logEvent{
		"deliver": {
			{t0, `{"msg":"notification","id":"ntf_e","event_id":"evt_9","channel":"email","outcome":"delivered","receive_count":1,"duration_ms":41.5,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`},
		},
		"feedback": {
			{t0.Add(3 * time.Second), `{"msg":"email_event","id":"ntf_e","event_type":"delivery","recipient_domains":["example.org"]}`},
			{t0.Add(time.Second), `{"msg":"email_event","id":"ntf_e","event_type":"send"}`},
			{t0.Add(9 * time.Second), `{"msg":"email_event","id":"ntf_e","event_type":"bounce","bounce_type":"Permanent","bounce_sub_type":"General"}`},
		},
	}, 50)
	tg := traceGroups{groups: []string{"deliver", "feedback"}}
	steps, read, err := tg.read(context.Background(), api, "ntf_e", t0.Add(-time.Hour), t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, []string{"deliver", "feedback"}, read)
	r := buildTrace("ntf_e", steps)
	r.Sources = read
	r.DeadLetters = []traceDeadLetter{}
	var out bytes.Buffer
	require.NoError(t, writeTrace(&env{stdout: &out}, &globals{}, r))
	require.Equal(t, `notification ntf_e (from deliver, feedback)
TIME                      SOURCE  QUEUE  RECEIVE  OUTCOME    CLASS              RETRY IN  DETAIL   TRACE ID
2026-12-04T10:00:00.000Z  herald  email  1        delivered  -                  -         41.5 ms  4bf92f3577b34da6a3ce929d0e0e4736
2026-12-04T10:00:01.000Z  ses     -      -        send       -                  -         -        -
2026-12-04T10:00:03.000Z  ses     -      -        delivery   -                  -         -        -
2026-12-04T10:00:09.000Z  ses     -      -        bounce     Permanent/General  -         -        -
fate: delivered on receive 1
dead-letter queues: not in any
`, out.String())

	byEvent, _, err := tg.read(context.Background(), api, "evt_9", t0.Add(-time.Hour), t0.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, byEvent, 1, "the event's notification, by its event_id")
	require.Equal(t, "delivered", byEvent[0].Outcome)
}

// TestTraceLogGroups: the stack's groups, the LocalStack fallback when the
// deliver group does not exist, and errors that are not "not found".
func TestTraceLogGroups(t *testing.T) {
	t.Parallel()
	_, err := resolveTraceGroups(nil, "herald", map[string]string{"EmailQueueUrl": "q"})
	require.ErrorContains(t, err, "stack herald has no DeliverFunctionLogGroupName output")
	tg, err := resolveTraceGroups([]string{"mine"}, "herald", nil)
	require.NoError(t, err)
	require.Equal(t, traceGroups{groups: []string{"mine"}}, tg)

	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	api, _ := filterLogsWire(t, map[string][]logEvent{
		"/aws/lambda/herald-deliver": {{t0, `{"msg":"notification","id":"ntf_l","channel":"email","outcome":"delivered","receive_count":1}`}},
	}, 10)
	tg, err = resolveTraceGroups(nil, "herald", map[string]string{
		outputDeliverLogGroup: "herald-DeliverFunctionLogGroup-1", outputFeedbackLogGroup: "herald-FeedbackFunctionLogGroup-1", outputDeliverFunction: "herald-deliver",
	})
	require.NoError(t, err)
	steps, read, err := tg.read(context.Background(), api, "ntf_l", t0.Add(-time.Hour), t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, []string{"/aws/lambda/herald-deliver"}, read, "LocalStack writes /aws/lambda/<function>; the feedback group is missing too")
	require.Len(t, steps, 1)

	// LocalStack creates the template's group, empty: the function's
	// group is read too. In AWS the template's group has the lines and the
	// function's group does not exist.
	empty, _ := filterLogsWire(t, map[string][]logEvent{
		"herald-DeliverFunctionLogGroup-1": nil,
		"/aws/lambda/herald-deliver":       {{t0, `{"msg":"notification","id":"ntf_l","channel":"email","outcome":"delivered","receive_count":1}`}},
	}, 10)
	steps, read, err = tg.read(context.Background(), empty, "ntf_l", t0.Add(-time.Hour), t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, []string{"/aws/lambda/herald-deliver"}, read)
	require.Len(t, steps, 1)
	inAWS, calls := filterLogsWire(t, map[string][]logEvent{
		"herald-DeliverFunctionLogGroup-1": {{t0, `{"msg":"notification","id":"ntf_l","channel":"email","outcome":"delivered","receive_count":1}`}},
	}, 10)
	steps, read, err = tg.read(context.Background(), inAWS, "ntf_l", t0.Add(-time.Hour), t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, []string{"herald-DeliverFunctionLogGroup-1"}, read)
	require.Len(t, steps, 1)
	require.Len(t, calls(), 2, "the deliver group and the feedback group; no fallback when the lines are found")
	nothing, _ := filterLogsWire(t, map[string][]logEvent{"herald-DeliverFunctionLogGroup-1": nil}, 10)
	steps, read, err = tg.read(context.Background(), nothing, "ntf_l", t0.Add(-time.Hour), t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, []string{"herald-DeliverFunctionLogGroup-1"}, read, "nothing found anywhere: the group that exists was read")
	require.Empty(t, steps)

	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"__type":"AccessDeniedException","message":"not authorized to perform: logs:FilterLogEvents"}`)
	}))
	t.Cleanup(denied.Close)
	_, _, err = tg.read(context.Background(), cloudwatchlogs.NewFromConfig(awstest.Config(denied.URL)), "ntf_l", t0, t0)
	require.ErrorContains(t, err, "filter log group herald-DeliverFunctionLogGroup-1")
	require.ErrorContains(t, err, "AccessDeniedException")
}

// TestTraceCommandLocalFile: herald trace --log-file reads herald run
// --json's lines (which carry their time); without a dead-letter queue to
// read it says so and succeeds; --json prints the report.
func TestTraceCommandLocalFile(t *testing.T) {
	t.Parallel()
	var runOut bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&runOut, &slog.HandlerOptions{Level: slog.LevelInfo})) // as herald run --json
	logger.Info(processor.LineNotification, "id", "ntf_f", "channel", "webhook", "outcome", "retry", "receive_count", 1, "error_class", "webhook_timeout", "delay_seconds", 60, "error", "timeout")
	logger.Info(processor.LineNotification, "id", "ntf_f", "channel", "webhook", "outcome", "delivered", "receive_count", 2)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(file, runOut.Bytes(), 0o600))

	r := herald(t, "", "trace", "--log-file", file, "ntf_f")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "fate: delivered on receive 2 after 1 retry (1m0s)")
	require.Contains(t, r.stdout, "dead-letter queues: not read: no dead-letter queue")
	require.Contains(t, r.stdout, "webhook_timeout")

	r = herald(t, "", "trace", "--log-file", file, "--no-dlq", "--json", "ntf_f")
	require.Equal(t, exitOK, r.code, "%+v", r)
	var rep traceReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Equal(t, "delivered", rep.Final)
	require.Equal(t, []int{60}, rep.RetryDelays)
	require.Equal(t, "not read (--no-dlq)", rep.DeadLettersNote)
	require.Nil(t, rep.DeadLetters)
	require.False(t, rep.Steps[0].Time.IsZero(), "herald run's lines carry their time")
}

// TestTraceUsage: what herald trace refuses.
func TestTraceUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trace"}, "needs one notification ID"},
		{[]string{"trace", " "}, "the notification ID is empty"},
		{[]string{"trace", "ntf_1"}, "no log to read"},
		{[]string{"trace", "--since", "soon", "--stack", "h", "ntf_1"}, "--since"},
		{[]string{"trace", "--since", "0s", "--stack", "h", "ntf_1"}, "--since"},
		{[]string{"trace", "--log-file", "x", "--stack", "h", "ntf_1"}, "--log-file reads a local file"},
	} {
		r := herald(t, "", tc.args...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
	r := herald(t, "", "trace", "--log-file", filepath.Join(t.TempDir(), "none.jsonl"), "ntf_1")
	require.Equal(t, exitFailed, r.code)
	require.Contains(t, r.stderr, "no such file")
}

// TestTraceDeadLetterNow: a notification the function dead-lettered is
// found in its dead-letter queue with herald's reason, read as dlq show
// reads it, and left there visible.
func TestTraceDeadLetterNow(t *testing.T) {
	wire := sqstest.New(t)
	start := time.Now().UTC().Truncate(time.Second)
	lines := functionLinesOn(t, wire, webhookNotification("ntf_dl"), 3, 3, map[int]bool{1: true, 2: true, 3: true}, start)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(joinLines(lines)), 0o600))
	awstest.Setenv(t, map[string]string{"SQS": wire.URL()})

	var out, errOut bytes.Buffer
	vars := map[string]string{"HERALD_WEBHOOK_DLQ_URL": traceDLQURL}
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }, now: time.Now}
	code := execute(context.Background(), e, []string{"trace", "--log-file", file, "ntf_dl"})
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	require.Contains(t, out.String(), "fate: dead-lettered on receive 3 (webhook_http_5xx) after 2 retries (1m0s, 2m0s)")
	require.Contains(t, out.String(), "dead-letter queue "+traceDLQURL+" now: webhook_http_5xx after 3 attempts")
	require.Contains(t, out.String(), "503 Service Unavailable")
	visible, inFlight := wire.Counts(traceDLQURL)
	require.Equal(t, 1, visible, "the dead letter is visible again")
	require.Zero(t, inFlight)

	out.Reset()
	code = execute(context.Background(), e, []string{"trace", "--log-file", file, "ntf_other"})
	require.Equal(t, exitOK, code, errOut.String())
	require.Contains(t, out.String(), "dead-letter queues: not in any")
}

// TestPlural: "1 attempt", never "1 attempts".
func TestPlural(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0 attempts", 1: "1 attempt", 2: "2 attempts", 13: "13 attempts"} {
		if got := plural(n, "attempt"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
