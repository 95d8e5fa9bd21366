package processor_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/testclock"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// receiver is a webhook receiver on 127.0.0.1 that answers status (200
// unless set) and counts its requests; gate, when set, makes it wait for
// the channel to close before answering and says on arrived that a request
// came. The gate holds one request, the first after it is set.
type receiver struct {
	srv      *httptest.Server
	requests atomic.Int32
	status   atomic.Int32
	gate     atomic.Pointer[chan struct{}]
	arrived  chan struct{}
}

func newReceiver(t *testing.T, status int) *receiver {
	t.Helper()
	r := &receiver{arrived: make(chan struct{}, 100)}
	r.status.Store(int32(status))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if g := r.gate.Swap(nil); g != nil {
			r.arrived <- struct{}{}
			<-*g
		}
		w.WriteHeader(int(r.status.Load()))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) body(id string) string {
	return fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":"%s/hooks/secret-path","event_type":"t","payload":{}}}`, id, r.srv.URL)
}

type circuitSetup struct {
	// clock is the environments' and the store's: an hour ahead of the wall
	// clock (so that an invocation's deadline taken from it lies in the
	// future), moved only by the test.
	clock *testclock.Clock
	ddb   *dynamotest.Server
	st    *store.Store
}

// environments builds n execution environments of the deliver function
// sharing one store, each with the real webhook sender (plain HTTP to
// 127.0.0.1), one record at a time (so the order of failures within a
// batch is exact), threshold 3 and a 60 s probe interval.
func environments(t *testing.T, n int, mutate func(*processor.Config)) (*circuitSetup, []*bundle) {
	t.Helper()
	return environmentsWith(t, n, mutate, nil)
}

// environmentsWith is environments whose circuit (package circuit's
// Breaker, one per environment, the processor's middleware) circ
// changes.
func environmentsWith(t *testing.T, n int, mutate func(*processor.Config), circ func(*circuit.Config)) (*circuitSetup, []*bundle) {
	t.Helper()
	cs := &circuitSetup{clock: testclock.New(time.Now().Add(time.Hour).Truncate(time.Second)), ddb: dynamotest.New(t)}
	cs.ddb.AddTable(onceTable, store.AttrPK, store.AttrSK)
	var err error
	cs.st, err = store.New(cs.ddb.Client(), store.Config{Table: onceTable, Now: cs.clock.Now})
	require.NoError(t, err)
	var envs []*bundle
	for range n {
		hook, err := webhook.NewSender(webhook.Config{
			Secret:     "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			Timeout:    5 * time.Second,
			AllowHTTP:  true,
			AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		})
		require.NoError(t, err)
		envs = append(envs, setup(t, func(c *processor.Config) {
			c.Senders = map[notification.Channel]processor.Sender{notification.ChannelWebhook: hook}
			c.Concurrency, c.Now = 1, cs.clock.Now
			cc := circuit.Config{Rules: circuit.Rules{Threshold: 3, ProbeInterval: time.Minute}, Health: cs.st, Logger: c.Logger, Now: cs.clock.Now}
			if circ != nil {
				circ(&cc)
			}
			b, err := circuit.New(cc)
			require.NoError(t, err)
			c.Middleware = append(c.Middleware, processor.Middleware{Wrap: func(next processor.Sender) processor.Sender { return b.Wrap(next) }})
			if mutate != nil {
				mutate(c)
			}
		}))
	}
	return cs, envs
}

// invoke hands recs to env in an invocation 30 s long by the test's clock.
func (cs *circuitSetup) invoke(t *testing.T, env *bundle, recs ...events.SQSMessage) events.SQSEventResponse {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), cs.clock.Now().Add(30*time.Second))
	defer cancel()
	return handle(t, env, ctx, recs...)
}

func (cs *circuitSetup) health(t *testing.T, r *receiver) store.Health {
	t.Helper()
	h, err := cs.st.Health(context.Background(), "http://"+r.srv.Listener.Addr().String())
	require.NoError(t, err)
	return h
}

