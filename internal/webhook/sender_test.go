package webhook_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

type received struct {
	method string
	header http.Header
	body   []byte
}

// capture returns a handler that passes each request to the channel and
// answers 204.
func capture() (http.HandlerFunc, chan received) {
	ch := make(chan received, 1)
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ch <- received{method: r.Method, header: r.Header.Clone(), body: body}
		w.WriteHeader(http.StatusNoContent)
	}, ch
}

func TestSendRequest(t *testing.T) {
	t.Parallel()

	h, got := capture()
	b := setup(t, h, shared)
	m := message(b.srv.URL + "/hooks/in")
	m.Webhook.Headers = map[string]string{"X-Tenant": "acme", "authorization": "Bearer t0k", "x-empty": ""}

	require.NoError(t, b.sender.Send(context.Background(), m))
	r := receivedBy(t, got)

	require.Equal(t, http.MethodPost, r.method)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, "herald/1", r.header.Get("User-Agent"))
	require.Equal(t, strconv.Itoa(len(r.body)), r.header.Get("Content-Length"))
	wantBody := `{"type":"invoice.paid","timestamp":"2026-03-14T14:09:26Z","data":{"invoice": "in_1", "amounts": [1, 2]}}`
	require.Equal(t, wantBody, string(r.body))

	var shape map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.body, &shape))
	require.Len(t, shape, 3)
	require.JSONEq(t, `"invoice.paid"`, string(shape["type"]))
	require.JSONEq(t, `"2026-03-14T14:09:26Z"`, string(shape["timestamp"]))
	require.JSONEq(t, string(m.Webhook.Payload), string(shape["data"]))

	require.Equal(t, m.ID, r.header.Get("webhook-id"))
	require.Equal(t, strconv.FormatInt(testNow.Unix(), 10), r.header.Get("webhook-timestamp"))
	require.Equal(t, "1773497366", r.header.Get("webhook-timestamp"))
	require.Equal(t, hmacSignature(t, testSecret, m.ID, r.header.Get("webhook-timestamp"), r.body), r.header.Get("webhook-signature"))

	require.Equal(t, "acme", r.header.Get("X-Tenant"))
	require.Equal(t, "Bearer t0k", r.header.Get("Authorization"))
	require.Contains(t, r.header, "X-Empty")
}

// TestSendSignsWithEveryActiveSecret: during a rotation the request carries
// one signature per secret, space-separated, in the order configured.
func TestSendSignsWithEveryActiveSecret(t *testing.T) {
	t.Parallel()

	second := secretOf(32)
	h, got := capture()
	b := setup(t, h, shared, func(c *webhook.Config) {
		c.Secret = ""
		c.Secrets = []string{second, testSecret}
	})
	m := message(b.srv.URL)
	require.NoError(t, b.sender.Send(t.Context(), m))
	r := receivedBy(t, got)
	ts := r.header.Get("webhook-timestamp")
	require.Equal(t,
		hmacSignature(t, second, m.ID, ts, r.body)+" "+hmacSignature(t, testSecret, m.ID, ts, r.body),
		r.header.Get("webhook-signature"))
}

// hmacSignature computes a Standard Webhooks v1 signature without the code
// under test.
func hmacSignature(t *testing.T, secret, id, ts string, body []byte) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// TestSendVector posts the herald vector of testdata/webhook/vectors.json:
// the body and signature must be the vector's byte for byte.
func TestSendVector(t *testing.T) {
	t.Parallel()

	v := loadVectors(t)[1]
	require.Equal(t, "herald envelope", v.Name)
	h, got := capture()
	b := setup(t, h, shared, func(c *webhook.Config) {
		c.Secret = v.Secret
		c.Now = func() time.Time { return time.Unix(v.Timestamp, 0) }
	})
	m := message(b.srv.URL)
	m.ID = v.MsgID
	m.Webhook.EventType = v.EventType
	m.Webhook.Payload = json.RawMessage(v.Payload)

	require.NoError(t, b.sender.Send(context.Background(), m))
	r := receivedBy(t, got)
	require.Equal(t, v.Body, string(r.body))
	require.Equal(t, v.Signature, r.header.Get("webhook-signature"))
}

