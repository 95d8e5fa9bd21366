package webhook_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
)

// gatedServer is a TLS receiver that holds each request until n requests
// are in its handler at once (or gateFallback passes: under load one round's
// last handlers may still be counted when the next round's first request
// arrives, so the final round can be short), then answers them all 204. It counts the requests in flight at most and the
// connections it accepted.
type gatedServer struct {
	srv         *httptest.Server
	n           int
	mu          sync.Mutex
	inFlight    int
	maxInFlight int
	gate        chan struct{}
	conns       atomic.Int64
	protos      sync.Map // "HTTP/1.1", "HTTP/2.0" seen
}

func newGatedServer(t *testing.T, n int, http2 bool) *gatedServer {
	t.Helper()
	g := &gatedServer{n: n, gate: make(chan struct{})}
	g.srv = httptest.NewUnstartedServer(http.HandlerFunc(g.serve))
	g.srv.EnableHTTP2 = http2
	g.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	g.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			g.conns.Add(1)
		}
	}
	g.srv.StartTLS()
	t.Cleanup(g.srv.Close)
	return g
}

func (g *gatedServer) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	g.protos.Store(r.Proto, true)
	g.mu.Lock()
	g.inFlight++
	g.maxInFlight = max(g.maxInFlight, g.inFlight)
	gate := g.gate
	if g.inFlight == g.n {
		close(g.gate) // this round is complete: answer it, gate the next
		g.gate = make(chan struct{})
	}
	g.mu.Unlock()
	select {
	case <-gate:
	case <-time.After(gateFallback):
	}
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (g *gatedServer) max() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxInFlight
}

// gateFallback is well under gatedTimeout, the senders' request timeout in
// these tests, so a short final round is answered, never timed out.
const (
	gateFallback = 2 * time.Second
	gatedTimeout = 20 * time.Second
)

// sendAll sends n messages to url at once and returns their errors.
func sendAll(s *webhook.Sender, url string, n int) []error {
	return sendAllCtx(context.Background(), s, url, n)
}

// sendAllCtx is sendAll with ctx (an httptrace.ClientTrace, say).
func sendAllCtx(ctx context.Context, s *webhook.Sender, url string, n int) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			m := message(url)
			m.ID = fmt.Sprintf("msg_%d", i)
			errs[i] = s.Send(ctx, m)
		})
	}
	wg.Wait()
	return errs
}

// poolTrace counts, through httptrace, what net/http did with each
// connection once its response was read: offered to the idle pool and
// kept, offered and refused (the pool was full), or not offered at all.
// net/http offers a connection only when the request's writer has reported
// the write done within 50 ms of the response (maxWriteWaitBeforeConnReuse
// in net/http/transport.go): a goroutine that a loaded machine does not run
// for 50 ms costs a connection that herald's pool would have kept.
type poolTrace struct {
	kept, responses atomic.Int64
	mu              sync.Mutex
	refused         []error
}

func (p *poolTrace) context() context.Context {
	return httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotFirstResponseByte: func() { p.responses.Add(1) },
		PutIdleConn: func(err error) {
			if err == nil {
				p.kept.Add(1)
				return
			}
			p.mu.Lock()
			p.refused = append(p.refused, err)
			p.mu.Unlock()
		},
	})
}

// notOffered is how many connections net/http closed without offering them
// to the pool.
func (p *poolTrace) notOffered() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.responses.Load() - p.kept.Load() - int64(len(p.refused))
}

func TestSendLimitsRequestsInFlightPerDestination(t *testing.T) {
	t.Parallel()

	const limit = 3
	g := newGatedServer(t, limit, false)
	s := newSender(t, g.srv, func(c *webhook.Config) { c.MaxInFlightPerDestination, c.Timeout = limit, gatedTimeout })

	for _, err := range sendAll(s, g.srv.URL, 4*limit) {
		require.NoError(t, err)
	}
	require.Equal(t, limit, g.max(), "requests in flight at once to one destination")
}

