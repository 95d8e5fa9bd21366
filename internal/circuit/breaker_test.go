package circuit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/announce"
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

// TestBreakerReadsHealthEventuallyConsistent: the circuit's read of a
// destination's health, which it keeps for seconds, is an eventually
// consistent GetItem (half the read units); a stale copy costs at most a
// refused write, applied again to the item as it is.
func TestBreakerReadsHealthEventuallyConsistent(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	s := bd.b.Wrap(&answers{})
	_, err := send(s, "n-1")
	require.NoError(t, err)
	require.Equal(t, 1, bd.ddb.Calls("GetItem"))
	require.Zero(t, bd.ddb.ConsistentReads("GetItem"))
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

// announcer is an Announcer that answers each publish with the next of its
// errs (nil: published, also once errs run out) and keeps what it
// published.
type announcer struct {
	errs      []error
	calls     int
	published []announce.Event
	types     []string
}

func (a *announcer) Publish(_ context.Context, detailType string, e announce.Event) error {
	a.calls++
	if len(a.errs) > 0 {
		err := a.errs[0]
		a.errs = a.errs[1:]
		if err != nil {
			return err
		}
	}
	a.types = append(a.types, detailType)
	a.published = append(a.published, e)
	return nil
}

// quiet is a Logger for the events a test refuses on purpose.
var quiet = slog.New(slog.NewJSONHandler(io.Discard, nil))

func gone() error {
	return &delivery.PermanentError{Class: webhook.ClassHTTP4xx, Gone: true, Err: errors.New("410")}
}

func badRequest() error { return delivery.Permanent(webhook.ClassHTTP4xx, errors.New("400")) }

// openCircuit fails three sends through s and moves the clock to the
// probe time a probe interval of 1 min later.
func openCircuit(t *testing.T, bd *bundle, s circuit.Sender) {
	t.Helper()
	for i := range 3 {
		_, err := send(s, fmt.Sprint("m-", i))
		require.Error(t, err)
	}
	require.Equal(t, circuit.Open, circuit.Rules{Threshold: 3}.StateOf(bd.health(t, origin)))
	bd.clock.Advance(time.Minute)
}

// TestNewKeepsAGivenProbeIntervalAndDefaultsNone: a ProbeInterval given
// to New is the one used (a record held back 30 s after the last failure
// is retried when that interval ends, not after the default minute); 0
// uses DefaultProbeInterval.
func TestNewKeepsAGivenProbeIntervalAndDefaultsNone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		interval, want time.Duration
	}{{30 * time.Second, 30 * time.Second}, {2 * time.Minute, 2 * time.Minute}, {0, circuit.DefaultProbeInterval}} {
		bd := newBreaker(t, func(c *circuit.Config) { c.ProbeInterval = tc.interval })
		a := &answers{errs: []error{down(), down(), down()}}
		s := bd.b.Wrap(a)
		for i := range 3 {
			_, _ = send(s, fmt.Sprint("m-", i))
		}
		_, err := send(s, "held")
		require.Equal(t, 3, a.sends, "ProbeInterval %s: held back", tc.interval)
		_, class, retryAfter := delivery.Classify(err)
		require.Equal(t, circuit.ClassCircuitOpen, class)
		require.Equal(t, tc.want, retryAfter, "ProbeInterval %s", tc.interval)
	}
}

// TestBreakerRereadsHealthAtTheCacheTTL: an environment's copy of a
// destination's health is trusted for 5 s (healthCacheTTL) and read again
// from exactly 5 s on: an operator's disable written meanwhile stops the
// sends from then.
func TestBreakerRereadsHealthAtTheCacheTTL(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &answers{}
	s := bd.b.Wrap(a)
	_, err := send(s, "m-1")
	require.NoError(t, err)
	require.Equal(t, 1, bd.ddb.Calls("GetItem"))
	_, _, err = bd.st.SetDisabled(context.Background(), origin, true)
	require.NoError(t, err)
	reads := bd.ddb.Calls("GetItem")

	bd.clock.Advance(5*time.Second - time.Millisecond)
	_, err = send(s, "m-2")
	require.NoError(t, err, "the copy read 5 s ago less 1 ms is trusted")
	require.Equal(t, 2, a.sends)
	require.Equal(t, reads, bd.ddb.Calls("GetItem"), "not read again within the TTL")

	bd.clock.Advance(time.Millisecond)
	_, err = send(s, "m-3")
	require.Equal(t, 2, a.sends, "read again at exactly 5 s: disabled, not sent")
	_, class, _ := delivery.Classify(err)
	require.Equal(t, circuit.ClassDestinationDisabled, class)
	require.Equal(t, reads+1, bd.ddb.Calls("GetItem"))
}