func TestSendStatus(t *testing.T) {
	t.Parallel()

	tests := []struct {
		code      int
		permanent bool
		class     delivery.Class // empty: delivered
	}{
		{code: 200},
		{code: 201},
		{code: 202},
		{code: 204},
		{code: 299},
		{code: 101, class: webhook.ClassHTTPOther},
		{code: 300, class: webhook.ClassRedirect},
		{code: 304, class: webhook.ClassRedirect},
		{code: 400, class: webhook.ClassHTTP4xx},
		{code: 401, class: webhook.ClassHTTP4xx},
		{code: 403, class: webhook.ClassHTTP4xx},
		{code: 404, class: webhook.ClassHTTP4xx},
		{code: 408, class: webhook.ClassHTTP408},
		{code: 409, class: webhook.ClassHTTP4xx},
		{code: 410, permanent: true, class: webhook.ClassGone},
		{code: 413, class: webhook.ClassHTTP4xx},
		{code: 422, class: webhook.ClassHTTP4xx},
		{code: 425, class: webhook.ClassHTTP425},
		{code: 429, class: webhook.ClassHTTP429},
		{code: 499, class: webhook.ClassHTTP4xx},
		{code: 500, class: webhook.ClassHTTP5xx},
		{code: 502, class: webhook.ClassHTTP5xx},
		{code: 503, class: webhook.ClassHTTP5xx},
		{code: 504, class: webhook.ClassHTTP5xx},
		{code: 599, class: webhook.ClassHTTP5xx},
		{code: 600, class: webhook.ClassHTTPOther},
		{code: 999, class: webhook.ClassHTTPOther},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			t.Parallel()

			b := setup(t, status(tt.code))
			err := b.sender.Send(context.Background(), message(b.srv.URL))
			require.EqualValues(t, 1, b.hits.Load())
			if tt.class == "" {
				require.NoError(t, err)
				return
			}
			retryAfter := requireOutcome(t, err, tt.permanent, tt.class)
			require.Zero(t, retryAfter)
			require.Contains(t, err.Error(), "HTTP "+strconv.Itoa(tt.code))
		})
	}
}

func TestSendRetryAfter(t *testing.T) {
	t.Parallel()

	// An HTTP-date has whole seconds: 90 s after testNow, less its fraction.
	in90s := testNow.Add(90 * time.Second).UTC().Format(http.TimeFormat)
	to90s := testNow.Add(90 * time.Second).Truncate(time.Second).Sub(testNow)
	tests := []struct {
		name       string
		code       int
		retryAfter string
		class      delivery.Class
		want       time.Duration
	}{
		{name: "429 seconds", code: 429, retryAfter: "120", class: webhook.ClassHTTP429, want: 120 * time.Second},
		{name: "429 date", code: 429, retryAfter: in90s, class: webhook.ClassHTTP429, want: to90s},
		{name: "503 seconds", code: 503, retryAfter: "7", class: webhook.ClassHTTP5xx, want: 7 * time.Second},
		{name: "503 date", code: 503, retryAfter: in90s, class: webhook.ClassHTTP5xx, want: to90s},
		{name: "503 absurd", code: 503, retryAfter: "31536000", class: webhook.ClassHTTP5xx, want: 12 * time.Hour},
		{name: "503 garbage", code: 503, retryAfter: "soon", class: webhook.ClassHTTP5xx},
		{name: "429 negative", code: 429, retryAfter: "-30", class: webhook.ClassHTTP429},
		{name: "500 ignores it", code: 500, retryAfter: "60", class: webhook.ClassHTTP5xx},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", tt.retryAfter)
				w.WriteHeader(tt.code)
			})
			err := b.sender.Send(context.Background(), message(b.srv.URL))
			require.Equal(t, tt.want, requireOutcome(t, err, false, tt.class))
		})
	}
}