func TestSendPerDestinationLimitIsPerDestination(t *testing.T) {
	t.Parallel()

	// a holds its one slot until released; b is another origin.
	release := make(chan struct{})
	arrived := make(chan struct{}, 2)
	a, aHits := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	})
	b, _ := newServer(t, status(http.StatusNoContent))
	s := newSender(t, nil, func(c *webhook.Config) {
		c.MaxInFlightPerDestination = 1
		c.TLSClientConfig = a.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		c.TLSClientConfig.RootCAs.AddCert(b.Certificate())
	})

	first := make(chan error, 1)
	go func() { first <- s.Send(context.Background(), message(a.URL+"/1")) }()
	select {
	case <-arrived:
	case err := <-first:
		t.Fatalf("the first send ended before the receiver held it: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the first send never reached the receiver")
	}

	// b is not held up by a's full slot.
	require.NoError(t, s.Send(context.Background(), message(b.URL)))

	// A second send to a waits, bounded by its context, and sends nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := s.Send(ctx, message(a.URL+"/2"))
	requireOutcome(t, err, false, delivery.ClassDeadline)
	require.EqualValues(t, 1, aHits.Load())

	close(release)
	require.NoError(t, <-first)
	// The slot is free again.
	require.NoError(t, s.Send(context.Background(), message(a.URL+"/3")))
	require.EqualValues(t, 2, aHits.Load())
}

func TestSendWarmOpensNoNewConnection(t *testing.T) {
	t.Parallel()

	// More at once than net/http's default of 2 idle connections per host,
	// and than the 16 herald kept before: all n must stay pooled.
	const n = 40
	g := newGatedServer(t, n, false)
	s := newSender(t, g.srv, func(c *webhook.Config) { c.Timeout = gatedTimeout })

	// Every connection is offered back to the pool and kept, so each
	// round after the first finds n idle ones and dials none. The only
	// connections dialed again replace ones net/http itself did not offer
	// to the pool (poolTrace): none on an idle machine.
	var trace poolTrace
	for round := range 3 {
		for _, err := range sendAllCtx(trace.context(), s, g.srv.URL, n) {
			require.NoError(t, err)
		}
		trace.mu.Lock()
		refused := slices.Clone(trace.refused)
		trace.mu.Unlock()
		require.Empty(t, refused, "the pool refused %d connections by round %d", len(refused), round+1)
		dropped := trace.notOffered()
		require.EqualValues(t, n*(round+1), trace.responses.Load())
		// Most requests waited at the gate long after their write was
		// done: a transport that offers none (keep-alives off) fails here.
		require.Less(t, dropped, int64(n*(round+1)/2), "connections net/http did not offer to the pool by round %d", round+1)
		require.LessOrEqual(t, g.conns.Load(), n+dropped, "connections accepted after round %d (%d not offered to the pool by net/http)", round+1, dropped)
		require.GreaterOrEqual(t, g.conns.Load(), int64(n), "round 1 holds n requests at once")
	}
	_, h2 := g.protos.Load("HTTP/2.0")
	require.False(t, h2, "the server offers HTTP/1.1 only")
}

func TestSendUsesHTTP2WhenOffered(t *testing.T) {
	t.Parallel()

	const n = 20
	g := newGatedServer(t, n, true)
	s := newSender(t, g.srv, func(c *webhook.Config) { c.Timeout = gatedTimeout })

	// One send opens the connection (concurrent first sends would each
	// dial: net/http pools an HTTP/2 connection once it is negotiated).
	g.n = 1
	require.NoError(t, s.Send(context.Background(), message(g.srv.URL)))
	g.mu.Lock()
	g.n, g.maxInFlight = n, 0
	g.mu.Unlock()
	for _, err := range sendAll(s, g.srv.URL, n) {
		require.NoError(t, err)
	}
	_, h2 := g.protos.Load("HTTP/2.0")
	_, h1 := g.protos.Load("HTTP/1.1")
	require.True(t, h2, "HTTP/2 negotiated")
	require.False(t, h1, "no request over HTTP/1.1")
	// Then n requests at once share that connection (the server allows
	// 250 streams on it).
	require.EqualValues(t, 1, g.conns.Load())
	require.Equal(t, n, g.max())
}