// TestBreakerWritesAHealthySuccessOncePerInterval: a delivery to a
// destination with no failures writes its last success only when the
// stored one is a minute (successWriteInterval) or more old; a delivery
// after a failure writes at once, closing the run.
func TestBreakerWritesAHealthySuccessOncePerInterval(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &answers{}
	s := bd.b.Wrap(a)
	t0 := bd.clock.Now()
	_, err := send(s, "first")
	require.NoError(t, err)
	require.Equal(t, 1, bd.ddb.Calls("PutItem"), "no last success yet: written")
	require.True(t, bd.health(t, origin).LastSuccess.Equal(t0))

	bd.clock.Advance(time.Minute - time.Millisecond)
	_, err = send(s, "within-the-minute")
	require.NoError(t, err)
	require.Equal(t, 1, bd.ddb.Calls("PutItem"), "the last success is less than a minute old: not written")
	require.True(t, bd.health(t, origin).LastSuccess.Equal(t0))

	bd.clock.Advance(time.Millisecond)
	_, err = send(s, "a-minute-on")
	require.NoError(t, err)
	require.Equal(t, 2, bd.ddb.Calls("PutItem"), "exactly a minute old: written")
	require.True(t, bd.health(t, origin).LastSuccess.Equal(t0.Add(time.Minute)))

	a.errs = []error{down()}
	_, _ = send(s, "failed")
	require.Equal(t, 3, bd.ddb.Calls("PutItem"))
	bd.clock.Advance(time.Second)
	_, err = send(s, "after-a-failure")
	require.NoError(t, err)
	require.Equal(t, 4, bd.ddb.Calls("PutItem"), "a failure to forget: written within the minute")
	h := bd.health(t, origin)
	require.Zero(t, h.Failures)
	require.True(t, h.FailingSince.IsZero())
	require.True(t, h.LastSuccess.Equal(bd.clock.Now()))
}

// TestBreakerGoneProbeGivesTheLeaseBack: a probe whose destination says it
// is gone disables it and gives its probe lease back in the same write.
func TestBreakerGoneProbeGivesTheLeaseBack(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &answers{errs: []error{down(), down(), down(), gone()}}
	s := bd.b.Wrap(a)
	openCircuit(t, bd, s)
	var during store.Health
	a.during = func() { during = bd.health(t, origin) }
	probe, _ := send(s, "probe")
	require.NotEmpty(t, during.ProbeOwner, "the probe held the lease")
	require.True(t, probe.Disabled())
	h := bd.health(t, origin)
	require.True(t, h.Disabled())
	require.Empty(t, h.ProbeOwner, "the lease is given back")
	require.True(t, h.ProbeUntil.IsZero())
}

// TestBreakerGoneLeavesAnotherEnvironmentsLease: a record sent while
// another environment holds the probe lease (this one read the health
// before the lease was taken) and told the destination is gone disables
// it but leaves that environment's lease to it.
func TestBreakerGoneLeavesAnotherEnvironmentsLease(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &answers{errs: []error{gone()}}
	s := bd.b.Wrap(a)
	a.during = func() {
		_, _, err := bd.st.UpdateHealth(context.Background(), bd.health(t, origin), func(h *store.Health) bool {
			h.ProbeUntil, h.ProbeOwner = bd.clock.Now().Add(time.Minute), "other"
			return true
		})
		require.NoError(t, err)
	}
	first, _ := send(s, "m-1")
	require.True(t, first.Disabled())
	h := bd.health(t, origin)
	require.True(t, h.Disabled())
	require.Equal(t, "other", h.ProbeOwner, "not this record's lease")
}

