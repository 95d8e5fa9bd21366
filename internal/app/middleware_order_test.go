package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
)

// TestDeliverDuplicateIsNoAnswerOfTheDestination: a copy that
// delivered-once settles as a duplicate (no request) is no answer of its
// destination for the circuit further out: it neither resets a closed
// circuit's count of failures (a success would) nor adds to it, and at an
// open circuit it gives the probe lease it took back, so the next record
// is the probe, sent, and its success closes the circuit.
func TestDeliverDuplicateIsNoAnswerOfTheDestination(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]string{"HERALD_DELIVERED_ONCE_CHANNELS": "webhook", "HERALD_CIRCUIT_THRESHOLD": "2"})
	origin, err := webhook.Origin(r.hook.URL)
	require.NoError(t, err)
	ctx := context.Background()

	require.Empty(t, r.handle(t, ctx, sqsRecord("m-1", r.webhookBody("n-1"), "1")))
	r.setAnswer(status(http.StatusServiceUnavailable))
	require.Equal(t, []string{"m-f1"}, r.handle(t, ctx, sqsRecord("m-f1", r.webhookBody("f-1"), "1")))
	require.Equal(t, 1, r.health(t, origin).Failures)

	require.Empty(t, r.handle(t, ctx, sqsRecord("m-1c", r.webhookBody("n-1"), "2")))
	lines, _ := r.lines(t)
	require.Equal(t, "duplicate", lines["m-1c"]["outcome"])
	require.Equal(t, 1, r.postsOf("n-1"), "the copy is not sent")
	require.Equal(t, 1, r.health(t, origin).Failures, "a duplicate is no success of the destination")

	require.Equal(t, []string{"m-f2"}, r.handle(t, ctx, sqsRecord("m-f2", r.webhookBody("f-2"), "1")))
	h := r.health(t, origin)
	require.Equal(t, 2, h.Failures, "open at the threshold")

	// The probe time comes (the last failure two minutes ago): the copy
	// takes the probe lease, is a duplicate, and gives the lease back.
	_, wrote, err := r.st.UpdateHealth(ctx, h, func(h *store.Health) bool {
		h.LastFailure = time.Now().Add(-2 * time.Minute)
		return true
	})
	require.NoError(t, err)
	require.True(t, wrote)
	r.coldStart() // an environment that reads the health afresh
	require.Empty(t, r.handle(t, ctx, sqsRecord("m-1d", r.webhookBody("n-1"), "3")))
	lines, _ = r.lines(t)
	require.Equal(t, "duplicate", lines["m-1d"]["outcome"], "%v", lines["m-1d"])
	h = r.health(t, origin)
	require.Equal(t, 2, h.Failures, "a duplicate is no failure of the destination")
	require.Empty(t, h.ProbeOwner, "the probe lease is given back")

	r.setAnswer(nil)
	require.Empty(t, r.handle(t, ctx, sqsRecord("m-2", r.webhookBody("n-2"), "1")), "the next record is the probe")
	require.Equal(t, 1, r.postsOf("n-2"))
	require.Zero(t, r.health(t, origin).Failures, "the probe's success closes the circuit")
}

