package webhook_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
)

// stallProxy is a TCP proxy on 127.0.0.1 in front of a receiver. Stall makes
// it stop forwarding, both ways, on every connection open at that moment
// while keeping them open, as a load balancer or proxy that hangs does; the
// connections opened later are forwarded as before.
type stallProxy struct {
	ln       net.Listener
	backend  string
	done     chan struct{}
	accepted atomic.Int64

	mu    sync.Mutex
	conns []*proxiedConn
}

type proxiedConn struct {
	client, server net.Conn
	stalled        atomic.Bool
}

func newStallProxy(t *testing.T, backend string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stallProxy{ln: ln, backend: backend, done: make(chan struct{})}
	go p.accept()
	t.Cleanup(func() {
		close(p.done)
		_ = ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			_ = c.client.Close()
			_ = c.server.Close()
		}
	})
	return p
}

// URL is the proxy's https URL.
func (p *stallProxy) URL() string { return "https://" + p.ln.Addr().String() }

func (p *stallProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.backend)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.accepted.Add(1)
		pc := &proxiedConn{client: c, server: s}
		p.mu.Lock()
		p.conns = append(p.conns, pc)
		p.mu.Unlock()
		go p.pipe(pc, s, c)
		go p.pipe(pc, c, s)
	}
}

// pipe copies src to dst until either closes; once pc is stalled it holds
// what it read and reads no more.
func (p *stallProxy) pipe(pc *proxiedConn, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if pc.stalled.Load() {
				<-p.done
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			_ = dst.Close()
			return
		}
	}
}

// Stall stops forwarding on every connection open now.
func (p *stallProxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.stalled.Store(true)
	}
}

// stallReceiver is a TLS receiver (HTTP/2 when http2) behind a stallProxy.
// Its handler answers 204, or for a path of "/headers-then-stall" writes a
// 200's headers, waits for bodyGo and writes a body.
type stallReceiver struct {
	srv    *httptest.Server
	proxy  *stallProxy
	protos sync.Map
	bodyGo chan struct{}
}

func newStallReceiver(t *testing.T, http2 bool) *stallReceiver {
	t.Helper()
	r := &stallReceiver{bodyGo: make(chan struct{})}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.protos.Store(req.Proto, true)
		if req.URL.Path != "/headers-then-stall" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		select {
		case <-r.bodyGo:
		case <-req.Context().Done():
			return
		}
		_, _ = w.Write([]byte(strings.Repeat(" ", 64<<10) + "}"))
	}))
	r.srv.EnableHTTP2 = http2
	r.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	r.proxy = newStallProxy(t, r.srv.Listener.Addr().String())
	return r
}

// stallSender sends through r's proxy with a short HTTP/2 health check, so
// that a test waits a fraction of a second, not DefaultHealthCheck's 4.
func stallSender(t *testing.T, r *stallReceiver, timeout time.Duration) *webhook.Sender {
	t.Helper()
	return newSender(t, r.srv, func(c *webhook.Config) {
		c.Timeout = timeout
		webhook.SetHealthCheck(c, 250*time.Millisecond)
	})
}

