package endpointsend_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/notification"
)

const (
	queueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-webhook"
	dlqURL   = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-webhook-dlq"
)

// deliverFunction is one execution environment's deliver function: a
// processor on the SQS wire fake whose webhook sender is s, with health
// (the circuit) in st when it is not nil.
func deliverFunction(t *testing.T, wire *sqstest.Server, s processor.Sender, st *store.Store) *processor.Processor {
	t.Helper()
	cfg := processor.Config{
		QueueURL: queueURL, DeadLetterQueueURL: dlqURL, MaxReceiveCount: 5,
		Backoff: backoff.Policy{Base: 10 * time.Second, Cap: time.Hour, Rand: func() float64 { return 0 }},
		Senders: map[notification.Channel]processor.Sender{notification.ChannelWebhook: s},
		Logger:  slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	if st != nil {
		b, err := circuit.New(circuit.Config{Rules: circuit.Rules{Threshold: 2}, Health: st})
		require.NoError(t, err)
		cfg.Middleware = []processor.Middleware{{Wrap: func(next processor.Sender) processor.Sender { return b.Wrap(next) }}}
	}
	p, err := processor.New(wire.Client(), cfg)
	require.NoError(t, err)
	return p
}

func newWire(t *testing.T) *sqstest.Server {
	t.Helper()
	wire := sqstest.New(t)
	wire.AddQueue(queueURL, nil)
	wire.AddQueue(dlqURL, nil)
	return wire
}

// deliveryRecord is the SQS record of the fan-out's delivery of event evt
// to endpoint ep of tenant, on its receive.
func deliveryRecord(evt, ep, tenant string, receive int, attrs map[string]events.SQSMessageAttribute) events.SQSMessage {
	id := endpoint.DeliveryID(evt, ep)
	return events.SQSMessage{
		MessageId: "sqs-" + id, ReceiptHandle: "rh-" + id, EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:herald-webhook",
		Body: fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","tenant":%q,"event_id":%q,"webhook":{"endpoint":%q,"event_type":"invoice.paid","payload":{"n":1}}}`,
			id, tenant, evt, ep),
		Attributes:        map[string]string{"ApproximateReceiveCount": strconv.Itoa(receive), "SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)},
		MessageAttributes: attrs,
	}
}

func handle(t *testing.T, p *processor.Processor, recs ...events.SQSMessage) events.SQSEventResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	resp, err := p.Handle(ctx, events.SQSEvent{Records: recs})
	require.NoError(t, err)
	return resp
}

// TestDeadLettersNameTenantAndEndpoint: deliveries to a disabled, an
// unknown and a wrong-kind endpoint are dead-lettered at once with their
// class, herald.tenant and herald.endpoint; the producer's attributes keep
// what fits beside herald's four (SQS's 10), the rest in the reason.
func TestDeadLettersNameTenantAndEndpoint(t *testing.T) {
	t.Parallel()
	recv := newReceiver(t, http.StatusOK)
	reg := &endpoints{}
	disabled := webhookEndpoint(ep1, recv.srv.URL, 'a')
	disabled.Disabled = &endpoint.Disabled{Reason: "paused", At: time.Now(), By: "operator"}
	reg.put(disabled)
	slack := webhookEndpoint(ep2, recv.srv.URL, 'b')
	slack.Kind = endpoint.KindSlack
	reg.put(slack)
	const unknown = "ep_01jekz5v8n3q4r5s6t7v8w9x0q"
	wire := newWire(t)
	p := deliverFunction(t, wire, endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg}), nil)
	many := map[string]events.SQSMessageAttribute{}
	for i := range 10 {
		many[fmt.Sprintf("p%02d", i)] = events.SQSMessageAttribute{DataType: "String", StringValue: ptr("v")}
	}
	resp := handle(t, p,
		deliveryRecord("evt_1", ep1, "acme", 1, nil),
		deliveryRecord("evt_1", unknown, "acme", 1, nil),
		deliveryRecord("evt_1", ep2, "acme", 1, many))
	require.Empty(t, resp.BatchItemFailures)
	require.Empty(t, recv.requests())

	want := map[string]string{ep1: string(endpointsend.ClassDisabled), unknown: string(endpointsend.ClassNotFound), ep2: string(endpointsend.ClassKindMismatch)}
	letters := wire.Messages(dlqURL)
	require.Len(t, letters, 3)
	for _, l := range letters {
		ep := str(l.MsgAttrs[redrive.AttrEndpoint].StringValue)
		require.Contains(t, want, ep)
		require.Equal(t, "acme", str(l.MsgAttrs[redrive.AttrTenant].StringValue))
		require.Equal(t, want[ep], str(l.MsgAttrs[redrive.AttrErrorClass].StringValue))
		require.LessOrEqual(t, len(l.MsgAttrs), redrive.MaxMessageAttributes)
		if ep == ep2 {
			require.Len(t, l.MsgAttrs, redrive.MaxMessageAttributes, "6 of the producer's 10 beside herald's 4")
			require.Contains(t, str(l.MsgAttrs[redrive.AttrReason].StringValue), `"overflow_attributes"`)
		}
	}
}

