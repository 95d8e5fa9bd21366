package circuit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/testclock"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

const table = "herald-circuit"

// origin is the health key of every message of these tests.
const origin = "https://hooks.example.com"

// answers is a channel's sender that answers each send with the next of
// its errors (nil: delivered) and counts its sends; during, when set, runs
// inside a send.
type answers struct {
	errs   []error
	sends  int
	during func()
}

func (a *answers) Send(context.Context, *notification.Message) error {
	a.sends++
	if a.during != nil {
		a.during()
	}
	if len(a.errs) == 0 {
		return nil
	}
	err := a.errs[0]
	a.errs = a.errs[1:]
	return err
}

type keyedAnswers struct{ answers }

func (*keyedAnswers) DestinationKey(*notification.Message) string { return "chat:discord:0123" }

type bundle struct {
	clock *testclock.Clock
	ddb   *dynamotest.Server
	st    *store.Store
	b     *circuit.Breaker
}

// newBreaker is a Breaker of threshold 3 and a 60 s probe interval on a
// fake DynamoDB, by a clock the test moves (an hour ahead of the wall
// clock: it feeds no real deadline).
func newBreaker(t *testing.T, mutate func(*circuit.Config)) *bundle {
	t.Helper()
	bd := &bundle{clock: testclock.New(time.Now().Add(time.Hour).Truncate(time.Second)), ddb: dynamotest.New(t)}
	bd.ddb.AddTable(table, store.AttrPK, store.AttrSK)
	var err error
	bd.st, err = store.New(bd.ddb.Client(), store.Config{Table: table, Now: bd.clock.Now})
	require.NoError(t, err)
	cfg := circuit.Config{Rules: circuit.Rules{Threshold: 3, ProbeInterval: time.Minute}, Health: bd.st, Now: bd.clock.Now}
	if mutate != nil {
		mutate(&cfg)
	}
	bd.b, err = circuit.New(cfg)
	require.NoError(t, err)
	return bd
}

func (bd *bundle) health(t *testing.T, key string) store.Health {
	t.Helper()
	h, err := bd.st.Health(context.Background(), key)
	require.NoError(t, err)
	return h
}

func message(id string) *notification.Message {
	return &notification.Message{ID: id, Channel: notification.ChannelWebhook,
		Webhook: &notification.Webhook{URL: origin + "/x", EventType: "t"}}
}

func down() error { return delivery.Transient(webhook.ClassHTTP5xx, errors.New("503")) }

// send sends one message through s with an attempt of its own, whose
// notes it returns.
func send(s circuit.Sender, id string) (*delivery.Attempt, error) {
	a := &delivery.Attempt{}
	return a, s.Send(delivery.NewContext(context.Background(), a), message(id))
}

// TestBreakerOpensAtTheThresholdAndHoldsBack: three origin-down failures
// open the circuit; the next record is not sent but held back with a
// transient destination_circuit_open whose retry-after is the probe time.
// A failure that says nothing of the origin (a 400) does not count.
func TestBreakerOpensAtTheThresholdAndHoldsBack(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &answers{errs: []error{down(), delivery.Permanent(webhook.ClassHTTP4xx, errors.New("400")), down(), down()}}
	s := bd.b.Wrap(a)
	for i := range 4 {
		_, err := send(s, fmt.Sprint("m-", i))
		require.Error(t, err)
	}
	require.Equal(t, 4, a.sends)
	h := bd.health(t, origin)
	require.Equal(t, 3, h.Failures, "the 400 did not count")
	require.Equal(t, circuit.Open, circuit.Rules{Threshold: 3}.StateOf(h))

	bd.clock.Advance(59 * time.Second)
	_, err := send(s, "held")
	require.Equal(t, 4, a.sends, "held back, not sent")
	permanent, class, retryAfter := delivery.Classify(err)
	require.False(t, permanent)
	require.Equal(t, circuit.ClassCircuitOpen, class)
	require.Equal(t, time.Second, retryAfter, "the probe time, 60 s after the last failure")
}

// TestBreakerOneProbeAtATimeAndSuccessCloses: from the probe time one
// record is let through holding the probe lease; another record meanwhile
// is held back until the lease ends; the probe's success closes the
// circuit and the next records are sent.
func TestBreakerOneProbeAtATimeAndSuccessCloses(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &answers{errs: []error{down(), down(), down()}}
	s := bd.b.Wrap(a)
	for i := range 3 {
		_, _ = send(s, fmt.Sprint("m-", i))
	}
	bd.clock.Advance(time.Minute)
	var during error
	a.during = func() {
		a.during = nil
		_, during = send(s, "during-the-probe")
	}
	_, err := send(s, "probe")
	require.NoError(t, err)
	require.Equal(t, 4, a.sends, "the probe only")
	_, class, _ := delivery.Classify(during)
	require.Equal(t, circuit.ClassCircuitOpen, class, "one probe at a time")
	h := bd.health(t, origin)
	require.Zero(t, h.Failures, "closed")
	require.True(t, h.ProbeUntil.IsZero(), "the lease is given back")
	require.True(t, h.LastSuccess.Equal(bd.clock.Now()), "%s", h.LastSuccess)
	_, err = send(s, "after")
	require.NoError(t, err)
	require.Equal(t, 5, a.sends)
}

