package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/feedback"
)

// logLine is one JSON log line in the logsWire fake.
type logLine struct {
	at      time.Time
	fields  map[string]string
	domains []string
}

// logsWire is an httptest server speaking the CloudWatch Logs JSON 1.1
// protocol (POST /, X-Amz-Target Logs_20140328.<Operation>) for StartQuery,
// GetQueryResults and StopQuery, over log lines it holds per log group.
// It rejects what the service rejects: a missing or empty queryString, no
// log group, an unknown log group (ResourceNotFoundException), a missing or
// inverted time range, a limit outside 1–10,000, an unknown queryId
// (ResourceNotFoundException). It runs only the query shape
// feedback.EventsQuery makes (fields …, filter id = "…" or a batch line's
// @message like /…/, sort @timestamp asc), any other is a
// MalformedQueryException. A query is Running for
// running GetQueryResults calls, then Complete.
type logsWire struct {
	mu      sync.Mutex
	groups  map[string][]logLine
	running int
	final   types.QueryStatus // the status after running polls; Complete when ""
	queries map[string]*logsQuery
	started []startedQuery
	stopped []string
	// slowResults delays each GetQueryResults answer (set before serving),
	// or less when the client goes first; stopFails makes StopQuery answer
	// 500 ServiceUnavailableException.
	slowResults time.Duration
	stopFails   bool
}

type logsQuery struct {
	polls   int
	results [][]map[string]string
	status  types.QueryStatus
}

type startedQuery struct {
	groups     []string
	start, end int64
	query      string
}

var eventsQueryShape = regexp.MustCompile(`(?s)^fields ([^\n|]+)\n\| filter id = ("(?:[^"\\]|\\.)*") or msg = "batch" and @message like /((?:[^/\\]|\\.)*)/\n\| sort @timestamp asc$`)