func TestSendRedirect(t *testing.T) {
	t.Parallel()

	tests := []struct {
		code      int
		permanent bool
	}{
		// Every 3xx is a failure, retried, never followed ("Delivery
		// success and failure": "update the webhook URL instead").
		{code: 301},
		{code: 302},
		{code: 303},
		{code: 307},
		{code: 308},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			t.Parallel()

			target, targetHits := newServer(t, status(http.StatusOK))
			location := strings.Replace(target.URL, "https://", "https://user:pa55@", 1) + "/moved/path?token=SECRET"
			b := setup(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, location, tt.code)
			})

			err := b.sender.Send(context.Background(), message(b.srv.URL))
			requireOutcome(t, err, tt.permanent, webhook.ClassRedirect)
			require.EqualValues(t, 1, b.hits.Load())
			require.Zero(t, targetHits.Load(), "the redirect was followed")
			require.Contains(t, err.Error(), "HTTP "+strconv.Itoa(tt.code))
			require.Contains(t, err.Error(), "not followed")
			require.Contains(t, err.Error(), "Location "+target.URL+")")
			requireNoSecrets(t, err, "/moved", "pa55", "SECRET")
		})
	}
}

func TestSendErrorBodyExcerpt(t *testing.T) {
	t.Parallel()

	body := "{\"error\":\"invalid\r\n\tsignature\x00\x1b[31m\"}" + strings.Repeat("é", 300) + "TAIL"
	b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		io.WriteString(w, body)
	})

	err := b.sender.Send(context.Background(), message(b.srv.URL))
	requireOutcome(t, err, false, webhook.ClassHTTP4xx)
	text := err.Error()
	require.Contains(t, text, `HTTP 422 Unprocessable Entity; body: {"error":"invalid signature [31m"}éé`)
	require.NotContains(t, text, "TAIL")
	require.True(t, strings.HasSuffix(text, "é…"), text)
	for _, r := range text {
		require.True(t, r >= ' ' && r != 0x7f, "control character %q in %q", r, text)
	}
	_, excerpt, _ := strings.Cut(text, "; body: ")
	require.LessOrEqual(t, len(excerpt), 200+len("…"))
}

// TestSendLargeResponse checks that a long 2xx body is read only up to
// MaxResponseBytes: the server cannot write all of it.
func TestSendLargeResponse(t *testing.T) {
	t.Parallel()

	const total = 10 << 20
	var written atomic.Int64
	done := make(chan error, 1)
	b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(total))
		w.WriteHeader(http.StatusOK)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for written.Load() < total {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	})

	require.NoError(t, b.sender.Send(context.Background(), message(b.srv.URL)))
	select {
	case err := <-done:
		require.Error(t, err, "the server wrote the whole body: the client read it all")
	case <-time.After(5 * time.Second):
		t.Fatal("the server is still writing: the client did not close the connection")
	}
	require.Less(t, written.Load(), int64(total))
	t.Logf("server wrote %d of %d bytes", written.Load(), total)
}

// TestSendReusesConnections checks that a read body lets the next attempt
// reuse the connection.
func TestSendReusesConnections(t *testing.T) {
	t.Parallel()

	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"ok":true}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s := newSender(t, srv)

	for range 3 {
		require.NoError(t, s.Send(context.Background(), message(srv.URL)))
	}
	require.EqualValues(t, 1, conns.Load())
}

