package endpointsend_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/testkit/testclock"
)

// countingReads counts the reads of the register behind a Cache, as the
// table's GetItem and KMS Decrypt would be counted.
type countingReads struct {
	src *endpoints
	mu  sync.Mutex
	n   int
}

func (c *countingReads) Get(ctx context.Context, id string) (endpoint.Endpoint, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.src.Get(ctx, id)
}

func (c *countingReads) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// TestNoRefusalOnAStaleCopy: the runbook's "enable the endpoint, then
// redrive its dead letters" works at once. The deliver function's cache
// (endpoint.Cache, 30 s) holds the endpoint as it read it when it refused
// the first delivery (disabled); the endpoint is enabled and the letter
// redriven within the TTL: the redriven delivery is sent, not refused
// again for good on the stale copy (a second endpoint_disabled letter that
// the operator's redrive never hears of). The same for an endpoint read as
// not found and created since. A flood of deliveries to an endpoint that
// stays disabled reads it again at most once per endpoint.MaxRefusalAge,
// not once per record. The cache's clock is its own (no real deadline).
func TestNoRefusalOnAStaleCopy(t *testing.T) {
	t.Parallel()
	recv := newReceiver(t, http.StatusOK)
	reg := &endpoints{}
	src := &countingReads{src: reg}
	clock := testclock.New(time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC))
	cache := endpoint.NewCache(src, 0, clock.Now)
	s := endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: cache})

	ep := webhookEndpoint(ep1, recv.srv.URL, 'a')
	ep.Disabled = &endpoint.Disabled{Reason: "customer asked", At: clock.Now(), By: "operator"}
	reg.put(ep)
	requireClass(t, s.Send(t.Context(), delivery1(ep1)), true, endpointsend.ClassDisabled)
	for range 10 { // a flood of the same endpoint's deliveries, within MaxRefusalAge
		requireClass(t, s.Send(t.Context(), delivery1(ep1)), true, endpointsend.ClassDisabled)
	}
	require.LessOrEqual(t, src.count(), 2, "a disabled endpoint is not read again per record")

	clock.Advance(endpoint.MaxRefusalAge)
	ep.Disabled = nil
	reg.put(ep) // enabled
	clock.Advance(time.Second)
	require.Less(t, 2*endpoint.MaxRefusalAge+time.Second, endpoint.DefaultCacheTTL, "within the cache's TTL")
	require.NoError(t, s.Send(t.Context(), delivery1(ep1)), "the redriven delivery is sent")
	require.Len(t, recv.requests(), 1)

	// Not found, then created.
	_, err := cache.Get(t.Context(), ep2)
	require.ErrorIs(t, err, endpoint.ErrNotFound)
	clock.Advance(endpoint.MaxRefusalAge)
	reg.put(webhookEndpoint(ep2, recv.srv.URL, 'b'))
	require.NoError(t, s.Send(t.Context(), delivery1(ep2)), "an endpoint created since it was read as missing")
	require.Len(t, recv.requests(), 2)
}
