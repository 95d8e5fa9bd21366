package pause_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/pause"
)

// lambdaWire is an httptest server speaking the Lambda API's REST-JSON
// wire format for ListEventSourceMappings (GET
// /2015-03-31/event-source-mappings/, paged by Marker/NextMarker) and
// UpdateEventSourceMapping (PUT /2015-03-31/event-source-mappings/{UUID},
// 202 with the mapping). It filters by FunctionName and EventSourceArn as
// Lambda does, answers ResourceNotFoundException for an unknown UUID, and
// AccessDeniedException (403) for the UUIDs in deny.
type lambdaWire struct {
	mu       sync.Mutex
	mappings []mappingRecord
	pageSize int
	deny     map[string]bool
	updates  []string
}

type mappingRecord struct {
	UUID           string `json:"UUID"`
	FunctionArn    string `json:"FunctionArn"`
	EventSourceArn string `json:"EventSourceArn"`
	State          string `json:"State"`
}

const fnArn = "arn:aws:lambda:us-east-1:123456789012:function:herald-deliver"

func (w *lambdaWire) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	const base = "/2015-03-31/event-source-mappings/"
	switch {
	case r.Method == http.MethodGet && strings.TrimSuffix(r.URL.Path, "/")+"/" == base:
		q := r.URL.Query()
		var match []mappingRecord
		for _, m := range w.mappings {
			fn := q.Get("FunctionName")
			if fn != "" && fn != m.FunctionArn && !strings.HasSuffix(m.FunctionArn, ":function:"+fn) {
				continue
			}
			if src := q.Get("EventSourceArn"); src != "" && src != m.EventSourceArn {
				continue
			}
			match = append(match, m)
		}
		start := 0
		if mk := q.Get("Marker"); mk != "" {
			start = int(mk[0] - '0')
		}
		end := min(len(match), start+w.pageSize)
		out := map[string]any{"EventSourceMappings": match[start:end]}
		if end < len(match) {
			out["NextMarker"] = string(rune('0' + end))
		}
		writeJSON(rw, http.StatusOK, out)
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, base):
		uuid := strings.TrimPrefix(r.URL.Path, base)
		if w.deny[uuid] {
			rw.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
			writeJSON(rw, http.StatusForbidden, map[string]string{"Message": "not authorized to perform lambda:UpdateEventSourceMapping"})
			return
		}
		var in struct{ Enabled *bool }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Enabled == nil {
			rw.Header().Set("X-Amzn-ErrorType", "InvalidParameterValueException")
			writeJSON(rw, http.StatusBadRequest, map[string]string{"Message": "Enabled expected"})
			return
		}
		for i := range w.mappings {
			if w.mappings[i].UUID == uuid {
				w.mappings[i].State = map[bool]string{true: "Enabling", false: "Disabling"}[*in.Enabled]
				w.updates = append(w.updates, uuid)
				writeJSON(rw, http.StatusAccepted, w.mappings[i])
				return
			}
		}
		rw.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
		writeJSON(rw, http.StatusNotFound, map[string]string{"Message": "The resource you requested does not exist."})
	default:
		http.Error(rw, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
	}
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(v)
}

func newClient(t *testing.T, w *lambdaWire) *lambda.Client {
	t.Helper()
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return lambda.New(lambda.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	})
}

const queueArn = "arn:aws:sqs:us-east-1:123456789012:herald-notifications"