// TestDeliverSendCutByTheDeadline: a batch the invocation's deadline cuts
// short (the deliveries end Reserve, 2 s, before it): the send that was
// cut is retried as invocation_deadline, is no failure of its destination
// (the circuit counts nothing) and gives its delivered-once lease up, so
// its copy is sent at once; the batch's other record, delivered before the
// cut, is still confirmed by the batch's one write, so its copy is a
// duplicate, not sent again.
func TestDeliverSendCutByTheDeadline(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]string{"HERALD_DELIVERED_ONCE_CHANNELS": "webhook", "HERALD_CIRCUIT_THRESHOLD": "1"})
	origin, err := webhook.Origin(r.hook.URL)
	require.NoError(t, err)
	r.setAnswer(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("webhook-id") == "slow" {
			select { // until herald gives the request up
			case <-req.Context().Done():
			case <-time.After(20 * time.Second):
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	require.Equal(t, []string{"m-slow"}, r.handle(t, ctx,
		sqsRecord("m-fast", r.webhookBody("fast"), "1"), sqsRecord("m-slow", r.webhookBody("slow"), "1")))
	lines, _ := r.lines(t)
	require.Equal(t, "delivered", lines["m-fast"]["outcome"])
	require.Equal(t, "retry", lines["m-slow"]["outcome"])
	require.Equal(t, "invocation_deadline", lines["m-slow"]["error_class"])
	require.NotContains(t, lines["m-slow"], "store_error", "the lease is released after the send's own end")
	require.Zero(t, r.health(t, origin).Failures, "the invocation's deadline is no failure of the destination (threshold 1 would open it)")

	r.setAnswer(nil)
	require.Empty(t, r.handle(t, context.Background(),
		sqsRecord("m-fast2", r.webhookBody("fast"), "2"), sqsRecord("m-slow2", r.webhookBody("slow"), "2")))
	lines, _ = r.lines(t)
	require.Equal(t, "duplicate", lines["m-fast2"]["outcome"], "confirmed in the cut batch: %v", lines["m-fast2"])
	require.Equal(t, "delivered", lines["m-slow2"]["outcome"], "the cut send gave its lease up: %v", lines["m-slow2"])
	require.Equal(t, 1, r.postsOf("fast"))
	require.Equal(t, 2, r.postsOf("slow"))
}

// TestDeliverFailedSendGivesItsLeaseUp: a send the destination refused
// (503) releases its delivered-once lease, and the circuit counts the
// failure; the copy is sent, and its delivery closes the count again.
func TestDeliverFailedSendGivesItsLeaseUp(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]string{"HERALD_DELIVERED_ONCE_CHANNELS": "webhook", "HERALD_CIRCUIT_THRESHOLD": "3"})
	origin, err := webhook.Origin(r.hook.URL)
	require.NoError(t, err)
	r.setAnswer(status(http.StatusServiceUnavailable))
	require.Equal(t, []string{"m-1"}, r.handle(t, context.Background(), sqsRecord("m-1", r.webhookBody("n-1"), "1")))
	require.Equal(t, 1, r.health(t, origin).Failures)
	require.Zero(t, r.deliveryItems(), "the failed send's lease is deleted")
	r.setAnswer(nil)
	require.Empty(t, r.handle(t, context.Background(), sqsRecord("m-1b", r.webhookBody("n-1"), "2")))
	require.Equal(t, 2, r.postsOf("n-1"))
	require.Zero(t, r.health(t, origin).Failures)
}

// TestDeliverFIFOGroupBehindAnOpenCircuit: in a FIFO group, a record its
// destination's open circuit holds back stops the rest of its group: they
// are skipped, not sent, and take no delivered-once lease, also those to
// a healthy destination; another group goes on.
func TestDeliverFIFOGroupBehindAnOpenCircuit(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]string{"HERALD_DELIVERED_ONCE_CHANNELS": "webhook", "HERALD_CIRCUIT_THRESHOLD": "1"})
	down := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	t.Cleanup(down.Close)
	downBody := func(id string) string {
		return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + down.URL + `/h","event_type":"t","payload":{}}}`
	}
	// down's certificate is another httptest one: the rig trusts only its
	// receiver's, so the first failure is TLS (an origin-down class).
	require.Equal(t, []string{"m-0"}, r.handle(t, context.Background(), sqsRecord("m-0", downBody("d-0"), "1")))
	inGroup := func(m events.SQSMessage, g string) events.SQSMessage {
		m.Attributes["MessageGroupId"] = g
		return m
	}
	require.Equal(t, []string{"m-a1", "m-a2"}, r.handle(t, context.Background(),
		inGroup(sqsRecord("m-a1", downBody("d-1"), "1"), "a"),
		inGroup(sqsRecord("m-a2", r.webhookBody("ok-a2"), "1"), "a"),
		inGroup(sqsRecord("m-b1", r.webhookBody("ok-b1"), "1"), "b")))
	lines, _ := r.lines(t)
	require.Equal(t, "destination_circuit_open", lines["m-a1"]["error_class"], "%v", lines["m-a1"])
	require.Equal(t, "skipped", lines["m-a2"]["outcome"])
	require.Equal(t, "delivered", lines["m-b1"]["outcome"])
	require.Zero(t, r.postsOf("ok-a2"))
	require.Equal(t, 2, r.deliveryItems(), "ok-b1's lease and its batch's confirm only")
}