func (w *logsWire) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Amz-Target") == "Logs_20140328.GetQueryResults" && w.slowResults > 0 {
		// Read to the end: only then does the server notice the client
		// going away (r.Context() done).
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		t := time.NewTimer(w.slowResults)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fail := func(status int, typ, msg string) {
		rw.Header().Set("Content-Type", "application/x-amz-json-1.1")
		rw.WriteHeader(status)
		_ = json.NewEncoder(rw).Encode(map[string]string{"__type": typ, "message": msg})
	}
	ok := func(v any) {
		rw.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_ = json.NewEncoder(rw).Encode(v)
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-amz-json-1.1") {
		fail(http.StatusBadRequest, "SerializationException", "want a JSON 1.1 POST")
		return
	}
	var in struct {
		LogGroupName  *string  `json:"logGroupName"`
		LogGroupNames []string `json:"logGroupNames"`
		QueryString   *string  `json:"queryString"`
		StartTime     *int64   `json:"startTime"`
		EndTime       *int64   `json:"endTime"`
		Limit         *int32   `json:"limit"`
		QueryID       *string  `json:"queryId"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	switch op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "Logs_20140328."); op {
	case "StartQuery":
		groups := in.LogGroupNames
		if in.LogGroupName != nil {
			groups = append(groups, *in.LogGroupName)
		}
		switch {
		case in.QueryString == nil || *in.QueryString == "":
			fail(http.StatusBadRequest, "InvalidParameterException", "1 validation error detected: Value at 'queryString' failed to satisfy constraint: Member must have length greater than or equal to 1")
			return
		case len(groups) == 0:
			fail(http.StatusBadRequest, "InvalidParameterException", "Query must specify either logGroupName, logGroupNames or logGroupIdentifiers")
			return
		case in.StartTime == nil || in.EndTime == nil || *in.StartTime < 0:
			fail(http.StatusBadRequest, "InvalidParameterException", "startTime and endTime are required")
			return
		case *in.EndTime < *in.StartTime:
			fail(http.StatusBadRequest, "InvalidParameterException", "End time should not be before the start time")
			return
		case in.Limit != nil && (*in.Limit < 1 || *in.Limit > 10000):
			fail(http.StatusBadRequest, "InvalidParameterException", "limit must be 1-10000")
			return
		}
		for _, g := range groups {
			if _, ok := w.groups[g]; !ok {
				fail(http.StatusBadRequest, "ResourceNotFoundException", "Log group '"+g+"' does not exist for account ID '000000000000'")
				return
			}
		}
		m := eventsQueryShape.FindStringSubmatch(*in.QueryString)
		if m == nil {
			fail(http.StatusBadRequest, "MalformedQueryException", "unexpected query")
			return
		}
		id, err := strconv.Unquote(m[2])
		if err != nil {
			fail(http.StatusBadRequest, "MalformedQueryException", "bad string literal")
			return
		}
		like, err := regexp.Compile(m[3])
		if err != nil {
			fail(http.StatusBadRequest, "MalformedQueryException", "bad regular expression")
			return
		}
		fields := strings.Split(m[1], ", ")
		var lines []logLine
		for _, g := range groups {
			for _, l := range w.groups[g] {
				found := l.fields["id"] == id || l.fields["msg"] == "batch" && like.MatchString(l.fields["@message"])
				if found && l.at.Unix() >= *in.StartTime && l.at.Unix() <= *in.EndTime {
					lines = append(lines, l)
				}
			}
		}
		slices.SortStableFunc(lines, func(a, b logLine) int { return a.at.Compare(b.at) })
		var results [][]map[string]string
		for _, l := range lines {
			flat := map[string]string{"@timestamp": l.at.UTC().Format("2006-01-02 15:04:05.000")}
			for k, v := range l.fields {
				flat[k] = v
			}
			for i, d := range l.domains {
				flat["recipient_domains."+strconv.Itoa(i)] = d
			}
			row := []map[string]string{}
			for _, f := range fields {
				if v, ok := flat[f]; ok {
					row = append(row, map[string]string{"field": f, "value": v})
				}
			}
			row = append(row, map[string]string{"field": "@ptr", "value": "ptr"})
			results = append(results, row)
		}
		qid := fmt.Sprintf("q-%d", len(w.started)+1)
		w.started = append(w.started, startedQuery{groups: groups, start: *in.StartTime, end: *in.EndTime, query: *in.QueryString})
		w.queries[qid] = &logsQuery{results: results, status: types.QueryStatusRunning}
		ok(map[string]string{"queryId": qid})
	case "GetQueryResults", "StopQuery":
		if in.QueryID == nil || *in.QueryID == "" {
			fail(http.StatusBadRequest, "InvalidParameterException", "queryId is required")
			return
		}
		q, found := w.queries[*in.QueryID]
		if !found {
			fail(http.StatusBadRequest, "ResourceNotFoundException", "Query does not exist: "+*in.QueryID)
			return
		}
		if op == "StopQuery" {
			if w.stopFails {
				fail(http.StatusInternalServerError, "ServiceUnavailableException", "try again later")
				return
			}
			w.stopped = append(w.stopped, *in.QueryID)
			q.status = types.QueryStatusCancelled
			ok(map[string]bool{"success": true})
			return
		}
		q.polls++
		if q.status == types.QueryStatusRunning && q.polls > w.running {
			q.status = w.final
			if q.status == "" {
				q.status = types.QueryStatusComplete
			}
		}
		out := map[string]any{"status": q.status, "results": [][]map[string]string{}, "statistics": map[string]float64{"recordsMatched": float64(len(q.results))}}
		if q.status == types.QueryStatusComplete {
			out["results"] = q.results
		}
		ok(out)
	default:
		fail(http.StatusBadRequest, "UnknownOperationException", op)
	}
}

func newLogsWire(t *testing.T, w *logsWire) *cloudwatchlogs.Client {
	t.Helper()
	w.queries = map[string]*logsQuery{}
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return cloudwatchlogs.New(cloudwatchlogs.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1})
}

const (
	feedbackGroup = "/aws/lambda/herald-FeedbackFunction-X"
	deliverGroup  = "/aws/lambda/herald-DeliverFunction-X"
)

func TestEmailEventsPollsUntilCompleteOldestFirst(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	id := `evt "quoted" \ id`
	w := &logsWire{running: 2, groups: map[string][]logLine{
		feedbackGroup: {
			{at: end.Add(-time.Hour + 3*time.Second), fields: map[string]string{"msg": "email_event", "id": id, "event_type": "bounce", "bounce_type": "Permanent", "bounce_sub_type": "General"}, domains: []string{"a.example", "b.example"}},
			{at: end.Add(-time.Hour + time.Second), fields: map[string]string{"msg": "email_event", "id": id, "event_type": "send"}, domains: []string{"a.example"}},
			{at: end.Add(-time.Hour), fields: map[string]string{"msg": "email_event", "id": "someone-else", "event_type": "send"}},
			{at: end.Add(-25 * time.Hour), fields: map[string]string{"msg": "email_event", "id": id, "event_type": "delivery"}},
		},
		deliverGroup: {
			// Delivered on its first receive: its batch line lists it.
			{at: end.Add(-time.Hour + 500*time.Millisecond), fields: map[string]string{"msg": "batch", "outcome": "delivered",
				"@message": `{"msg":"batch","channel":"email","outcome":"delivered","delivered":[{"id":"evt-2","ms":3},{"id":` + strconv.Quote(id) + `,"ms":1}]}`}},
			{at: end.Add(-time.Hour + 600*time.Millisecond), fields: map[string]string{"msg": "batch", "outcome": "delivered",
				"@message": `{"msg":"batch","channel":"email","outcome":"delivered","delivered":[{"id":"evt-2","ms":3}]}`}},
		},
	}}
	api := newLogsWire(t, w)
	var statuses []types.QueryStatus
	q := eventsQuery{logGroups: []string{feedbackGroup, deliverGroup}, id: id, start: end.Add(-24 * time.Hour), end: end,
		poll: time.Millisecond, wait: 10 * time.Second, progress: func(s types.QueryStatus) { statuses = append(statuses, s) }}
	events, err := q.run(context.Background(), api)
	require.NoError(t, err)
	at := func(d time.Duration) time.Time { return end.Add(-time.Hour + d) }
	require.Equal(t, []emailEvent{
		{Time: at(500 * time.Millisecond), Source: "herald", Outcome: "delivered", Message: "batch"},
		{Time: at(time.Second), Source: "ses", EventType: "send", RecipientDomains: []string{"a.example"}, Message: "email_event"},
		{Time: at(3 * time.Second), Source: "ses", EventType: "bounce", BounceType: "Permanent", BounceSubType: "General", RecipientDomains: []string{"a.example"}, Message: "email_event"},
	}, events, "only this id, within the time range, oldest first; the query names recipient_domains.0 only")
	require.Equal(t, []types.QueryStatus{types.QueryStatusRunning, types.QueryStatusRunning}, statuses, "polled through Running until Complete")
	require.Equal(t, []startedQuery{{groups: []string{feedbackGroup, deliverGroup}, start: end.Add(-24 * time.Hour).Unix(), end: end.Unix(), query: feedback.EventsQuery(id)}}, w.started)

	var out bytes.Buffer
	require.NoError(t, writeEvents(&env{stdout: &out}, &globals{}, events))
	require.Equal(t, ""+
		"TIME                      SOURCE  EVENT      BOUNCE             RECIPIENT DOMAINS  DETAIL\n"+
		"2026-12-01T11:00:00.500Z  herald  delivered  -                  -                  -\n"+
		"2026-12-01T11:00:01.000Z  ses     send       -                  a.example          -\n"+
		"2026-12-01T11:00:03.000Z  ses     bounce     Permanent/General  a.example          -\n", out.String())
}

func TestEmailEventsBoundedWaitStopsTheQuery(t *testing.T) {
	t.Parallel()
	w := &logsWire{running: 1 << 30, groups: map[string][]logLine{feedbackGroup: nil}}
	api := newLogsWire(t, w)
	now := time.Now()
	q := eventsQuery{logGroups: []string{feedbackGroup}, id: "x", start: now.Add(-time.Hour), end: now, poll: 5 * time.Millisecond, wait: 100 * time.Millisecond}
	began := time.Now()
	_, err := q.run(context.Background(), api)
	require.ErrorContains(t, err, "did not complete within 100ms")
	require.NotContains(t, err.Error(), "stop query", "StopQuery succeeded")
	require.Less(t, time.Since(began), 5*time.Second)
	require.Equal(t, []string{"q-1"}, w.stopped, "the query is stopped, not left running")
}

// The wait can end while a GetQueryResults call is in flight: that call's
// deadline error is the bounded wait's end, so the query is stopped and the
// error says so, not reported as a failed GetQueryResults.
func TestEmailEventsWaitEndsDuringAPoll(t *testing.T) {
	t.Parallel()
	w := &logsWire{running: 1 << 30, slowResults: time.Second, groups: map[string][]logLine{feedbackGroup: nil}}
	api := newLogsWire(t, w)
	now := time.Now()
	q := eventsQuery{logGroups: []string{feedbackGroup}, id: "x", start: now.Add(-time.Hour), end: now, poll: time.Millisecond, wait: 100 * time.Millisecond}
	_, err := q.run(context.Background(), api)
	require.ErrorContains(t, err, "Logs Insights query q-1 did not complete within 100ms (--wait); stopped it")
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Equal(t, []string{"q-1"}, w.stopped)
}

// Ctrl-C during a poll is the caller's cancellation: returned as such,
// without calling StopQuery for a wait that did not end.
func TestEmailEventsCancelledDuringAPoll(t *testing.T) {
	t.Parallel()
	// The results never come while the caller waits; its context ends in
	// the poll, 2 s after the start: time enough for StartQuery on a loaded
	// machine (-race beside a CPU hog), whose failure would be another error.
	w := &logsWire{running: 1 << 30, slowResults: time.Minute, groups: map[string][]logLine{feedbackGroup: nil}}
	api := newLogsWire(t, w)
	now := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	q := eventsQuery{logGroups: []string{feedbackGroup}, id: "x", start: now.Add(-time.Hour), end: now, poll: time.Millisecond, wait: time.Minute}
	_, err := q.run(ctx, api)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "Logs Insights query q-1: ")
	require.NotContains(t, err.Error(), "--wait")
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Empty(t, w.stopped)
}

// A StopQuery that fails is named beside the wait's error: the query may
// still be running (and billed).
func TestEmailEventsStopQueryFails(t *testing.T) {
	t.Parallel()
	w := &logsWire{running: 1 << 30, stopFails: true, groups: map[string][]logLine{feedbackGroup: nil}}
	api := newLogsWire(t, w)
	now := time.Now()
	q := eventsQuery{logGroups: []string{feedbackGroup}, id: "x", start: now.Add(-time.Hour), end: now, poll: 5 * time.Millisecond, wait: 100 * time.Millisecond}
	_, err := q.run(context.Background(), api)
	require.ErrorContains(t, err, "did not complete within 100ms")
	require.ErrorContains(t, err, "stop query q-1: ")
	require.ErrorContains(t, err, "ServiceUnavailableException")
}

func TestEmailEventsQueryEndsBadly(t *testing.T) {
	t.Parallel()
	for _, status := range []types.QueryStatus{types.QueryStatusFailed, types.QueryStatusCancelled, types.QueryStatusTimeout} {
		w := &logsWire{final: status, groups: map[string][]logLine{feedbackGroup: nil}}
		now := time.Now()
		q := eventsQuery{logGroups: []string{feedbackGroup}, id: "x", start: now.Add(-time.Hour), end: now, poll: time.Millisecond, wait: 10 * time.Second}
		_, err := q.run(context.Background(), newLogsWire(t, w))
		require.ErrorContains(t, err, "ended "+string(status))
	}
}

// TestLogsWireRejectsWhatTheServiceRejects: the fake refuses the requests
// CloudWatch Logs refuses, through the real SDK client.
func TestLogsWireRejectsWhatTheServiceRejects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := &logsWire{groups: map[string][]logLine{feedbackGroup: nil}}
	api := newLogsWire(t, w)
	now := time.Now()
	valid := func() *cloudwatchlogs.StartQueryInput {
		return &cloudwatchlogs.StartQueryInput{LogGroupNames: []string{feedbackGroup}, QueryString: aws.String(feedback.EventsQuery("x")),
			StartTime: aws.Int64(now.Add(-time.Hour).Unix()), EndTime: aws.Int64(now.Unix())}
	}
	_, err := api.StartQuery(ctx, valid())
	require.NoError(t, err)

	in := valid()
	in.QueryString = aws.String("")
	_, err = api.StartQuery(ctx, in)
	require.ErrorContains(t, err, "InvalidParameterException")
	in = valid()
	in.StartTime, in.EndTime = in.EndTime, in.StartTime
	_, err = api.StartQuery(ctx, in)
	require.ErrorContains(t, err, "End time should not be before the start time")
	in = valid()
	in.LogGroupNames = []string{"/nope"}
	_, err = api.StartQuery(ctx, in)
	require.ErrorContains(t, err, "ResourceNotFoundException")
	_, err = api.GetQueryResults(ctx, &cloudwatchlogs.GetQueryResultsInput{QueryId: aws.String("q-404")})
	require.ErrorContains(t, err, "ResourceNotFoundException")

	// What run sends for an inverted range is refused, and run says so.
	q := eventsQuery{logGroups: []string{feedbackGroup}, id: "x", start: now, end: now.Add(-time.Hour), poll: time.Millisecond, wait: time.Second}
	_, err = q.run(ctx, api)
	require.ErrorContains(t, err, "start Logs Insights query on "+feedbackGroup)
	require.ErrorContains(t, err, "End time should not be before the start time")
}

func TestEmailEventsLogGroupsAndUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfn := cfnWire(t, "herald", map[string]string{outputFeedbackLogGroup: feedbackGroup, outputDeliverLogGroup: deliverGroup})
	outputs := func(ctx context.Context) (map[string]string, error) { return describeOutputs(ctx, cfn, "herald") }
	groups, err := resolveLogGroups(ctx, &globals{stack: "herald"}, nil, outputs)
	require.NoError(t, err)
	require.Equal(t, []string{feedbackGroup, deliverGroup}, groups)

	groups, err = resolveLogGroups(ctx, &globals{stack: "herald"}, []string{"/mine"}, outputs)
	require.NoError(t, err)
	require.Equal(t, []string{"/mine"}, groups, "--log-group wins")

	old := cfnWire(t, "old", map[string]string{outputFeedbackLogGroup: feedbackGroup})
	groups, err = resolveLogGroups(ctx, &globals{stack: "old"}, nil, func(ctx context.Context) (map[string]string, error) { return describeOutputs(ctx, old, "old") })
	require.NoError(t, err)
	require.Equal(t, []string{feedbackGroup}, groups, "a stack without the deliver output still has the feedback log group")

	other := cfnWire(t, "other", map[string]string{"Foo": "x"})
	_, err = resolveLogGroups(ctx, &globals{stack: "other"}, nil, func(ctx context.Context) (map[string]string, error) { return describeOutputs(ctx, other, "other") })
	require.ErrorContains(t, err, "is it a herald stack")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"email", "events"}, "needs one notification ID"},
		{[]string{"email", "events", "a", "b"}, "needs one notification ID"},
		{[]string{"email", "events", "evt_1"}, "no log group"},
		{[]string{"email", "events", "--since", "soon", "--log-group", "g", "evt_1"}, "--since"},
		{[]string{"email", "events", "--since", "0d", "--log-group", "g", "evt_1"}, "--since"},
		{[]string{"email", "events", "--wait", "0s", "--log-group", "g", "evt_1"}, "--wait"},
		{[]string{"email", "bogus"}, "unknown command"},
	} {
		r := herald(t, "", tc.args...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
}

// DETAIL is the error when there is one, else the template a send used.
func TestEmailEventsDetailColumn(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	require.NoError(t, writeEvents(&env{stdout: &out}, &globals{}, []emailEvent{
		{Time: at, Source: "herald", Outcome: "delivered", Template: "welcome"},
		{Time: at, Source: "herald", Outcome: "retry", Template: "welcome", Error: "email_throttled"},
		{Time: at, Source: "ses", EventType: "reject", Error: "Bad content"},
	}))
	require.Equal(t, ""+
		"TIME                      SOURCE  EVENT      BOUNCE  RECIPIENT DOMAINS  DETAIL\n"+
		"2026-12-01T12:00:00.000Z  herald  delivered  -       -                  template welcome\n"+
		"2026-12-01T12:00:00.000Z  herald  retry      -       -                  email_throttled\n"+
		"2026-12-01T12:00:00.000Z  ses     reject     -       -                  Bad content\n", out.String())
}