func TestSendTransportErrors(t *testing.T) {
	t.Parallel()

	// hijack takes the connection and lets f end it.
	hijack := func(f func(c net.Conn, rw *bufio.ReadWriter)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			c, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			f(c, rw)
			c.Close()
		}
	}
	// rst makes Close send a TCP RST instead of a FIN.
	rst := func(c net.Conn) {
		c.(*tls.Conn).NetConn().(*net.TCPConn).SetLinger(0)
	}

	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: no server
		url     func(t *testing.T, srvURL string) string
		config  func(*webhook.Config)
		ctx     func(t *testing.T) context.Context
		class   delivery.Class
	}{
		{
			name:    "timeout",
			handler: hang,
			config:  func(c *webhook.Config) { c.Timeout = 200 * time.Millisecond },
			class:   webhook.ClassTimeout,
		},
		{
			name:  "refused",
			url:   func(t *testing.T, _ string) string { return "https://" + closedAddr(t) + "/hook" },
			class: webhook.ClassConnection,
		},
		{
			name:    "closed before answering",
			handler: hijack(func(net.Conn, *bufio.ReadWriter) {}),
			class:   webhook.ClassConnection,
		},
		{
			name:    "reset before answering",
			handler: hijack(func(c net.Conn, _ *bufio.ReadWriter) { rst(c) }),
			class:   webhook.ClassConnection,
		},
		{
			name: "closed mid-response",
			handler: hijack(func(_ net.Conn, rw *bufio.ReadWriter) {
				rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
				rw.Flush()
			}),
			class: webhook.ClassConnection,
		},
		{
			name: "reset mid-response",
			handler: hijack(func(c net.Conn, rw *bufio.ReadWriter) {
				rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
				rw.Flush()
				rst(c)
			}),
			class: webhook.ClassConnection,
		},
		{
			name:    "untrusted certificate",
			handler: status(http.StatusOK),
			config:  func(c *webhook.Config) { c.TLSClientConfig = nil },
			class:   webhook.ClassTLS,
		},
		{
			name:    "wrong host name",
			handler: status(http.StatusOK),
			config: func(c *webhook.Config) {
				c.TLSClientConfig = c.TLSClientConfig.Clone()
				c.TLSClientConfig.ServerName = "herald-other.example" // not the certificate's name
			},
			class: webhook.ClassTLS,
		},
		{
			name: "plain HTTP server",
			url: func(t *testing.T, _ string) string {
				plain := httptest.NewServer(status(http.StatusOK))
				t.Cleanup(plain.Close)
				return strings.Replace(plain.URL, "http://", "https://", 1)
			},
			class: webhook.ClassTLS,
		},
		{
			name:  "DNS",
			url:   func(*testing.T, string) string { return "https://herald-test.example/hook" },
			class: webhook.ClassDNS,
		},
		{
			name:    "caller's context cancelled",
			handler: status(http.StatusOK),
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			class: delivery.ClassDeadline,
		},
		{
			name:    "caller's deadline before the timeout",
			handler: hang,
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			},
			class: delivery.ClassDeadline,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			var srv *httptest.Server
			srvURL := "https://127.0.0.1:1"
			if tt.handler != nil {
				srv, _ = newServer(t, tt.handler)
				srvURL = srv.URL
			}
			url := srvURL + "/hook"
			if tt.url != nil {
				url = tt.url(t, srvURL)
			}
			modify := []func(*webhook.Config){}
			if tt.config != nil {
				modify = append(modify, tt.config)
			}
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx(t)
			}

			err := newSender(t, srv, modify...).Send(ctx, message(url))
			requireOutcome(t, err, false, tt.class)
		})
	}
}

// TestSendBodyCutAfterSuccess: once the status is 2xx the notification is
// delivered, whatever happens to the rest of the response.
func TestSendBodyCutAfterSuccess(t *testing.T) {
	t.Parallel()

	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		// The request is read to its end first: closing a socket with
		// bytes of it unread sends a reset, which can reach the client
		// before it reads the status and discard it (a timing of the
		// machine, not of the Sender).
		_, _ = io.Copy(io.Discard, r.Body)
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
		rw.Flush()
		c.Close()
	})
	require.NoError(t, b.sender.Send(context.Background(), message(b.srv.URL)))
}