// TestDeliverEndpointKeyReachesTheCircuit: a delivery to a registered
// endpoint is counted in the endpoint's own health (endpoint:ep_…), the
// key endpointsend names, through tracing's and delivered-once's wrappers
// and the processor's: at threshold 1 its failure opens that endpoint's
// circuit alone — the next delivery to it is held back naming it, while
// an inline webhook to the same origin is still sent and the origin has
// no health of its own.
func TestDeliverEndpointKeyReachesTheCircuit(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]string{"HERALD_DELIVERED_ONCE_CHANNELS": "webhook,email", "HERALD_CIRCUIT_THRESHOLD": "1"})
	key := r.kms.CreateKey("alias/herald-endpoints")
	tbl, err := endpoint.NewTable(endpoint.TableConfig{Table: "herald", KeyID: key, DB: r.ddb.Client(), KMS: r.kms.Client(),
		URLRules: endpoint.URLRules{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	require.NoError(t, err)
	ep, err := tbl.Create(context.Background(), endpoint.Endpoint{Tenant: "acme", Kind: endpoint.KindWebhook, URL: r.hook.URL + "/ep"})
	require.NoError(t, err)
	delivery := func(id string) string {
		return `{"version":1,"id":"` + id + `","channel":"webhook","tenant":"acme","event_id":"evt-` + id + `","webhook":{"endpoint":"` + ep.ID + `","event_type":"t","payload":{}}}`
	}
	origin, err := webhook.Origin(r.hook.URL)
	require.NoError(t, err)

	r.setAnswer(status(http.StatusServiceUnavailable))
	require.Equal(t, []string{"m-1"}, r.handle(t, context.Background(), sqsRecord("m-1", delivery("d-1"), "1")))
	require.Equal(t, 1, r.health(t, endpointsend.DestinationKey(ep.ID)).Failures, "counted in the endpoint's health")
	require.Zero(t, r.health(t, origin).Failures, "not in its origin's")

	r.setAnswer(nil)
	require.Equal(t, []string{"m-2"}, r.handle(t, context.Background(),
		sqsRecord("m-2", delivery("d-2"), "1"), sqsRecord("m-3", r.webhookBody("inline-3"), "1")))
	lines, _ := r.lines(t)
	require.Equal(t, "destination_circuit_open", lines["m-2"]["error_class"], "%v", lines["m-2"])
	require.Contains(t, lines["m-2"]["error"], "endpoint:"+ep.ID)
	r.mu.Lock()
	require.Len(t, r.posts, 2, "d-1 and inline-3: d-2 is not sent")
	r.mu.Unlock()
	require.Equal(t, "delivered", lines["m-3"]["outcome"], "another destination on the origin is sent")
}

// TestDeliverStoreFailureFailsOpenOnce: a destination's health the store
// cannot read fails open: the records to it are sent; the failed read is
// noted on the one record that made it (store_error on its line,
// StoreErrors 1 for the batch), not on the others.
func TestDeliverStoreFailureFailsOpenOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]string{"HERALD_CIRCUIT_THRESHOLD": "3"})
	r.ddb.Fail("GetItem", 1)
	require.Empty(t, r.handle(t, context.Background(),
		sqsRecord("m-1", r.webhookBody("n-1"), "1"), sqsRecord("m-2", r.webhookBody("n-2"), "1"), sqsRecord("m-3", r.webhookBody("n-3"), "1")))
	lines, _ := r.lines(t)
	noted := 0
	for _, id := range []string{"m-1", "m-2", "m-3"} {
		require.Equal(t, "delivered", lines[id]["outcome"], id)
		if _, ok := lines[id]["store_error"]; ok {
			noted++
		}
	}
	require.Equal(t, 1, noted, "the one failed read, on the record that made it")
	require.Equal(t, 1.0, r.batchSum(t, "StoreErrors"))
}
