package delivery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/notification"
)

// TestLeaseUntil: a lease lasts to the attempt's invocation deadline plus
// a second, past the send's own context; else to the context's deadline
// plus a second; else MaxLease from now.
func TestLeaseUntil(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	invocation := time.Now().Add(time.Hour)
	send, cancel := context.WithDeadline(context.Background(), invocation.Add(-2*time.Second))
	defer cancel()
	require.Equal(t, invocation.Add(time.Second), delivery.LeaseUntil(delivery.NewContext(send, &delivery.Attempt{Deadline: invocation}), now))
	require.Equal(t, invocation.Add(-time.Second), delivery.LeaseUntil(send, now))
	require.Equal(t, now.Add(delivery.MaxLease), delivery.LeaseUntil(context.Background(), now))
}

// TestAfterSendOutlivesTheSend: what a middleware writes after the send
// runs to the invocation's deadline, not the send's, whose end (the
// processor's reserve) has passed.
func TestAfterSendOutlivesTheSend(t *testing.T) {
	t.Parallel()
	invocation := time.Now().Add(time.Hour)
	send, cancel := context.WithCancel(delivery.NewContext(context.Background(), &delivery.Attempt{Deadline: invocation}))
	cancel()
	after, stop := delivery.AfterSend(send)
	defer stop()
	require.NoError(t, after.Err())
	d, ok := after.Deadline()
	require.True(t, ok)
	require.Equal(t, invocation, d)
	require.NotNil(t, delivery.AttemptFrom(after), "the attempt travels on")
}

// TestAttemptNotes: store failures are joined, a disable kept; a nil
// Attempt (a send outside the processor) takes every note and keeps none.
func TestAttemptNotes(t *testing.T) {
	t.Parallel()
	a := &delivery.Attempt{}
	require.NoError(t, a.StoreError())
	a.StoreFailed(errors.New("read health"))
	a.StoreFailed(nil)
	a.StoreFailed(errors.New("claim"))
	require.EqualError(t, a.StoreError(), "read health\nclaim")
	require.False(t, a.Disabled())
	a.DisabledDestination()
	require.True(t, a.Disabled())

	var none *delivery.Attempt
	none.StoreFailed(errors.New("x"))
	none.DisabledDestination()
	require.NoError(t, none.StoreError())
	require.False(t, none.Disabled())
	require.Nil(t, delivery.AttemptFrom(context.Background()))
}

// TestAlreadyDelivered: a DeliveredError, wrapped or not, says when; any
// other error, nil included, does not; it is neither permanent nor of a
// known class.
func TestAlreadyDelivered(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	err := &delivery.DeliveredError{At: at, Err: errors.New("delivered")}
	got, ok := delivery.AlreadyDelivered(errors.Join(errors.New("wrapped"), err))
	require.True(t, ok)
	require.Equal(t, at, got)
	for _, other := range []error{nil, errors.New("x"), delivery.Permanent("webhook_gone", errors.New("410"))} {
		_, ok := delivery.AlreadyDelivered(other)
		require.False(t, ok, "%v", other)
	}
	permanent, class, _ := delivery.Classify(err)
	require.False(t, permanent)
	require.Equal(t, delivery.ClassUnknown, class)
}

type plain struct{}

func (plain) Send(context.Context, *notification.Message) error { return nil }

type keyed struct{ plain }

func (keyed) DestinationKey(*notification.Message) string { return "chat:slack:k" }

// TestKeepDestinationKey: a wrapper keeps the key of what it wraps, and
// gets none from a sender without one.
func TestKeepDestinationKey(t *testing.T) {
	t.Parallel()
	k, ok := delivery.KeepDestinationKey(plain{}, keyed{}).(delivery.DestinationKeyer)
	require.True(t, ok)
	require.Equal(t, "chat:slack:k", k.DestinationKey(nil))
	_, ok = delivery.KeepDestinationKey(plain{}, plain{}).(delivery.DestinationKeyer)
	require.False(t, ok)
}