// TestBreakerProbeOtherAnswerGivesTheLeaseBack: a probe answered with a
// failure that says nothing of the origin (a 400) counts nothing but
// gives its lease back, so the next record is the next probe at once.
func TestBreakerProbeOtherAnswerGivesTheLeaseBack(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &answers{errs: []error{down(), down(), down(), badRequest()}}
	s := bd.b.Wrap(a)
	openCircuit(t, bd, s)
	_, err := send(s, "probe")
	require.Error(t, err)
	h := bd.health(t, origin)
	require.Equal(t, 3, h.Failures, "a 400 counts nothing")
	require.Empty(t, h.ProbeOwner, "the lease is given back")
	require.True(t, h.ProbeUntil.IsZero())
	_, err = send(s, "next-probe")
	require.NoError(t, err, "let through as the next probe")
	require.Equal(t, 5, a.sends)
	require.Zero(t, bd.health(t, origin).Failures, "the next probe closed it")
}

// TestBreakerProbeOtherAnswerLeavesANewLease: a probe answered with a 400
// after another holder took the lease (its own ended) leaves that holder's
// lease: nothing is written.
func TestBreakerProbeOtherAnswerLeavesANewLease(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	a := &answers{errs: []error{down(), down(), down(), badRequest()}}
	s := bd.b.Wrap(a)
	openCircuit(t, bd, s)
	a.during = func() {
		_, _, err := bd.st.UpdateHealth(context.Background(), bd.health(t, origin), func(h *store.Health) bool {
			h.ProbeUntil, h.ProbeOwner = bd.clock.Now().Add(time.Minute), "other"
			return true
		})
		require.NoError(t, err)
	}
	puts := bd.ddb.Calls("PutItem")
	_, err := send(s, "probe")
	require.Error(t, err)
	h := bd.health(t, origin)
	require.Equal(t, "other", h.ProbeOwner, "the other holder's lease stays")
	require.Equal(t, puts+3, bd.ddb.Calls("PutItem"), "the lease taken, the other holder's write and the release's one refused try")
}

// TestBreakerRecordsTheDisabledEventWithAnAnnouncerOnly: a disable by
// herald with an Announcer publishes destination.disabled and leaves
// nothing pending; without one, no event is recorded in the health item.
func TestBreakerRecordsTheDisabledEventWithAnAnnouncerOnly(t *testing.T) {
	t.Parallel()
	t.Run("announcer", func(t *testing.T) {
		t.Parallel()
		ann := &announcer{}
		bd := newBreaker(t, func(c *circuit.Config) { c.Announcer = ann })
		s := bd.b.Wrap(&answers{errs: []error{gone()}})
		first, _ := send(s, "m-1")
		require.True(t, first.Disabled())
		require.Equal(t, []string{announce.DestinationDisabled}, ann.types)
		require.Equal(t, origin, ann.published[0].Origin)
		require.Equal(t, string(circuit.Disabled), ann.published[0].State)
		require.Equal(t, store.DisabledByHerald, ann.published[0].DisabledBy)
		require.Equal(t, string(webhook.ClassHTTP4xx), ann.published[0].LastFailureClass)
		require.Empty(t, bd.health(t, origin).PendingEvents, "published: no longer pending")
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		bd := newBreaker(t, nil)
		s := bd.b.Wrap(&answers{errs: []error{gone()}})
		first, _ := send(s, "m-1")
		require.True(t, first.Disabled())
		h := bd.health(t, origin)
		require.True(t, h.Disabled())
		require.Empty(t, h.PendingEvents, "no Announcer: nothing recorded")
	})
}

// TestBreakerRetriesAnUnpublishedEventOncePerInterval: an event the bus
// refused stays pending; this environment's reads of the health (every
// 5 s) do not try it again until a minute (announceRetryInterval) after
// its last try, and then do; published, it is no longer pending.
func TestBreakerRetriesAnUnpublishedEventOncePerInterval(t *testing.T) {
	t.Parallel()
	ann := &announcer{errs: []error{errors.New("refused"), nil}}
	bd := newBreaker(t, func(c *circuit.Config) { c.Announcer, c.Logger = ann, quiet })
	s := bd.b.Wrap(&answers{errs: []error{gone()}})
	_, _ = send(s, "m-1")
	require.Equal(t, 1, ann.calls, "tried with the disabling write")
	require.NotEmpty(t, bd.health(t, origin).PendingEvents, "refused: still pending")

	for range 11 {
		bd.clock.Advance(5 * time.Second)
		_, err := send(s, "held")
		_, class, _ := delivery.Classify(err)
		require.Equal(t, circuit.ClassDestinationDisabled, class)
	}
	require.Equal(t, 12, bd.ddb.Calls("GetItem")-1, "read again every 5 s") // -1: bd.health above
	require.Equal(t, 1, ann.calls, "55 s after the try: not tried again")

	bd.clock.Advance(5 * time.Second)
	_, _ = send(s, "a-minute-on")
	require.Equal(t, 2, ann.calls, "tried again a minute after the last try")
	require.Len(t, ann.published, 1)
	require.Empty(t, bd.health(t, origin).PendingEvents, "published: no longer pending")
}

