package processor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/once"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/notification"
)

const onceTable = "herald-store"

// onceClock is the clock of both execution environments and the store: an
// hour ahead of the wall clock, so that an invocation's deadline taken from
// it lies in the future while every delay computed from it is exact.
var onceClock = func() func() time.Time {
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	return func() time.Time { return at }
}()

// twoEnvironments builds two processors, two execution environments of the
// deliver function, that share one store; each has its own senders and
// SQS wire. hold, when set, makes the senders of both wait for it to close
// before answering.
func twoEnvironments(t *testing.T, hold chan struct{}, mutate func(*once.Config)) (a, b *bundle, ddb *dynamotest.Server) {
	t.Helper()
	ddb = dynamotest.New(t)
	ddb.AddTable(onceTable, store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: onceTable, Now: onceClock})
	require.NoError(t, err)
	env := func() *bundle {
		return setup(t, func(c *processor.Config) {
			c.Now = onceClock
			c.Middleware = append(c.Middleware, onceMiddleware(t, st, mutate))
			if hold != nil {
				for ch, s := range c.Senders {
					c.Senders[ch] = senderFunc(func(ctx context.Context, m *notification.Message) error {
						<-hold
						return s.Send(ctx, m)
					})
				}
			}
		})
	}
	return env(), env(), ddb
}

// onceMiddleware is delivered-once (package once) on st by onceClock as
// the processor's middleware, with its batch hook; mutate, when set,
// changes its configuration.
func onceMiddleware(t *testing.T, st *store.Store, mutate func(*once.Config)) processor.Middleware {
	t.Helper()
	cfg := once.Config{Store: st, Now: onceClock}
	if mutate != nil {
		mutate(&cfg)
	}
	o, err := once.New(cfg)
	require.NoError(t, err)
	return processor.Middleware{Wrap: func(next processor.Sender) processor.Sender { return o.Wrap(next) }, StartBatch: o.StartBatch}
}

// invocation is a context with the deadline of an invocation 30 s long by
// onceClock.
func invocation(t *testing.T) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), onceClock().Add(30*time.Second))
	t.Cleanup(cancel)
	return ctx
}

func mailBody(id string) string {
	return `{"version":1,"id":"` + id + `","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"t"}}`
}

func handle(t *testing.T, b *bundle, ctx context.Context, recs ...events.SQSMessage) events.SQSEventResponse {
	t.Helper()
	resp, err := b.p.Handle(ctx, events.SQSEvent{Records: recs})
	require.NoError(t, err)
	return resp
}