func TestSendCancelledDoesNotConnect(t *testing.T) {
	t.Parallel()

	b := setup(t, status(http.StatusOK))
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	cancel()
	err := b.sender.Send(ctx, message(b.srv.URL))
	requireOutcome(t, err, false, delivery.ClassDeadline)
	require.Zero(t, b.hits.Load())
}

func TestSendReservedHeader(t *testing.T) {
	t.Parallel()

	for _, name := range []string{
		"content-type", "Content-Length", "HOST", "user-agent",
		"webhook-id", "Webhook-Timestamp", "WEBHOOK-SIGNATURE",
		"Transfer-Encoding", "connection",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			b := setup(t, status(http.StatusOK))
			m := message(b.srv.URL)
			m.Webhook.Headers = map[string]string{"X-Ok": "1", name: "v4lue-override"}
			err := b.sender.Send(context.Background(), m)
			requireOutcome(t, err, true, webhook.ClassReservedHeader)
			require.Contains(t, err.Error(), strconv.Quote(name))
			require.NotContains(t, err.Error(), "v4lue-override")
			require.Zero(t, b.hits.Load())
		})
	}
}

func TestSendInvalid(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		modify func(m *notification.Message, srvURL string)
		class  delivery.Class
	}{
		{"http URL", func(m *notification.Message, u string) { m.Webhook.URL = strings.Replace(u, "https:", "http:", 1) }, webhook.ClassInvalidURL},
		{"relative URL", func(m *notification.Message, _ string) { m.Webhook.URL = "/hook" }, webhook.ClassInvalidURL},
		{"no host", func(m *notification.Message, _ string) { m.Webhook.URL = "https:///hook" }, webhook.ClassInvalidURL},
		{"unparsable URL", func(m *notification.Message, _ string) { m.Webhook.URL = "https://h\x7f/hook?token=SECRET" }, webhook.ClassInvalidURL},
		{"bad port", func(m *notification.Message, _ string) { m.Webhook.URL = "https://h:port/hook?token=SECRET" }, webhook.ClassInvalidURL},
		{"no webhook", func(m *notification.Message, _ string) { m.Webhook = nil }, delivery.ClassInvalidMessage},
		{"no id", func(m *notification.Message, _ string) { m.ID = "" }, delivery.ClassInvalidMessage},
		{"id with newline", func(m *notification.Message, _ string) { m.ID = "a\nb" }, delivery.ClassInvalidMessage},
		{"header name", func(m *notification.Message, _ string) { m.Webhook.Headers = map[string]string{"X Bad": "SECRET"} }, delivery.ClassInvalidMessage},
		{"header value", func(m *notification.Message, _ string) {
			m.Webhook.Headers = map[string]string{"X-Token": "SECRET\r\nX-Injected: 1"}
		}, delivery.ClassInvalidMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			b := setup(t, status(http.StatusOK))
			m := message(b.srv.URL + "/hook")
			tt.modify(m, b.srv.URL+"/hook")
			err := b.sender.Send(context.Background(), m)
			requireOutcome(t, err, true, tt.class)
			require.NotContains(t, err.Error(), "SECRET")
			require.Zero(t, b.hits.Load())
		})
	}
}

