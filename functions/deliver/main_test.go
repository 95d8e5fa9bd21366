package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/eventbridgetest"
	"github.com/heraldhq/herald/internal/testkit/pausetest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/internal/webhook"
)

const (
	secret   = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	account  = "123456789012"
	function = "herald-deliver"
)

// queue is one channel's queue pair as the stack makes it.
type queue struct{ url, dlq, arn string }

func queueOf(name string) queue {
	return queue{
		url: "https://sqs.us-east-1.amazonaws.com/" + account + "/" + name,
		dlq: "https://sqs.us-east-1.amazonaws.com/" + account + "/" + name + "-dlq",
		arn: "arn:aws:sqs:us-east-1:" + account + ":" + name,
	}
}

var (
	hooks = queueOf("herald-webhook")
	mails = queueOf("herald-email")
)

// stack is the AWS side of a cold start: SQS, DynamoDB, EventBridge and the
// Lambda API's event source mappings (one per queue, enabled), each a wire
// fake the SDK reaches through its endpoint variables.
type stack struct {
	sqs    *sqstest.Server
	ddb    *dynamotest.Server
	events *eventbridgetest.Server
	lambda *pausetest.Lambda
	// posts are the webhooks the receiver got; receiver is its URL.
	receiver string
	posts    func() []*http.Request
	bodies   func() [][]byte
}

// setup starts the fakes, points the SDK at them and sets the process's
// environment to env over a configuration that works: a webhook and an
// email queue that agree with the settings, the store, plain http to
// 127.0.0.1 allowed.
func setup(t *testing.T, env map[string]string) *stack {
	s := &stack{sqs: sqstest.New(t), ddb: dynamotest.New(t), events: eventbridgetest.New(t)}
	for _, q := range []queue{hooks, mails} {
		s.sqs.AddQueue(q.url, map[string]string{
			"MessageRetentionPeriod": "345600",
			"RedrivePolicy":          `{"deadLetterTargetArn":"` + q.arn + `-dlq","maxReceiveCount":13}`,
		})
		s.sqs.AddQueue(q.dlq, map[string]string{"MessageRetentionPeriod": "1209600"})
	}
	s.ddb.AddTable("herald", store.AttrPK, store.AttrSK)
	s.lambda = &pausetest.Lambda{Mappings: []pausetest.Mapping{
		{UUID: "map-webhook", FunctionArn: "arn:aws:lambda:us-east-1:" + account + ":function:" + function, EventSourceArn: hooks.arn, State: "Enabled"},
		{UUID: "map-email", FunctionArn: "arn:aws:lambda:us-east-1:" + account + ":function:" + function, EventSourceArn: mails.arn, State: "Enabled"},
	}}
	lambdaAPI := httptest.NewServer(s.lambda)
	t.Cleanup(lambdaAPI.Close)

	var mu sync.Mutex
	var posts []*http.Request
	var bodies [][]byte
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts, bodies = append(posts, r), append(bodies, b)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	s.receiver = rcv.URL
	s.posts = func() []*http.Request { mu.Lock(); defer mu.Unlock(); return append([]*http.Request(nil), posts...) }
	s.bodies = func() [][]byte { mu.Lock(); defer mu.Unlock(); return append([][]byte(nil), bodies...) }

	awstest.Setenv(t, map[string]string{"SQS": s.sqs.URL(), "DYNAMODB": s.ddb.URL(), "LAMBDA": lambdaAPI.URL, "EVENTBRIDGE": s.events.URL()})
	vars := map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME":   function,
		"HERALD_WEBHOOK_QUEUE_URL":   hooks.url,
		"HERALD_WEBHOOK_DLQ_URL":     hooks.dlq,
		"HERALD_EMAIL_QUEUE_URL":     mails.url,
		"HERALD_EMAIL_DLQ_URL":       mails.dlq,
		"HERALD_WEBHOOK_SECRET":      secret,
		"HERALD_WEBHOOK_ALLOW_HTTP":  "true",
		"HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
		"HERALD_STORE_TABLE":         "herald",
	}
	for k, v := range env {
		vars[k] = v
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	return s
}

// batch is a batch of the queue q as the event source mapping hands it
// over, one record per body.
func batch(q queue, bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: "m-" + strconv.Itoa(i+1), ReceiptHandle: "rh-" + strconv.Itoa(i+1), Body: b,
			EventSourceARN: q.arn, Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		})
	}
	return ev
}

func webhookBody(id, url string) string {
	return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + url + `/h","event_type":"invoice.paid","payload":{"invoice_id":"INV-1"}}}`
}

