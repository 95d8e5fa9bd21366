package endpointsend_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
)

// sharedPace is one store (DynamoDB's wire format) that several execution
// environments share, on the real clock: the pace is compared with real
// deadlines.
func sharedPace(t *testing.T) (*store.Store, *dynamotest.Server) {
	t.Helper()
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: "herald-store"})
	require.NoError(t, err)
	return st, ddb
}

// TestRateLimitAcrossEnvironments: two execution environments (two
// Senders, each with its own webhook sender and pacer) share an endpoint's
// pace through the store. With a rate limit of 1/s the first environment
// sends at once; the second, whose invocation ends in 300 ms, does not
// send but is told to retry after about a second (endpoint_rate_limited);
// with time enough it waits for its turn, which comes a second after the
// first's. An endpoint without a rate limit writes no pace item.
func TestRateLimitAcrossEnvironments(t *testing.T) {
	t.Parallel()
	st, ddb := sharedPace(t)
	recv := newReceiver(t, http.StatusOK)
	reg := &endpoints{}
	ep := webhookEndpoint(ep1, recv.srv.URL, 'a')
	ep.RateLimit = 1
	reg.put(ep)
	envA := endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg, Pace: st})
	envB := endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg, Pace: st})

	start := time.Now() // before the first turn is taken
	require.NoError(t, envA.Send(t.Context(), delivery1(ep1)))

	short, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err := envB.Send(short, delivery1(ep1))
	requireClass(t, err, false, endpointsend.ClassRateLimited)
	_, _, retryAfter := delivery.Classify(err)
	require.Greater(t, retryAfter, 300*time.Millisecond)
	require.LessOrEqual(t, retryAfter, time.Second)
	require.Len(t, recv.requests(), 1, "not sent over the limit")

	long, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, envB.Send(long, delivery1(ep1)))
	reqs := recv.requests()
	require.Len(t, reqs, 2)
	require.GreaterOrEqual(t, reqs[1].at.Sub(start), time.Second, "the second turn is a second after the first")

	// Without a limit: no pace item is read or written.
	writes := ddb.Calls("PutItem") + ddb.Calls("UpdateItem")
	ep2 := webhookEndpoint(ep2, recv.srv.URL, 'b')
	reg.put(ep2)
	bounded, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for range 3 {
		require.NoError(t, envA.Send(bounded, delivery1(ep2.ID)), "not paced: sent at once")
	}
	require.Equal(t, writes, ddb.Calls("PutItem")+ddb.Calls("UpdateItem"))
}

// TestRateLimitAlone: without a store a Sender paces its own sends: three
// at once to an endpoint limited to 5/s take at least 400 ms.
func TestRateLimitAlone(t *testing.T) {
	t.Parallel()
	recv := newReceiver(t, http.StatusOK)
	reg := &endpoints{}
	ep := webhookEndpoint(ep1, recv.srv.URL, 'a')
	ep.RateLimit = 5
	reg.put(ep)
	s := endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now() // before the first turn is taken
	for range 3 {
		require.NoError(t, s.Send(ctx, delivery1(ep1)))
	}
	reqs := recv.requests()
	require.GreaterOrEqual(t, reqs[2].at.Sub(start), 400*time.Millisecond)
}

// TestRateLimitBelowTheFloorStillPaces: an endpoint item whose rate limit
// is above 0 but below endpoint.MinRateLimit (written before the floor,
// or by hand: Validate refuses it) is paced at the floor, not left
// unlimited. 1/r seconds of such a rate overflowed a time.Duration into a
// negative interval, and every delivery went at once.
func TestRateLimitBelowTheFloorStillPaces(t *testing.T) {
	t.Parallel()
	for _, r := range []float64{1e-300, 1e-10, endpoint.MinRateLimit / 10} {
		recv := newReceiver(t, http.StatusOK)
		reg := &endpoints{}
		ep := webhookEndpoint(ep1, recv.srv.URL, 'a')
		ep.RateLimit = r
		reg.put(ep)
		s := endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg})
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		require.NoError(t, s.Send(ctx, delivery1(ep1)), "the first turn is at once")
		err := s.Send(ctx, delivery1(ep1))
		cancel()
		requireClass(t, err, false, endpointsend.ClassRateLimited)
		_, _, retryAfter := delivery.Classify(err)
		require.Greater(t, retryAfter, 900*time.Second, "rate %g: the next turn is 1/MinRateLimit s away", r)
		require.LessOrEqual(t, retryAfter, time.Duration(float64(time.Second)/endpoint.MinRateLimit))
		require.Len(t, recv.requests(), 1, "rate %g: not sent over the limit", r)
	}
}

// busyPace is the store an endpoint's pace is shared through, with another
// execution environment that takes a turn of the same endpoint (every
// 250 ms, a rate of 4/s) before each of this environment's writes while
// busy is set: this one's every try meets a newer item, and after the
// store's five tries it gives up (store.ErrContended), as under heavy
// contention.
type busyPace struct {
	st   *store.Store
	busy bool
	b    store.Pace
}

func (p *busyPace) UpdatePace(ctx context.Context, x store.Pace, change func(*store.Pace) bool) (store.Pace, bool, error) {
	return p.st.UpdatePace(ctx, x, func(y *store.Pace) bool {
		if p.busy {
			var err error
			p.b, _, err = p.st.UpdatePace(ctx, p.b, func(z *store.Pace) bool {
				z.Next = later(z.Next, time.Now()).Add(250 * time.Millisecond)
				z.Expires = z.Next.Add(time.Minute)
				return true
			})
			if err != nil {
				panic(err)
			}
		}
		return change(y)
	})
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// TestContendedPaceSendsNothingEarly: an environment that sent to an
// endpoint limited to 4/s, then lost every try to write its next turn
// because another environment kept taking turns, must not take a turn
// from its own stale copy of the pace (250 ms after its last send: a turn
// the other took long since) and send unrecorded: the shared limit would
// not hold. It sends nothing and the delivery is retried
// (endpoint_rate_limited) no sooner than the newest turn it saw.
func TestContendedPaceSendsNothingEarly(t *testing.T) {
	t.Parallel()
	st, _ := sharedPace(t)
	recv := newReceiver(t, http.StatusOK)
	reg := &endpoints{}
	ep := webhookEndpoint(ep1, recv.srv.URL, 'a')
	ep.RateLimit = 4
	reg.put(ep)
	pace := &busyPace{st: st, b: store.Pace{Key: endpointsend.DestinationKey(ep1)}}
	s := endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg, Pace: pace})
	require.NoError(t, s.Send(t.Context(), delivery1(ep1)), "the first turn is at once")

	pace.busy = true
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err := s.Send(ctx, delivery1(ep1))
	requireClass(t, err, false, endpointsend.ClassRateLimited)
	_, _, retryAfter := delivery.Classify(err)
	require.GreaterOrEqual(t, retryAfter, 750*time.Millisecond, "no sooner than the newest turn seen")
	require.Len(t, recv.requests(), 1, "nothing sent unrecorded")
}