// TestBreakerProbeFailureKeepsItOpen: a failed probe counts one more and
// gives the lease back; the next probe is a probe interval after it.
func TestBreakerProbeFailureKeepsItOpen(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &answers{errs: []error{down(), down(), down(), down()}}
	s := bd.b.Wrap(a)
	for i := range 3 {
		_, _ = send(s, fmt.Sprint("m-", i))
	}
	bd.clock.Advance(time.Minute)
	_, _ = send(s, "probe")
	h := bd.health(t, origin)
	require.Equal(t, 4, h.Failures)
	require.Empty(t, h.ProbeOwner)
	bd.clock.Advance(30 * time.Second)
	_, err := send(s, "held")
	_, class, retryAfter := delivery.Classify(err)
	require.Equal(t, circuit.ClassCircuitOpen, class)
	require.Equal(t, 30*time.Second, retryAfter)
}

// TestBreakerGoneDisablesAtOnce: a destination that says it is gone is
// disabled by the send that heard it (noted on its attempt); every later
// record gets a permanent destination_disabled, unsent.
func TestBreakerGoneDisablesAtOnce(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	gone := &delivery.PermanentError{Class: webhook.ClassHTTP4xx, Gone: true, Err: errors.New("410")}
	a := &answers{errs: []error{gone}}
	s := bd.b.Wrap(a)
	first, _ := send(s, "m-1")
	require.True(t, first.Disabled())
	second, err := send(s, "m-2")
	require.Equal(t, 1, a.sends)
	permanent, class, _ := delivery.Classify(err)
	require.True(t, permanent)
	require.Equal(t, circuit.ClassDestinationDisabled, class)
	require.False(t, second.Disabled(), "it was not this record's write")
	require.Equal(t, store.DisabledByHerald, bd.health(t, origin).DisabledBy)
}

// TestBreakerDisablesAfterNoSuccess: with DisableAfter 2 min, the probe
// failing 2 min after the run began disables the origin.
func TestBreakerDisablesAfterNoSuccess(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, func(c *circuit.Config) { c.DisableAfter = 2 * time.Minute })
	a := &answers{errs: []error{down(), down(), down(), down(), down()}}
	s := bd.b.Wrap(a)
	for i := range 3 {
		_, _ = send(s, fmt.Sprint("m-", i))
	}
	bd.clock.Advance(time.Minute)
	probe, _ := send(s, "probe-1")
	require.False(t, probe.Disabled(), "1 min into the run")
	bd.clock.Advance(time.Minute)
	probe, _ = send(s, "probe-2")
	require.True(t, probe.Disabled(), "2 min into the run")
	require.True(t, bd.health(t, origin).Disabled())
}

// TestBreakerFailsOpen: a health read that fails sends the record, noted
// on its attempt; the failed read is kept for the cache's lifetime.
func TestBreakerFailsOpen(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	bd.ddb.Fail("GetItem", 1)
	a := &answers{}
	s := bd.b.Wrap(a)
	attempt, err := send(s, "m-1")
	require.NoError(t, err)
	require.Equal(t, 1, a.sends)
	require.ErrorContains(t, attempt.StoreError(), "read health")
	_, _ = send(s, "m-2")
	require.Equal(t, 1, bd.ddb.Calls("GetItem"), "not asked again within the cache's lifetime")
}

// TestBreakerKeysBySendersKey: a sender's DestinationKey is its health's
// key (a chat webhook's identity), and the wrapper keeps the method for a
// middleware further out; an email has no destination and no circuit.
func TestBreakerKeysBySendersKey(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &keyedAnswers{answers{errs: []error{down()}}}
	s := bd.b.Wrap(a)
	_, _ = send(s, "m-1")
	require.Equal(t, 1, bd.health(t, "chat:discord:0123").Failures)
	require.Zero(t, bd.health(t, origin).Failures)
	k, ok := s.(delivery.DestinationKeyer)
	require.True(t, ok)
	require.Equal(t, "chat:discord:0123", k.DestinationKey(nil))

	mail := &notification.Message{ID: "e-1", Channel: notification.ChannelEmail, Email: &notification.Email{}}
	require.Empty(t, circuit.Key(&answers{}, mail))
	require.Equal(t, origin, circuit.Key(&answers{}, message("w-1")))
}

// TestBreakerOffAtThresholdZero: Wrap returns the sender itself.
func TestBreakerOffAtThresholdZero(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, func(c *circuit.Config) { c.Threshold = 0 })
	a := &answers{}
	require.Same(t, a, bd.b.Wrap(a))
}

// TestBreakerOneProbeAcrossEnvironments: two execution environments (two
// Breakers) share the store. B's copy of the health, read 2 s before the
// probe time, does not show the probe A takes; B's try for the probe
// lease meets A's write, and its record is held back, not a second probe.
func TestBreakerOneProbeAcrossEnvironments(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	other, err := circuit.New(circuit.Config{Rules: circuit.Rules{Threshold: 3, ProbeInterval: time.Minute}, Health: bd.st, Now: bd.clock.Now})
	require.NoError(t, err)
	a := &answers{errs: []error{down(), down(), down()}}
	envA := bd.b.Wrap(a)
	b := &answers{}
	envB := other.Wrap(b)
	for i := range 3 {
		_, _ = send(envA, fmt.Sprint("m-", i))
	}
	bd.clock.Advance(58 * time.Second)
	_, err = send(envB, "b-early")
	_, class, _ := delivery.Classify(err)
	require.Equal(t, circuit.ClassCircuitOpen, class)
	bd.clock.Advance(2 * time.Second)
	var during error
	a.during = func() {
		a.during = nil
		_, during = send(envB, "b-during-a-probe")
	}
	_, err = send(envA, "a-probe")
	require.NoError(t, err)
	_, class, _ = delivery.Classify(during)
	require.Equal(t, circuit.ClassCircuitOpen, class, "B's record is held back")
	require.Zero(t, b.sends, "no second probe")
}