// TestCircuitHoldsBackAFailingOriginNotAHealthyOne: two execution
// environments take turns at 10 batches, each of 5 records to an origin
// answering 503 and 5 to one answering 200, 10 s apart. The failing origin
// gets its 3 failures (the threshold) and one probe a minute later: 4
// requests for 50 records; the healthy one gets all 50, each delivered.
// The held-back records are retried at the probe time, never before their
// backoff delay.
func TestCircuitHoldsBackAFailingOriginNotAHealthyOne(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 2, nil)
	down, up := newReceiver(t, http.StatusServiceUnavailable), newReceiver(t, http.StatusOK)
	start := cs.clock.Now()
	for batch := range 10 {
		var recs []events.SQSMessage
		for i := range 5 {
			recs = append(recs,
				rec(fmt.Sprintf("down-%d-%d", batch, i), down.body(fmt.Sprintf("d-%d-%d", batch, i)), 1),
				rec(fmt.Sprintf("up-%d-%d", batch, i), up.body(fmt.Sprintf("u-%d-%d", batch, i)), 1))
		}
		env := envs[batch%2]
		resp := cs.invoke(t, env, recs...)
		require.Len(t, failures(resp), 5, "batch %d: the failing origin's records come back, no other", batch)
		lines := logLines(t, env)
		for i := range 5 {
			require.Equal(t, "delivered", lines[fmt.Sprintf("up-%d-%d", batch, i)]["outcome"])
		}
		cs.clock.Advance(10 * time.Second)
	}
	require.Equal(t, int32(50), up.requests.Load())
	require.Equal(t, int32(3+1), down.requests.Load(), "the threshold's failures, then one probe at 60 s")

	// Batch 0: three failures open the circuit; the other two wait for the
	// probe time, 60 s after the last failure (above the 10 s backoff).
	lines := logLines(t, envs[0])
	held := 0
	for i := range 5 {
		l := lines[fmt.Sprintf("down-0-%d", i)]
		require.Equal(t, "retry", l["outcome"])
		if l["error_class"] == string(circuit.ClassCircuitOpen) {
			held++
			require.NotContains(t, l["error"], "secret-path", "the reason names the origin, never the path")
		}
	}
	require.Equal(t, 2, held)
	// Which records are attempted first is the scheduler's choice (one
	// goroutine per record, one at a time): each is judged by its class.
	vis := visibilityEntries(t, envs[0])
	for i := range 5 {
		id := fmt.Sprintf("down-0-%d", i)
		if lines[id]["error_class"] == string(circuit.ClassCircuitOpen) {
			require.Equal(t, 60, vis["rh-"+id], "%s held back until the probe time", id)
		} else {
			require.Equal(t, 10, vis["rh-"+id], "%s: a failed attempt keeps its backoff", id)
		}
	}

	h := cs.health(t, down)
	require.Equal(t, 4, h.Failures)
	require.Equal(t, "webhook_http_5xx", h.FailureClass)
	require.Equal(t, start.Add(60*time.Second), h.LastFailure, "the probe's failure")
	require.True(t, h.ProbeUntil.IsZero(), "the failed probe gave its lease back")
	require.Equal(t, 0, cs.health(t, up).Failures)
}

// TestCircuitProbeSuccessCloses: the origin recovers; the first record
// after the probe time is the probe, its success closes the circuit, and
// the rest of its batch is sent.
func TestCircuitProbeSuccessCloses(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 1, nil)
	r := newReceiver(t, http.StatusBadGateway)
	var recs []events.SQSMessage
	for i := range 5 {
		recs = append(recs, rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	require.Len(t, failures(cs.invoke(t, envs[0], recs...)), 5)
	require.Equal(t, int32(3), r.requests.Load())

	// Before the probe time nothing is sent.
	cs.clock.Advance(59 * time.Second)
	require.Len(t, failures(cs.invoke(t, envs[0], rec("b-0", r.body("b-0"), 2))), 1)
	require.Equal(t, int32(3), r.requests.Load())

	r.status.Store(http.StatusOK)
	cs.clock.Advance(time.Second)
	recs = nil
	for i := range 5 {
		recs = append(recs, rec(fmt.Sprintf("c-%d", i), r.body(fmt.Sprintf("c-%d", i)), 2))
	}
	require.Empty(t, failures(cs.invoke(t, envs[0], recs...)))
	require.Equal(t, int32(3+5), r.requests.Load())
	h := cs.health(t, r)
	require.Equal(t, 0, h.Failures)
	require.Equal(t, cs.clock.Now(), h.LastSuccess)
}

// TestCircuitOneProbeAtATime: while one environment's probe is in flight,
// another environment past the probe time sends nothing to the origin:
// the probe lease is taken by one conditional write.
func TestCircuitOneProbeAtATime(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 2, nil)
	r := newReceiver(t, http.StatusInternalServerError)
	var recs []events.SQSMessage
	for i := range 3 {
		recs = append(recs, rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.invoke(t, envs[0], recs...)
	require.Equal(t, 3, cs.health(t, r).Failures)
	cs.clock.Advance(time.Minute)

	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release) // runs before the receiver closes: a failed check never leaves it waiting
	r.gate.Store(&gate)
	done := make(chan events.SQSEventResponse, 1)
	go func() {
		ctx, cancel := context.WithDeadline(context.Background(), cs.clock.Now().Add(30*time.Second))
		defer cancel()
		resp, _ := envs[0].p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{rec("probe", r.body("probe"), 2)}})
		done <- resp
	}()
	select {
	case <-r.arrived:
	case resp := <-done: // the probe never reached the origin: fail now, not at the test's timeout
		t.Fatalf("the probe was not sent; Handle answered %v", failures(resp))
	}
	require.False(t, cs.health(t, r).ProbeUntil.IsZero(), "the probe holds its lease")
	resp := cs.invoke(t, envs[1], rec("b-0", r.body("b-0"), 2), rec("b-1", r.body("b-1"), 2))
	require.Len(t, failures(resp), 2)
	for _, id := range []string{"b-0", "b-1"} {
		require.Equal(t, string(circuit.ClassCircuitOpen), logLines(t, envs[1])[id]["error_class"])
	}
	require.Equal(t, int32(4), r.requests.Load(), "only the probe reached the origin")
	r.status.Store(http.StatusOK)
	release()
	require.Empty(t, failures(<-done))
	require.Equal(t, 0, cs.health(t, r).Failures, "the probe's success closed the circuit")
}