// TestBreakerPublishesAnotherEnvironmentsPendingEvent: an event another
// environment recorded but did not publish is published by the first read
// of the destination's health in an environment with an Announcer.
func TestBreakerPublishesAnotherEnvironmentsPendingEvent(t *testing.T) {
	t.Parallel()
	refused := &announcer{errs: []error{errors.New("refused")}}
	bd := newBreaker(t, func(c *circuit.Config) { c.Announcer, c.Logger = refused, quiet })
	_, _ = send(bd.b.Wrap(&answers{errs: []error{gone()}}), "m-1")
	require.NotEmpty(t, bd.health(t, origin).PendingEvents)

	ann := &announcer{}
	other, err := circuit.New(circuit.Config{Rules: circuit.Rules{Threshold: 3}, Health: bd.st, Announcer: ann, Now: bd.clock.Now})
	require.NoError(t, err)
	_, _ = send(other.Wrap(&answers{}), "m-2")
	require.Equal(t, []string{announce.DestinationDisabled}, ann.types)
	require.Empty(t, bd.health(t, origin).PendingEvents)
}

// TestBreakerLogsAnEventNotPublished: an event the bus refused is logged
// (WARN "destination event not published", with the origin and the error)
// to the configured Logger; a published one logs nothing.
func TestBreakerLogsAnEventNotPublished(t *testing.T) {
	t.Parallel()
	for _, refuse := range []bool{true, false} {
		var logs bytes.Buffer
		ann := &announcer{}
		if refuse {
			ann.errs = []error{errors.New("bus refused")}
		}
		bd := newBreaker(t, func(c *circuit.Config) {
			c.Announcer = ann
			c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		})
		_, _ = send(bd.b.Wrap(&answers{errs: []error{gone()}}), "m-1")
		require.Equal(t, 1, ann.calls)
		if !refuse {
			require.Empty(t, logs.String(), "published: nothing logged")
			continue
		}
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		require.Len(t, lines, 1)
		var line map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &line))
		require.Equal(t, "WARN", line["level"])
		require.Equal(t, "destination event not published", line["msg"])
		require.Equal(t, origin, line["origin"])
		require.Contains(t, line["error"], "bus refused")
	}
}

// TestDisabledErrorNamesTheLastFailure: a disabled destination's record
// is refused with an error naming who disabled it and when, and its last
// failure's class and time, "none" and "never" when it had none.
func TestDisabledErrorNamesTheLastFailure(t *testing.T) {
	t.Parallel()
	bd := newBreaker(t, nil)
	at := bd.clock.Now().UTC().Format(time.RFC3339)
	_, _, err := bd.st.SetDisabled(context.Background(), origin, true)
	require.NoError(t, err)
	_, err = send(bd.b.Wrap(&answers{}), "m-1")
	require.EqualError(t, err, "destination_disabled: not sent: "+origin+" is disabled (by operator at "+at+"; the last failure none at never); redrive after `herald destinations enable "+origin+"`")

	bd = newBreaker(t, nil)
	at = bd.clock.Now().UTC().Format(time.RFC3339)
	s := bd.b.Wrap(&answers{errs: []error{gone()}})
	_, _ = send(s, "m-1")
	_, err = send(s, "m-2")
	require.EqualError(t, err, "destination_disabled: not sent: "+origin+" is disabled (by herald at "+at+"; the last failure webhook_http_4xx at "+at+"); redrive after `herald destinations enable "+origin+"`")
}