// batchLine returns the first batch line that carries the invocation's
// own metrics, by function (Paused 0 on an environment's first batch, and
// StoreErrors with a store).
func batchLine(t *testing.T, b *bundle) map[string]any {
	t.Helper()
	b.logs.mu.Lock()
	defer b.logs.mu.Unlock()
	sc := bufio.NewScanner(bytes.NewReader(b.logs.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		if _, ok := m["function"]; ok && m["msg"] == "batch" {
			return m
		}
	}
	t.Fatal("no batch line")
	return nil
}

// TestOnceCopyAfterDeliveryIsADuplicate: SQS hands a delivered
// notification over again, to another execution environment: the copy is
// not sent, acknowledged, logged and counted as a duplicate, for email and
// webhook alike, and the delivery took two writes.
func TestOnceCopyAfterDeliveryIsADuplicate(t *testing.T) {
	t.Parallel()
	for _, body := range []string{mailBody("ok-mail-1"), webhookBody("ok-hook-1")} {
		a, b, ddb := twoEnvironments(t, nil, nil)
		id := notification.IDOf([]byte(body))
		require.Empty(t, failures(handle(t, a, invocation(t), rec("m-1", body, 1))))
		require.Equal(t, 2, ddb.Calls("PutItem"), "a lease and a delivery: two writes")
		require.Zero(t, ddb.Calls("DeleteItem")+ddb.Calls("GetItem"))

		require.Empty(t, failures(handle(t, b, invocation(t), rec("m-1-copy", body, 2))), "the copy is acknowledged")
		require.Equal(t, int32(1), a.sends(id)+b.sends(id), "%s sent once", id)
		line := logLines(t, b)["m-1-copy"]
		require.Equal(t, "duplicate", line["outcome"])
		require.Equal(t, onceClock().UTC().Format(time.RFC3339), line["delivered_at"])
		require.Equal(t, 3, ddb.Calls("PutItem"), "a duplicate costs one refused write")
	}
}

// TestOnceCopyWhileAnotherHoldsTheLeaseIsRetried: a copy arriving while
// the first attempt is still sending is not sent but retried after the
// lease (the invocation's deadline and a second) ends; the first attempt
// delivers; the notification is sent once.
func TestOnceCopyWhileAnotherHoldsTheLeaseIsRetried(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	a, b, _ := twoEnvironments(t, hold, nil)
	body := webhookBody("ok-slow")
	var respA events.SQSEventResponse
	done := make(chan struct{})
	go func() {
		defer close(done)
		respA, _ = a.p.Handle(invocation(t), events.SQSEvent{Records: []events.SQSMessage{rec("m-a", body, 1)}})
	}()
	// b's copy may reach the store before a's claim: whichever claims
	// first sends (and waits for hold), the other is retried.
	var respB events.SQSEventResponse
	doneB := make(chan struct{})
	go func() {
		defer close(doneB)
		respB, _ = b.p.Handle(invocation(t), events.SQSEvent{Records: []events.SQSMessage{rec("m-b", body, 1)}})
	}()
	var waiter, sender *bundle
	var retried string
	select {
	case <-done:
		waiter, sender, retried = a, b, "m-a"
		require.Equal(t, []string{"m-a"}, failures(respA))
	case <-doneB:
		waiter, sender, retried = b, a, "m-b"
		require.Equal(t, []string{"m-b"}, failures(respB))
	}
	close(hold)
	<-done
	<-doneB
	line := logLines(t, waiter)[retried]
	require.Equal(t, "retry", line["outcome"])
	require.Equal(t, string(once.ClassInProgress), line["error_class"])
	// The lease ends 31 s from now (deadline + 1 s): above the 10 s backoff.
	require.Equal(t, float64(31), line["delay_seconds"])
	require.Equal(t, int32(1), sender.sends("ok-slow"))
	require.Equal(t, int32(0), waiter.sends("ok-slow"))
}

// TestOnceSimultaneousCopiesSendOnce: copies handed to several execution
// environments at the same moment are sent once.
func TestOnceSimultaneousCopiesSendOnce(t *testing.T) {
	t.Parallel()
	a, b, ddb := twoEnvironments(t, nil, nil)
	st, err := store.New(ddb.Client(), store.Config{Table: onceTable, Now: onceClock})
	require.NoError(t, err)
	c := setup(t, func(c *processor.Config) {
		c.Now, c.Middleware = onceClock, []processor.Middleware{onceMiddleware(t, st, nil)}
	})
	envs := []*bundle{a, b, c}
	var wg sync.WaitGroup
	for i, e := range envs {
		wg.Go(func() {
			_, err := e.p.Handle(invocation(t), events.SQSEvent{Records: []events.SQSMessage{rec("m-"+string(rune('a'+i)), mailBody("ok-same"), 1)}})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	require.Equal(t, int32(1), a.sends("ok-same")+b.sends("ok-same")+c.sends("ok-same"))
}

// TestOnceFailedAttemptReleasesTheLease: a failed attempt gives its lease
// up, so the next copy is sent at once, in another environment too.
func TestOnceFailedAttemptReleasesTheLease(t *testing.T) {
	t.Parallel()
	a, b, ddb := twoEnvironments(t, nil, nil)
	require.Equal(t, []string{"m-1"}, failures(handle(t, a, invocation(t), rec("m-1", webhookBody("transient-1"), 1))))
	require.Equal(t, 1, ddb.Calls("DeleteItem"))
	require.Empty(t, ddb.Items(onceTable))
	require.Equal(t, []string{"m-1"}, failures(handle(t, b, invocation(t), rec("m-1", webhookBody("transient-1"), 2))))
	require.Equal(t, "webhook_http_5xx", logLines(t, b)["m-1"]["error_class"], "sent again, not held")
	require.Equal(t, int32(1), b.sends("transient-1"))
}

// TestOnceStoreFailureRetriesLater: with the store throttling or failing,
// nothing is sent; the record is retried with the store's class, and the
// batch line counts it. With SendOnStoreError it is sent, and the line
// says why it went without a lease.
func TestOnceStoreFailureRetriesLater(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fault func(*dynamotest.Server)
		class delivery.Class
	}{
		{func(s *dynamotest.Server) { s.Throttle("PutItem", 1) }, store.ClassThrottled},
		{func(s *dynamotest.Server) { s.Fail("PutItem", 1) }, store.ClassUnavailable},
	} {
		a, _, ddb := twoEnvironments(t, nil, nil)
		tc.fault(ddb)
		require.Equal(t, []string{"m-1"}, failures(handle(t, a, invocation(t), rec("m-1", mailBody("ok-1"), 1))))
		line := logLines(t, a)["m-1"]
		require.Equal(t, "retry", line["outcome"])
		require.Equal(t, string(tc.class), line["error_class"])
		require.Contains(t, line["store_error"], "PutItem")
		require.Zero(t, a.sends("ok-1"))
		require.Equal(t, float64(1), batchLine(t, a)["StoreErrors"])

		s, _, ddb := twoEnvironments(t, nil, func(c *once.Config) { c.SendOnStoreError = true })
		tc.fault(ddb)
		require.Empty(t, failures(handle(t, s, invocation(t), rec("m-1", mailBody("ok-1"), 1))))
		line = logLines(t, s)["m-1"]
		require.Equal(t, "delivered", line["outcome"])
		require.Equal(t, "WARN", line["level"])
		require.Contains(t, line["store_error"], "PutItem")
		require.Equal(t, int32(1), s.sends("ok-1"))
		require.Equal(t, float64(1), batchLine(t, s)["StoreErrors"])
	}
}

// TestOnceDeliveredWriteFailsInsideTheCrashWindow: the send succeeded but
// recording it failed: the record is delivered (acknowledged), the failure
// logged and counted, and a copy before the lease ends is still held back.
func TestOnceDeliveredWriteFailsInsideTheCrashWindow(t *testing.T) {
	t.Parallel()
	a, b, ddb := twoEnvironments(t, nil, nil)
	// The claim succeeds, the second PutItem (the batch's confirm) fails.
	ddb.FailAfter("PutItem", 1, 1)
	require.Empty(t, failures(handle(t, a, invocation(t), rec("m-1", webhookBody("ok-1"), 1))))
	line := logLines(t, a)["m-1"]
	require.Equal(t, "delivered", line["outcome"])
	require.Contains(t, line["store_error"], "confirm 1 deliveries")
	require.Equal(t, float64(1), batchLine(t, a)["StoreErrors"])

	require.Equal(t, []string{"m-1"}, failures(handle(t, b, invocation(t), rec("m-1", webhookBody("ok-1"), 2))))
	require.Equal(t, string(once.ClassInProgress), logLines(t, b)["m-1"]["error_class"])
	require.Equal(t, int32(1), a.sends("ok-1")+b.sends("ok-1"))
}

// TestOnceWithoutAStoreSendsEveryCopy: the store is off (window 0): each
// copy is sent, as at-least-once delivery does.
func TestOnceWithoutAStoreSendsEveryCopy(t *testing.T) {
	t.Parallel()
	a := setup(t, nil)
	handle(t, a, invocation(t), rec("m-1", webhookBody("ok-1"), 1))
	handle(t, a, invocation(t), rec("m-2", webhookBody("ok-1"), 2))
	require.Equal(t, int32(2), a.sends("ok-1"))
	_, has := batchLine(t, a)["StoreErrors"]
	require.False(t, has, "no store, no StoreErrors metric")
}