// TestSendKeepsURLSecrets: whatever the failure, the error text names the
// endpoint by scheme and host only.
func TestSendKeepsURLSecrets(t *testing.T) {
	t.Parallel()

	const secrets = "user:pa55@"
	tests := []struct {
		name      string
		handler   http.HandlerFunc // nil: no server
		host      func(t *testing.T, srvHost string) string
		timeout   time.Duration
		permanent bool
		class     delivery.Class
	}{
		{name: "5xx", handler: status(http.StatusInternalServerError), class: webhook.ClassHTTP5xx},
		{name: "4xx", handler: status(http.StatusNotFound), class: webhook.ClassHTTP4xx},
		{name: "410", handler: status(http.StatusGone), permanent: true, class: webhook.ClassGone},
		{name: "timeout", handler: hang, timeout: 100 * time.Millisecond, class: webhook.ClassTimeout},
		{name: "refused", host: func(t *testing.T, _ string) string { return closedAddr(t) }, class: webhook.ClassConnection},
		{name: "DNS", host: func(*testing.T, string) string { return "herald-test.example" }, class: webhook.ClassDNS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			var srv *httptest.Server
			host := ""
			if tt.handler != nil {
				srv, _ = newServer(t, tt.handler)
				host = strings.TrimPrefix(srv.URL, "https://")
			}
			if tt.host != nil {
				host = tt.host(t, host)
			}
			s := newSender(t, srv, func(c *webhook.Config) {
				if tt.timeout > 0 {
					c.Timeout = tt.timeout
				}
			})

			err := s.Send(context.Background(), message("https://"+secrets+host+"/path?token=SECRET#frag"))
			requireOutcome(t, err, tt.permanent, tt.class)
			require.Contains(t, err.Error(), "https://"+host)
			requireNoSecrets(t, err, "pa55", "SECRET", "/path", "user:", "frag")
		})
	}
}

func requireNoSecrets(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		require.NotContains(t, err.Error(), s)
	}
}

// closedAddr returns a local address that refuses connections.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestNewSenderDoesNotModifyTLSConfig: the caller's tls.Config is cloned.
func TestNewSenderDoesNotModifyTLSConfig(t *testing.T) {
	t.Parallel()

	srv, _ := newServer(t, status(http.StatusOK))
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	before := append([]string(nil), cfg.NextProtos...)
	s := newSender(t, srv, func(c *webhook.Config) { c.TLSClientConfig = cfg })
	require.NoError(t, s.Send(context.Background(), message(srv.URL)))
	require.Equal(t, before, cfg.NextProtos)
}

// TestSendScrubsEchoedURLFromResponseBody: receivers echo the request in
// error pages; the error text (logged, and the dead letter's reason) must
// not carry the URL's secret path or query, whole or in pieces.
func TestSendScrubsEchoedURLFromResponseBody(t *testing.T) {
	t.Parallel()
	for _, status := range []int{404, 500} {
		b := setup(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			fmt.Fprintf(w, "<pre>Cannot POST %s</pre> path=%s token=%s", r.URL.RequestURI(), r.URL.Path, r.URL.Query().Get("api_key"))
		})
		err := b.sender.Send(context.Background(), message(b.srv.URL+"/hooks/tok_SECRETPATH?api_key=QUERYSECRET"))
		require.Error(t, err)
		for _, secret := range []string{"tok_SECRETPATH", "QUERYSECRET", "/hooks/"} {
			require.NotContains(t, err.Error(), secret, "status %d", status)
		}
		require.Contains(t, err.Error(), "Cannot POST", "the rest of the excerpt stays useful")
	}
}

// TestSendPlainHTTPOnlyWhenAllowed: https only by default; plain http is a
// switch for local testing, and without it no connection is made.
func TestSendPlainHTTPOnlyWhenAllowed(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	base := webhook.Config{Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", AllowCIDRs: loopback}

	strict, err := webhook.NewSender(base)
	require.NoError(t, err)
	err = strict.Send(context.Background(), message(srv.URL+"/hook"))
	permanent, class, _ := delivery.Classify(err)
	require.True(t, permanent)
	require.Equal(t, webhook.ClassInvalidURL, class)
	require.Contains(t, err.Error(), "HERALD_WEBHOOK_ALLOW_HTTP")
	require.Zero(t, hits.Load(), "no request without the switch")

	allowing := base
	allowing.AllowHTTP = true
	lax, err := webhook.NewSender(allowing)
	require.NoError(t, err)
	require.NoError(t, lax.Send(context.Background(), message(srv.URL+"/hook")))
	require.Equal(t, int64(1), hits.Load())
}