func failures(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// TestStartDelivers: a cold start with a good configuration checks the
// queues, pauses nothing, sets GOMAXPROCS from the memory size, and its
// handler delivers a webhook batch (signed; remembered in the store, as
// HERALD_DELIVERED_ONCE_CHANNELS asks for webhooks too, so a copy is not
// sent again), writing its log lines to stdout.
func TestStartDelivers(t *testing.T) {
	s := setup(t, map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128", "HERALD_DELIVERED_ONCE_CHANNELS": "email,webhook,chat"})
	t.Cleanup(func() { runtime.GOMAXPROCS(runtime.NumCPU()) })
	var stdout, stderr localenv.SyncBuffer
	handle, err := start(context.Background(), &stdout, &stderr)
	require.NoError(t, err)
	require.Equal(t, 1, runtime.GOMAXPROCS(0), "128 MB pays for one vCPU")
	require.Len(t, s.sqs.Requests("GetQueueAttributes"), 4, "both queues and their dead-letter queues checked")
	require.Empty(t, s.lambda.Updates, "nothing paused")

	for range 2 {
		resp, err := handle(context.Background(), batch(hooks, webhookBody("evt-1", s.receiver)))
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
	}
	posts, bodies := s.posts(), s.bodies()
	require.Len(t, posts, 1, "the copy is not sent again")
	ts, err := strconv.ParseInt(posts[0].Header.Get("webhook-timestamp"), 10, 64)
	require.NoError(t, err)
	derived, err := webhook.DeriveSecret(secret, s.receiver) // the destination's own secret (the default scope)
	require.NoError(t, err)
	key, err := webhook.DecodeSecret(derived)
	require.NoError(t, err)
	require.NoError(t, webhook.Verify([][]byte{key}, "evt-1", time.Unix(ts, 0), bodies[0], posts[0].Header.Get("webhook-signature"), time.Now(), time.Minute))
	require.NotEmpty(t, s.ddb.Items("herald"), "the delivered-once record")
	require.Contains(t, stdout.String(), `"id":"evt-1"`)
	require.Empty(t, stderr.String())
	require.Empty(t, s.lambda.Updates)
}

// TestStartDegradedOnABadConfiguration: with a configuration it cannot
// use, the cold start still succeeds; each batch then pauses its queue's
// mapping, hands every record back and logs the cause with the resume
// command on stdout.
func TestStartDegradedOnABadConfiguration(t *testing.T) {
	s := setup(t, map[string]string{"HERALD_MAX_RECEIVE_COUNT": "zero"})
	var stdout, stderr localenv.SyncBuffer
	handle, err := start(context.Background(), &stdout, &stderr)
	require.NoError(t, err)
	require.Empty(t, s.lambda.Updates, "nothing paused before a batch")
	require.Empty(t, s.sqs.Requests("GetQueueAttributes"), "no queue checked")

	resp, err := handle(context.Background(), batch(hooks, webhookBody("evt-1", s.receiver), webhookBody("evt-2", s.receiver)))
	require.NoError(t, err)
	require.Equal(t, []string{"m-1", "m-2"}, failures(resp), "both handed back")
	require.Equal(t, []string{"map-webhook"}, s.lambda.Updates)
	require.Empty(t, s.posts())
	require.Contains(t, stdout.String(), `"level":"ERROR"`)
	require.Contains(t, stdout.String(), "configuration: HERALD_MAX_RECEIVE_COUNT")
	require.Contains(t, stdout.String(), "update-event-source-mapping --uuid map-webhook --enabled")
	require.Empty(t, stderr.String())
}

// TestStartPausesAQueueItCannotServe: a queue that disagrees with the
// settings has its mapping paused at the cold start, before any batch,
// and its batches are handed back; the other queue's are delivered.
func TestStartPausesAQueueItCannotServe(t *testing.T) {
	s := setup(t, nil)
	s.sqs.AddQueue(mails.url, map[string]string{"MessageRetentionPeriod": "345600"}) // no RedrivePolicy
	var stdout, stderr localenv.SyncBuffer
	handle, err := start(context.Background(), &stdout, &stderr)
	require.NoError(t, err)
	require.Equal(t, []string{"map-email"}, s.lambda.Updates, "paused before the first batch")
	require.Contains(t, stdout.String(), "paused channel email")
	require.Contains(t, stdout.String(), "has no RedrivePolicy")
	require.Empty(t, stderr.String())

	resp, err := handle(context.Background(), batch(mails, `{"version":1,"id":"mail-1","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"t"}}`))
	require.NoError(t, err)
	require.Equal(t, []string{"m-1"}, failures(resp), "handed back")
	resp, err = handle(context.Background(), batch(hooks, webhookBody("evt-1", s.receiver)))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, s.posts(), 1)
}

// TestStartWhenAPauseAtStartFails: a queue whose mapping cannot be paused
// at the cold start (none exists) is reported on stderr; the function
// starts, and that queue's batches are still handed back.
func TestStartWhenAPauseAtStartFails(t *testing.T) {
	s := setup(t, nil)
	s.sqs.AddQueue(mails.url, map[string]string{"MessageRetentionPeriod": "345600"})
	s.lambda.Mappings = s.lambda.Mappings[:1] // the webhook queue's only
	var stdout, stderr localenv.SyncBuffer
	handle, err := start(context.Background(), &stdout, &stderr)
	require.NoError(t, err)
	require.Empty(t, s.lambda.Updates)
	require.Contains(t, stderr.String(), "herald deliver: pause at start: ")
	require.Contains(t, stderr.String(), "herald-email")

	resp, err := handle(context.Background(), batch(mails, `{}`))
	require.Error(t, err, "the pause fails again: a function error")
	require.Equal(t, []string{"m-1"}, failures(resp))
}

// TestStartFails: the cold start fails, and the function does not start,
// only when it could not pause: without an AWS configuration, or without
// its own name when something needs pausing.
func TestStartFails(t *testing.T) {
	for name, c := range map[string]struct {
		env  map[string]string
		bad  bool
		want []string
	}{
		"no AWS configuration": {env: map[string]string{"AWS_PROFILE": "no-such-profile"},
			want: []string{"load AWS config", "no-such-profile"}},
		"bad configuration, no function name": {env: map[string]string{"HERALD_MAX_RECEIVE_COUNT": "zero", "AWS_LAMBDA_FUNCTION_NAME": ""},
			want: []string{"configuration: HERALD_MAX_RECEIVE_COUNT", "; pause: FunctionName is required (AWS_LAMBDA_FUNCTION_NAME)"}},
		"a queue to pause, no function name": {env: map[string]string{"AWS_LAMBDA_FUNCTION_NAME": ""}, bad: true,
			want: []string{"cannot pause the queues it cannot serve: AWS_LAMBDA_FUNCTION_NAME is not set"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := setup(t, c.env)
			if c.bad {
				s.sqs.AddQueue(mails.url, map[string]string{"MessageRetentionPeriod": "345600"})
			}
			var stdout, stderr localenv.SyncBuffer
			handle, err := start(context.Background(), &stdout, &stderr)
			require.Nil(t, handle)
			for _, w := range c.want {
				require.ErrorContains(t, err, w)
			}
			require.Empty(t, s.lambda.Updates)
		})
	}
}

// TestStartWithoutItsNameWhenNothingNeedsPausing: the function's name is
// needed only to pause; with a good configuration and queues that agree,
// the cold start succeeds without it.
func TestStartWithoutItsNameWhenNothingNeedsPausing(t *testing.T) {
	s := setup(t, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": ""})
	var stdout, stderr localenv.SyncBuffer
	handle, err := start(context.Background(), &stdout, &stderr)
	require.NoError(t, err)
	// As Lambda invokes it: the SQS event's JSON in, the partial batch
	// response's out.
	payload, err := json.Marshal(batch(hooks, webhookBody("evt-1", s.receiver)))
	require.NoError(t, err)
	out, err := lambda.NewHandler(handle).Invoke(context.Background(), payload)
	require.NoError(t, err)
	var resp events.SQSEventResponse
	require.NoError(t, json.Unmarshal(out, &resp), "%s", out)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, s.posts(), 1)
}

// TestStartAnnouncesADisabledDestination: with the store, the circuit and
// HERALD_EVENT_BUS, a failure that disables a webhook origin (failing for
// longer than HERALD_DESTINATION_DISABLE_AFTER_SECONDS, its circuit open)
// puts destination.disabled on the bus.
func TestStartAnnouncesADisabledDestination(t *testing.T) {
	s := setup(t, map[string]string{
		"HERALD_EVENT_BUS": "herald-ops", "HERALD_CIRCUIT_THRESHOLD": "2", "HERALD_DESTINATION_DISABLE_AFTER_SECONDS": "60",
	})
	s.events.AddBus("herald-ops")
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	origin, err := webhook.Origin(down.URL)
	require.NoError(t, err)
	st, err := store.New(s.ddb.Client(), store.Config{Table: "herald"})
	require.NoError(t, err)
	since := time.Now().Add(-time.Hour)
	_, _, err = st.UpdateHealth(context.Background(), store.Health{Origin: origin}, func(h *store.Health) bool {
		h.Failures, h.FailureClass, h.FailingSince, h.LastFailure = 1, "webhook_http_5xx", since, since
		return true
	})
	require.NoError(t, err)

	var stdout, stderr localenv.SyncBuffer
	handle, err := start(context.Background(), &stdout, &stderr)
	require.NoError(t, err)
	resp, err := handle(context.Background(), batch(hooks, webhookBody("evt-1", down.URL)))
	require.NoError(t, err)
	require.Equal(t, []string{"m-1"}, failures(resp), "retried later")

	got := s.events.Events()
	require.Len(t, got, 1, "%s", stdout.String())
	require.Equal(t, "herald-ops", got[0].Bus)
	require.Equal(t, "herald", got[0].Source)
	require.Equal(t, "destination.disabled", got[0].DetailType)
	require.Equal(t, origin, got[0].Detail["origin"])
	require.Equal(t, "disabled", got[0].Detail["state"])
	require.Equal(t, float64(2), got[0].Detail["consecutive_failures"])
}