func TestPauseDisablesOnlyTheFunctionsMappingsFromTheQueue(t *testing.T) {
	t.Parallel()
	w := &lambdaWire{pageSize: 1, mappings: []mappingRecord{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
		{UUID: "b", FunctionArn: fnArn, EventSourceArn: "arn:aws:sqs:us-east-1:123456789012:other", State: "Enabled"},
		{UUID: "c", FunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:someone-else", EventSourceArn: queueArn, State: "Enabled"},
		{UUID: "d", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Disabled"},
		{UUID: "e", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
		{UUID: "f", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Disabling"},
	}}
	c := newClient(t, w)
	got, err := pause.Pause(context.Background(), c, "herald-deliver", queueArn)
	require.NoError(t, err)
	require.Equal(t, []pause.Mapping{
		{UUID: "a", EventSourceARN: queueArn, State: "Disabling"},
		{UUID: "d", EventSourceARN: queueArn, State: "Disabled"},
		{UUID: "e", EventSourceARN: queueArn, State: "Disabling"},
		{UUID: "f", EventSourceARN: queueArn, State: "Disabling"},
	}, got, "every page; a disabled or disabling mapping is not updated")
	require.Equal(t, []string{"a", "e"}, w.updates)

	got, err = pause.Resume(context.Background(), c, "herald-deliver", queueArn)
	require.NoError(t, err)
	require.Len(t, got, 4)
	for _, m := range got {
		require.Equal(t, "Enabling", m.State)
	}

	w.updates = nil
	_, err = pause.Resume(context.Background(), c, "herald-deliver", queueArn)
	require.NoError(t, err)
	require.Empty(t, w.updates, "an enabling mapping is not updated again")
	w.mappings[0].State = "Enabled"
	_, err = pause.Resume(context.Background(), c, "herald-deliver", queueArn)
	require.NoError(t, err)
	require.Empty(t, w.updates, "nor an enabled one")
}

func TestPauseErrors(t *testing.T) {
	t.Parallel()
	w := &lambdaWire{pageSize: 10, deny: map[string]bool{"a": true}, mappings: []mappingRecord{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
	}}
	c := newClient(t, w)
	_, err := pause.Pause(context.Background(), c, "herald-deliver", queueArn)
	require.ErrorContains(t, err, "AccessDenied")
	require.ErrorContains(t, err, "update event source mapping a")

	_, err = pause.Pause(context.Background(), c, "herald-deliver", "arn:aws:sqs:us-east-1:123456789012:none")
	require.ErrorIs(t, err, pause.ErrNoMapping)
}

func TestHandlerPausesHandsBackAndSaysHowToResume(t *testing.T) {
	t.Parallel()
	w := &lambdaWire{pageSize: 10, mappings: []mappingRecord{
		{UUID: "11111111-2222-3333-4444-555555555555", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
	}}
	var logs bytes.Buffer
	now := time.Now()
	h := &pause.Handler{
		API: newClient(t, w), FunctionName: "herald-deliver",
		Cause:  errors.New("webhook signing secret: HERALD_WEBHOOK_SECRET: not base64"),
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Now:    func() time.Time { return now },
	}
	require.NoError(t, h.Validate())
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", EventSourceARN: queueArn}, {MessageId: "m2", EventSourceARN: queueArn},
	}}
	resp, err := h.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m1"}, {ItemIdentifier: "m2"}}, resp.BatchItemFailures, "the batch is handed back whole")
	require.Equal(t, "Disabling", w.mappings[0].State)

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 1, "one line per invocation")
	require.NoError(t, metrics.Validate([]byte(lines[0]), now))
	var l map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &l))
	require.Equal(t, "ERROR", l["level"])
	require.Equal(t, "webhook signing secret: HERALD_WEBHOOK_SECRET: not base64", l["error"])
	require.Equal(t, pause.ResumeCommand("11111111-2222-3333-4444-555555555555"), l["resume"])
	require.Equal(t, "aws lambda update-event-source-mapping --uuid 11111111-2222-3333-4444-555555555555 --enabled", l["resume"])
	require.EqualValues(t, 1, l[metrics.Paused])
}

func TestHandlerValidate(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, (&pause.Handler{FunctionName: "f", Cause: errors.New("x")}).Validate(), "nil API")
	c := lambda.New(lambda.Options{Region: "us-east-1"})
	require.ErrorContains(t, (&pause.Handler{API: c, Cause: errors.New("x")}).Validate(), "AWS_LAMBDA_FUNCTION_NAME")
	require.ErrorContains(t, (&pause.Handler{API: c, FunctionName: "f"}).Validate(), "Cause")
}