// TestCircuitIgnoresFailuresOfOneNotification: answers that refuse one
// notification (400, 404, 410, 413, 422) and a redirect never open the
// circuit: every record is sent.
func TestCircuitIgnoresFailuresOfOneNotification(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusGone, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity, http.StatusFound} {
		cs, envs := environments(t, 1, nil)
		r := newReceiver(t, status)
		var recs []events.SQSMessage
		for i := range 8 {
			recs = append(recs, rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
		}
		cs.invoke(t, envs[0], recs...)
		require.Equal(t, int32(8), r.requests.Load(), "status %d", status)
		require.Equal(t, 0, cs.health(t, r).Failures, "status %d", status)
	}
}

// TestCircuitCountsEveryKindOfOriginDown: 503, 500, 429, 408 and a refused
// connection each open the circuit after the threshold.
func TestCircuitCountsEveryKindOfOriginDown(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusTooManyRequests, http.StatusRequestTimeout, 0} {
		cs, envs := environments(t, 1, nil)
		r := newReceiver(t, status)
		url := r.srv.URL
		if status == 0 {
			r.srv.Close() // nothing listens: connection refused
		}
		var recs []events.SQSMessage
		for i := range 6 {
			recs = append(recs, rec(fmt.Sprintf("a-%d", i), fmt.Sprintf(`{"version":1,"id":"a-%d","channel":"webhook","webhook":{"url":"%s/h","event_type":"t","payload":{}}}`, i, url), 1))
		}
		cs.invoke(t, envs[0], recs...)
		if status != 0 {
			require.Equal(t, int32(3), r.requests.Load(), "status %d", status)
		}
		held := 0
		for _, l := range logLines(t, envs[0]) {
			if l["error_class"] == string(circuit.ClassCircuitOpen) {
				held++
			}
		}
		require.Equal(t, 3, held, "status %d", status)
	}
}

// TestCircuitHeldBackRecordsSpendReceivesNoFaster: a held-back record waits
// its backoff delay when that is later than the probe time, and on its last
// receive it is dead-lettered with the circuit's class: an origin that is
// down reaches the dead-letter queue after as many receives and as long a
// wait as without the circuit.
func TestCircuitHeldBackRecordsSpendReceivesNoFaster(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 1, func(c *processor.Config) { c.Backoff.Base = 10 * time.Minute })
	r := newReceiver(t, http.StatusServiceUnavailable)
	var recs []events.SQSMessage
	for i := range 3 {
		recs = append(recs, rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.invoke(t, envs[0], recs...)
	cs.invoke(t, envs[0], rec("early", r.body("early"), 1), rec("last", r.body("last"), 5))
	require.Equal(t, int32(3), r.requests.Load())
	require.Equal(t, 600, visibilityEntries(t, envs[0])["rh-early"], "the backoff's 10 min, not the probe's 60 s")
	lines := logLines(t, envs[0])
	require.Equal(t, "dead_lettered", lines["last"]["outcome"])
	require.Equal(t, string(circuit.ClassCircuitOpen), lines["last"]["error_class"])
	require.Len(t, envs[0].deadLetters(t), 1)
}

// TestCircuitStoreErrorsFailOpen: when the store cannot be read or written
// the records are sent, and the failures are logged and counted.
func TestCircuitStoreErrorsFailOpen(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 3, nil)
	r := newReceiver(t, http.StatusServiceUnavailable)
	var recs []events.SQSMessage
	for i := range 3 {
		recs = append(recs, rec(fmt.Sprintf("a-%d", i), r.body(fmt.Sprintf("a-%d", i)), 1))
	}
	cs.invoke(t, envs[0], recs...)
	require.Equal(t, 3, cs.health(t, r).Failures)

	// Another environment cannot read the origin's health: the circuit
	// fails open, and the failure it then records cannot be written either.
	cs.ddb.Fail("GetItem", 1)
	cs.ddb.Fail("PutItem", 1)
	cs.invoke(t, envs[1], rec("b-0", r.body("b-0"), 2))
	require.Equal(t, int32(4), r.requests.Load(), "sent despite the open circuit")
	require.Contains(t, logLines(t, envs[1])["b-0"]["store_error"], "read health")
	require.Equal(t, float64(1), batchLine(t, envs[1])["StoreErrors"])

	// Past the probe time, the probe lease cannot be written: sent.
	cs.clock.Advance(time.Minute)
	cs.ddb.Fail("PutItem", 1)
	cs.invoke(t, envs[2], rec("c-0", r.body("c-0"), 2))
	require.Equal(t, int32(5), r.requests.Load(), "sent without the probe lease")
	require.Contains(t, logLines(t, envs[2])["c-0"]["store_error"], "write health")
	require.Equal(t, float64(1), batchLine(t, envs[2])["StoreErrors"])
}