// TestStalledConnectionIsReplaced: a connection that a proxy keeps open but
// no longer forwards on fails the request on it at most, never the next
// ones: the next send dials afresh. Over HTTP/2 it takes the health check
// (a PING unanswered); over HTTP/1.1 the abandoned request closes it.
func TestStalledConnectionIsReplaced(t *testing.T) {
	t.Parallel()
	for _, http2 := range []bool{true, false} {
		name := map[bool]string{true: "HTTP/2", false: "HTTP/1.1"}[http2]
		t.Run("idle, then stalled: "+name, func(t *testing.T) {
			t.Parallel()
			r := newStallReceiver(t, http2)
			s := stallSender(t, r, 2*time.Second)
			require.NoError(t, s.Send(context.Background(), message(r.proxy.URL()+"/1")))
			_, h2 := r.protos.Load("HTTP/2.0")
			require.Equal(t, http2, h2)

			r.proxy.Stall()
			err := s.Send(context.Background(), message(r.proxy.URL()+"/2"))
			require.Error(t, err, "the request on the stalled connection is lost")
			permanent, _, _ := delivery.Classify(err)
			require.False(t, permanent, "retried: %v", err)

			require.NoError(t, s.Send(context.Background(), message(r.proxy.URL()+"/3")), "a fresh connection")
			require.EqualValues(t, 2, r.proxy.accepted.Load())
		})

		t.Run("stalled after the response headers: "+name, func(t *testing.T) {
			t.Parallel()
			r := newStallReceiver(t, http2)
			s := stallSender(t, r, 2*time.Second)
			// The proxy stalls once the client has the response's first
			// bytes (the status and headers, in the TLS record the receiver
			// flushed them in), before the body follows.
			gotHeaders := make(chan struct{})
			var once sync.Once
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				GotFirstResponseByte: func() { once.Do(func() { close(gotHeaders) }) },
			})
			sent := make(chan error, 1)
			go func() { sent <- s.Send(ctx, message(r.proxy.URL()+"/headers-then-stall")) }()
			select {
			case <-gotHeaders:
			case err := <-sent:
				t.Fatalf("the send ended before the client read the response: %v", err)
			}
			r.proxy.Stall()
			close(r.bodyGo)
			require.NoError(t, <-sent, "the receiver answered 200: delivered, whatever became of the body")

			require.NoError(t, s.Send(context.Background(), message(r.proxy.URL()+"/next")), "a fresh connection")
			require.EqualValues(t, 2, r.proxy.accepted.Load())
		})
	}
}

// TestStalledConnectionFailsItsRequestsAtOnce: several sends in flight on
// one HTTP/2 connection when it stalls all fail when the health check
// closes it, and the sends after them go through a new connection.
func TestStalledConnectionFailsItsRequestsAtOnce(t *testing.T) {
	t.Parallel()
	r := newStallReceiver(t, true)
	// A timeout far above the health check: the sends can only end early
	// because the connection was closed.
	s := stallSender(t, r, time.Minute)
	require.NoError(t, s.Send(context.Background(), message(r.proxy.URL()+"/warm")))
	r.proxy.Stall()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = s.Send(ctx, message(r.proxy.URL()+"/stalled")) })
	}
	wg.Wait()
	require.NoError(t, ctx.Err(), "the connection was closed long before the test's deadline")
	for _, err := range errs {
		require.Error(t, err)
		_, class, _ := delivery.Classify(err)
		require.NotEqual(t, delivery.ClassDeadline, class, "failed by the closed connection, not by the deadline: %v", err)
	}
	require.NoError(t, s.Send(context.Background(), message(r.proxy.URL()+"/after")))
	require.EqualValues(t, 2, r.proxy.accepted.Load())
}

// TestStalledTLSHandshake: a receiver that accepts the connection and never
// answers the ClientHello fails the attempt as a timeout within its
// Timeout; a send to a working receiver while that handshake is held goes
// through. (The working send runs beside the stalled one, so the Timeout
// that ends the stalled attempt is also the working send's whole budget:
// 2 s, for one TLS handshake and request on loopback, not a race against
// a machine's load.)
func TestStalledTLSHandshake(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	accepted := make(chan struct{}, 1)
	var held []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	ok, hits := newServer(t, status(http.StatusNoContent))
	s := newSender(t, ok, func(c *webhook.Config) { c.Timeout = 2 * time.Second })
	stalled := make(chan error, 1)
	start := time.Now()
	go func() { stalled <- s.Send(context.Background(), message("https://"+ln.Addr().String()+"/")) }()
	select {
	case <-accepted:
	case err := <-stalled:
		t.Fatalf("the stalled send ended before its connection was accepted: %v", err)
	}

	require.NoError(t, s.Send(context.Background(), message(ok.URL+"/")), "sent while the other handshake is held")
	require.EqualValues(t, 1, hits.Load())
	select {
	case err := <-stalled:
		requireOutcome(t, err, false, webhook.ClassTimeout)
		// Ended by the 2 s Timeout, not by the transport's 10 s bound on
		// a handshake (5 s of slack for a loaded machine).
		require.Less(t, time.Since(start), 7*time.Second)
	case <-time.After(30 * time.Second):
		t.Fatal("the stalled handshake outlived its Timeout")
	}
}
