package once_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/once"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/notification"
)

const table = "herald-once"

// counter is a channel's sender that counts its sends and answers err.
type counter struct {
	n   int
	err error
}

func (c *counter) Send(context.Context, *notification.Message) error { c.n++; return c.err }

type keyedCounter struct{ counter }

func (*keyedCounter) DestinationKey(*notification.Message) string { return "chat:discord:k" }

func newOnce(t *testing.T) (*once.Once, *dynamotest.Server) {
	t.Helper()
	ddb := dynamotest.New(t)
	ddb.AddTable(table, store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: table})
	require.NoError(t, err)
	o, err := once.New(once.Config{Store: st})
	require.NoError(t, err)
	return o, ddb
}

func message(t *testing.T, id string) *notification.Message {
	t.Helper()
	m, err := notification.Parse([]byte(webhookBody(id)))
	require.NoError(t, err)
	return m
}

// TestOutsideABatchEachSendConfirmsItself: a send whose context no
// StartBatch returned takes its lease in a batch of its own and confirms
// it right after: the next copy is a duplicate (delivery.DeliveredError),
// not sent.
func TestOutsideABatchEachSendConfirmsItself(t *testing.T) {
	t.Parallel()
	o, ddb := newOnce(t)
	c := &counter{}
	s := o.Wrap(c)
	require.NoError(t, s.Send(context.Background(), message(t, "n-1")))
	require.Equal(t, 2, ddb.Calls("PutItem"), "the claim and its confirm")
	err := s.Send(context.Background(), message(t, "n-1"))
	at, ok := delivery.AlreadyDelivered(err)
	require.True(t, ok, "%v", err)
	require.False(t, at.IsZero())
	require.Equal(t, 1, c.n, "the copy is not sent")
}

// TestInABatchOneConfirmAtItsEnd: the sends of a batch write their
// claims; their deliveries are recorded by the batch's end, one write for
// all, and a failed send's lease is released at once.
func TestInABatchOneConfirmAtItsEnd(t *testing.T) {
	t.Parallel()
	o, ddb := newOnce(t)
	ok, failing := o.Wrap(&counter{}), o.Wrap(&counter{err: delivery.Transient("webhook_http_5xx", errors.New("503"))})
	ctx, end := o.StartBatch(context.Background())
	a1, a2, a3 := &delivery.Attempt{}, &delivery.Attempt{}, &delivery.Attempt{}
	require.NoError(t, ok.Send(delivery.NewContext(ctx, a1), message(t, "b-1")))
	require.NoError(t, ok.Send(delivery.NewContext(ctx, a2), message(t, "b-2")))
	require.Error(t, failing.Send(delivery.NewContext(ctx, a3), message(t, "b-3")))
	require.Equal(t, 3, ddb.Calls("PutItem"), "three claims, no confirm yet")
	require.Equal(t, 1, ddb.Calls("DeleteItem"), "the failed send's lease is released")
	ddb.Fail("PutItem", 1)
	end(context.Background())
	require.Equal(t, 4, ddb.Calls("PutItem"), "one confirm for the batch")
	require.ErrorContains(t, a1.StoreError(), "confirm 2 deliveries")
	require.ErrorContains(t, a2.StoreError(), "confirm 2 deliveries")
	require.NoError(t, a3.StoreError(), "no delivered lease: the confirm was not its")
}

// TestWrapKeepsTheDestinationKey: the circuit further out still finds a
// chat sender's key through delivered-once.
func TestWrapKeepsTheDestinationKey(t *testing.T) {
	t.Parallel()
	o, _ := newOnce(t)
	k, ok := o.Wrap(&keyedCounter{}).(delivery.DestinationKeyer)
	require.True(t, ok)
	require.Equal(t, "chat:discord:k", k.DestinationKey(nil))
	_, ok = o.Wrap(&counter{}).(delivery.DestinationKeyer)
	require.False(t, ok, "a sender without a key gets none")
}

// TestNewNeedsAStore names the missing field.
func TestNewNeedsAStore(t *testing.T) {
	t.Parallel()
	_, err := once.New(once.Config{})
	require.EqualError(t, err, "once: Store is required")
}

// TestAFailedReleaseIsNoted: a failed send whose lease cannot be released
// still returns the send's error, and the failed release is noted on the
// attempt (StoreErrors); the lease then ends at its Until.
func TestAFailedReleaseIsNoted(t *testing.T) {
	t.Parallel()
	o, ddb := newOnce(t)
	sendErr := delivery.Transient("webhook_http_5xx", errors.New("503"))
	failing := o.Wrap(&counter{err: sendErr})
	released, kept := &delivery.Attempt{}, &delivery.Attempt{}
	require.ErrorIs(t, failing.Send(delivery.NewContext(context.Background(), released), message(t, "r-1")), sendErr)
	require.NoError(t, released.StoreError(), "released")
	ddb.Fail("DeleteItem", 1)
	require.ErrorIs(t, failing.Send(delivery.NewContext(context.Background(), kept), message(t, "r-2")), sendErr)
	require.Equal(t, 2, ddb.Calls("DeleteItem"))
	require.Error(t, kept.StoreError(), "the failed release is noted")
}