// TestCircuitActsPerEndpoint: failures of one endpoint open its own
// circuit (health keyed endpoint:<id>), not its origin's: another endpoint
// on the same host is still sent to.
func TestCircuitActsPerEndpoint(t *testing.T) {
	t.Parallel()
	st, _ := sharedPace(t)
	down := newReceiver(t, http.StatusServiceUnavailable)
	reg := &endpoints{}
	reg.put(webhookEndpoint(ep1, down.srv.URL+"/down", 'a'))
	reg.put(webhookEndpoint(ep2, down.srv.URL+"/other", 'b'))
	wire := newWire(t)
	p := deliverFunction(t, wire, endpointsend.ForWebhook(webhookSender(t, down), endpointsend.Config{Endpoints: reg}), st)
	for i := range 2 {
		handle(t, p, deliveryRecord(fmt.Sprintf("evt_%d", i), ep1, "acme", 1, nil))
	}
	h, err := st.Health(t.Context(), endpointsend.DestinationKey(ep1))
	require.NoError(t, err)
	require.Equal(t, 2, h.Failures)
	origin, err := st.Health(t.Context(), down.srv.URL)
	require.NoError(t, err)
	require.Zero(t, origin.Failures, "the origin's own health is untouched")

	sent := len(down.requests())
	resp := handle(t, p, deliveryRecord("evt_9", ep1, "acme", 1, nil), deliveryRecord("evt_9", ep2, "acme", 1, nil))
	require.Len(t, resp.BatchItemFailures, 2, "both retried: one circuit open, one a 503")
	require.Equal(t, sent+1, len(down.requests()), "only the endpoint with a closed circuit was sent to")
}

// TestRateLimitAcrossProcessors: two deliver functions (two processors,
// each with its own senders) share an endpoint's pace through one store:
// of two deliveries at once to an endpoint limited to one request per 10 s,
// whose invocations end in 4 s (2 s of it the processor's reserve), one is
// sent and the other retried (endpoint_rate_limited), whichever
// environment takes the first turn.
func TestRateLimitAcrossProcessors(t *testing.T) {
	t.Parallel()
	st, _ := sharedPace(t)
	recv := newReceiver(t, http.StatusOK)
	reg := &endpoints{}
	ep := webhookEndpoint(ep1, recv.srv.URL, 'a')
	ep.RateLimit = 0.1
	reg.put(ep)
	wire := newWire(t)
	envs := []*processor.Processor{
		deliverFunction(t, wire, endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg, Pace: st}), nil),
		deliverFunction(t, wire, endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg, Pace: st}), nil),
	}
	results := make(chan events.SQSEventResponse, 2)
	for i, p := range envs {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
			defer cancel()
			resp, err := p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{deliveryRecord(fmt.Sprintf("evt_%d", i), ep1, "acme", 1, nil)}})
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: err.Error()})
			}
			results <- resp
		}()
	}
	retried := 0
	for range envs {
		retried += len((<-results).BatchItemFailures)
	}
	require.Equal(t, 1, retried, "one of the two is retried")
	require.Len(t, recv.requests(), 1, "one request within the 10 s")
}

func ptr(s string) *string { return &s }

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
