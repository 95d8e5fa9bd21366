package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// herald listen's defaults and bounds.
const (
	// DefaultListenPort is the port herald listen takes without --port.
	DefaultListenPort = 8778
	// listenPath is the path of the URL herald listen prints; it answers
	// on every path.
	listenPath = "/webhook"
	// listenMaxBody is the longest body read whole (and so verified): twice
	// the largest SQS message, above any webhook herald sends (a
	// notification of at most notification.MaxMessageBytes in an envelope).
	listenMaxBody = 2 * notification.SQSMaxMessageBytes
	// listenExcerptBytes is how much of a body is printed.
	listenExcerptBytes = 300
	// listenMaxTracked bounds the webhook-ids whose attempts are counted:
	// beyond it, counting starts afresh.
	listenMaxTracked = 10_000
	// listenShutdownWait is how long Ctrl-C waits for requests in flight.
	listenShutdownWait = 5 * time.Second
)

// listenFlags are herald listen's flags.
type listenFlags struct {
	host       string
	port       int
	url        string
	secrets    []string
	status     int
	failFirst  int
	failStatus int
	tolerance  time.Duration
}

func newListenCmd(e *env, g *globals) *cobra.Command {
	f := listenFlags{}
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Receive webhooks on this machine: verify, print and answer each one",
		Long: `Start a webhook receiver on this machine (http://127.0.0.1:` + strconv.Itoa(DefaultListenPort) + listenPath + `; any path
answers) that checks each request's Standard Webhooks signature (webhook-id,
webhook-timestamp within --tolerance, webhook-signature: v1 HMAC-SHA256, any of
several space-separated entries), prints it and answers it.

Keys: --secret whsec_… (the receiver's own, repeatable), else the key herald
derives for the origin the request was sent to (its Host, or --url's origin:
herald secret derive), at the origin's key versions in the store table
(HERALD_STORE_TABLE or --stack's), from the deployment's signing secrets:
--stack's, else HERALD_WEBHOOK_SECRET, else HERALD_WEBHOOK_SECRET_ARN (the local
stack's env file sets it: Secrets Manager herald/webhook-signing). With
HERALD_WEBHOOK_SECRET_SCOPE=shared, the signing secrets themselves.

Prints one line per request: time, webhook-id, event type (the body's "type"),
attempt, "verified" or "NOT VERIFIED: reason", the status answered; and the
method, path, size and first ` + strconv.Itoa(listenExcerptBytes) + ` bytes of the body. herald sends no attempt
number: the attempt is how many requests with this webhook-id this listener
has seen (the id is the same on every attempt). --json prints one JSON object
per line on standard output (the start's text still goes to standard error):
first {"line":"listening","url":…}, then per request {"line":
"delivery" or "request", "time", "method", "path", "webhook_id", "event_type",
"attempt", "verified", "verified_with", "reason", "status", "body_bytes",
"body"}.

Every POST is answered --status (default 200), verified or not: this is a
tool to watch deliveries, as stripe listen accepts every event it shows. A NOT
VERIFIED line says why; a real receiver answers such a request 4xx instead.
--status 503, or --fail-first N (the first N attempts of each webhook-id get
--fail-status), shows herald retrying; its first retry waits
HERALD_BACKOFF_BASE_SECONDS (docs/configuration.md), so start herald run with
HERALD_BACKOFF_BASE_SECONDS=5 to watch it. Other methods get 405, bodies over
` + strconv.Itoa(listenMaxBody>>20) + ` MiB 413.

At start it prints the URL, the herald run line that lets webhooks reach it
and a herald send line that sends it one. Ctrl-C stops it (requests in
flight are finished).`,
		Example: `  herald listen                      # terminal 2, with the local stack's env file sourced
  herald listen --port 0 --json      # a free port; the first line names it
  herald listen --status 503         # watch herald retry
  herald listen --fail-first 2       # the first two attempts of each webhook fail, the third succeeds
  herald listen --secret whsec_…     # the receiver's own secret (herald secret derive URL)`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.check(); err != nil {
				return err
			}
			return runListen(cmd.Context(), e, g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.host, "host", "127.0.0.1", "loopback address to listen on (127.0.0.1, ::1)")
	fl.IntVar(&f.port, "port", DefaultListenPort, "port to listen on (0: a free one)")
	fl.StringVar(&f.url, "url", "", "the URL herald sends to, when not this listener's own (a tunnel): keys are derived for its origin")
	fl.StringArrayVar(&f.secrets, "secret", nil, "the receiver's signing secret whsec_… (repeatable, or space-separated); default: derived as herald does")
	fl.IntVar(&f.status, "status", http.StatusOK, "status to answer every POST (200–599)")
	fl.IntVar(&f.failFirst, "fail-first", 0, "answer the first N attempts of each webhook-id with --fail-status")
	fl.IntVar(&f.failStatus, "fail-status", http.StatusServiceUnavailable, "status of the attempts --fail-first fails (200–599)")
	fl.DurationVar(&f.tolerance, "tolerance", webhook.DefaultTolerance, "how far webhook-timestamp may be from now")
	return cmd
}

// check returns a usage error naming the first flag out of its range.
func (f *listenFlags) check() error {
	addr, err := netip.ParseAddr(f.host)
	switch {
	case err != nil || !addr.IsLoopback():
		return usagef("--host %q: want a loopback address (127.0.0.1, ::1): herald run --local-receivers reaches only those", f.host)
	case f.port < 0 || f.port > 65535:
		return usagef("--port %d: want 0 (a free port) to 65535", f.port)
	case f.status < 200 || f.status > 599:
		return usagef("--status %d: want 200 to 599", f.status)
	case f.failStatus < 200 || f.failStatus > 599:
		return usagef("--fail-status %d: want 200 to 599", f.failStatus)
	case f.failFirst < 0:
		return usagef("--fail-first %d: want 0 or more", f.failFirst)
	case f.tolerance < 0:
		return usagef("--tolerance %s: want 0 or more", f.tolerance)
	}
	if f.url != "" {
		if _, err := webhook.Origin(f.url); err != nil {
			return usagef("--url: %v", err)
		}
	}
	return nil
}

func runListen(ctx context.Context, e *env, g *globals, f listenFlags) error {
	keys, err := newListenKeys(ctx, e, g, f)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s is in use (another herald listen, or another server): choose another port with --port N, or --port 0 for a free one",
				net.JoinHostPort(f.host, strconv.Itoa(f.port)))
		}
		return fmt.Errorf("listen: %w", err)
	}
	ln = &onceCloseListener{Listener: ln}
	defer ln.Close()
	url := "http://" + ln.Addr().String() + listenPath
	own, _ := webhook.Origin(url)
	if f.url != "" {
		own, _ = webhook.Origin(f.url)
	}
	// The keys of the listener's own origin are read now: a secret or a
	// store that fails, fails here rather than on every request.
	if _, err := keys.forOrigin(ctx, own); err != nil {
		return err
	}
	l := &listener{keys: keys, flags: f, now: e.now, out: e.stdout, json: g.json, attempts: map[string]int{}}
	if err := l.banner(e.stderr, url, own, commandName(os.Args[0])); err != nil {
		return err
	}
	var conns newConns
	srv := &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second, ConnState: conns.track}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", url, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenShutdownWait)
	defer cancel()
	ln.Close() // no new connection, then none left that never sent a request
	conns.closeAll()
	err = srv.Shutdown(shutdown)
	fmt.Fprintln(e.stderr, "herald listen: stopped")
	if err != nil {
		return fmt.Errorf("stop: requests still in flight after %s: %w", listenShutdownWait, err)
	}
	return nil
}

// newConns are the connections that have sent no request yet. Shutdown
// waits up to 5 s for such a connection before it counts as idle, and a
// client that opened one for a request it then sent on another never uses
// it: Ctrl-C closes them at once.
type newConns struct {
	mu    sync.Mutex
	conns map[net.Conn]bool
}

func (c *newConns) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if state != http.StateNew {
		delete(c.conns, conn)
		return
	}
	if c.conns == nil {
		c.conns = map[net.Conn]bool{}
	}
	c.conns[conn] = true
}

// closeAll closes the connections that have sent no request yet.
func (c *newConns) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn := range c.conns {
		conn.Close()
	}
}

// onceCloseListener is a net.Listener whose Close closes it once and then
// returns nil, so that herald listen can stop accepting before
// http.Server.Shutdown closes it again.
type onceCloseListener struct {
	net.Listener
	once sync.Once
}

func (l *onceCloseListener) Close() error {
	l.once.Do(func() { _ = l.Listener.Close() })
	return nil
}

// listener is herald listen's handler: it verifies, prints and answers
// each request. It is safe for concurrent use.
type listener struct {
	keys  *listenKeys
	flags listenFlags
	now   func() time.Time
	json  bool

	outMu sync.Mutex
	out   io.Writer

	mu       sync.Mutex
	attempts map[string]int // requests seen per webhook-id
}

// listenLine is one request as printed.
type listenLine struct {
	Line       string    `json:"line"` // "delivery" (a POST) or "request" (another method)
	Time       time.Time `json:"time"`
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	WebhookID  string    `json:"webhook_id,omitempty"`
	EventType  string    `json:"event_type,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
	Verified   bool      `json:"verified"`
	VerifiedBy string    `json:"verified_with,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Status     int       `json:"status"`
	BodyBytes  int       `json:"body_bytes"`
	Body       string    `json:"body"`
}

func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := l.now()
	line := listenLine{Line: "request", Time: now, Method: r.Method, Path: r.URL.Path}
	if r.Method != http.MethodPost {
		line.Reason, line.Status = "not a webhook: herald sends POST", http.StatusMethodNotAllowed
		l.print(line)
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "herald listen: webhooks are POSTed here", line.Status)
		return
	}
	line.Line = "delivery"
	line.WebhookID = r.Header.Get(webhook.HeaderID)
	if line.WebhookID != "" {
		line.Attempt = l.attempt(line.WebhookID)
	}
	line.Status = l.flags.status
	note := "--status"
	if line.Attempt > 0 && line.Attempt <= l.flags.failFirst {
		line.Status, note = l.flags.failStatus, fmt.Sprintf("--fail-first %d, attempt %d", l.flags.failFirst, line.Attempt)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, listenMaxBody))
	line.BodyBytes, line.Body = len(body), excerpt(body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		line.Reason, line.Status, note = fmt.Sprintf("body over %d bytes, not read whole", listenMaxBody), http.StatusRequestEntityTooLarge, "too large"
	case err != nil:
		line.Reason, line.Status, note = "body not read: "+err.Error(), http.StatusBadRequest, "body not read"
	default:
		line.EventType = eventType(body)
		line.VerifiedBy, err = l.keys.verify(r, body, now, l.flags.tolerance)
		line.Verified = err == nil
		if err != nil {
			line.Reason = err.Error()
		}
	}
	l.print(line)
	if line.Status/100 == 2 {
		w.WriteHeader(line.Status)
		return
	}
	http.Error(w, fmt.Sprintf("herald listen: answered %d (%s)", line.Status, note), line.Status)
}

// attempt counts one more request with webhook-id id and returns the count.
func (l *listener) attempt(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.attempts[id]; !ok && len(l.attempts) >= listenMaxTracked {
		clear(l.attempts)
	}
	l.attempts[id]++
	return l.attempts[id]
}

// print writes one request's line: JSON, or two lines of text.
func (l *listener) print(line listenLine) {
	l.outMu.Lock()
	defer l.outMu.Unlock()
	if l.json {
		b, _ := json.Marshal(line) // strings and numbers always marshal
		l.out.Write(append(jsonControlsEscaped(b), '\n'))
		return
	}
	verdict := "verified"
	switch {
	case line.Line == "request":
		verdict = line.Reason
	case !line.Verified:
		verdict = "NOT VERIFIED: " + line.Reason
	case line.VerifiedBy != "":
		verdict += " (" + line.VerifiedBy + ")"
	}
	attempt := "-"
	if line.Attempt > 0 {
		attempt = "attempt " + strconv.Itoa(line.Attempt)
	}
	fmt.Fprintf(l.out, "%s  %s  %s  %s  %s  answered %d\n          %s %s  %d bytes  %s\n",
		line.Time.Local().Format(time.TimeOnly), cell(line.WebhookID), cell(line.EventType), attempt, cellReplacer.Replace(printable(verdict)),
		line.Status, cell(line.Method), cell(line.Path), line.BodyBytes, cell(line.Body))
}

// banner prints where the listener is and how to reach it to stderr and,
// with --json, its listening line to stdout.
// self is how to run herald (commandName).
func (l *listener) banner(stderr io.Writer, url, origin, self string) error {
	if l.json {
		b, _ := json.Marshal(struct {
			Line      string `json:"line"`
			URL       string `json:"url"`
			Origin    string `json:"origin"`
			Verifying string `json:"verifying_with"`
		}{"listening", url, origin, l.keys.describe(origin)})
		l.outMu.Lock()
		_, err := l.out.Write(append(jsonControlsEscaped(b), '\n'))
		l.outMu.Unlock()
		if err != nil {
			return err
		}
	}
	answer := fmt.Sprintf("%d to every POST, verified or not", l.flags.status)
	if l.flags.failFirst > 0 {
		answer = fmt.Sprintf("%d to the first %d attempt(s) of each webhook-id, then %d, verified or not", l.flags.failStatus, l.flags.failFirst, l.flags.status)
	}
	sample := fmt.Sprintf(`{"version":%d,"id":"listen-%%s","channel":"webhook","webhook":{"url":"%s","event_type":"listen.test","payload":{"hello":"world"}}}`,
		notification.Version, url)
	_, err := fmt.Fprintf(stderr, `herald listen: receiving webhooks at %s
  verifying with %s
  answering %s (NOT VERIFIED says why)
  herald delivers here when run with: make run ARGS=--local-receivers   (or: %s run --local-receivers)
  send one (environment of the local stack: set -a; . .local/herald.env; set +a):
printf '%s\n' "$(date +%%s)" | %s send -
  Ctrl-C to stop
`, url, l.keys.describe(origin), answer, self, sample, self)
	return err
}

// commandName is how to run this herald again from the same directory, for
// the lines the banner prints: as typed (herald, .local/bin/herald), or "go
// run ./cmd/herald" for a binary go run built in its temporary directory.
func commandName(arg0 string) string {
	switch {
	case arg0 == "":
		return "herald"
	case strings.Contains(filepath.ToSlash(arg0), "/go-build"):
		return "go run ./cmd/herald"
	}
	return arg0
}

// excerpt is the first listenExcerptBytes of body, cut at a character.
func excerpt(body []byte) string {
	if len(body) <= listenExcerptBytes {
		return string(body)
	}
	n := listenExcerptBytes
	for n > 0 && !utf8.RuneStart(body[n]) {
		n--
	}
	return string(body[:n]) + "…"
}

// eventType is the "type" of a Standard Webhooks body ("Payload
// structure"), or "" when the body has none.
func eventType(body []byte) string {
	var env struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &env) != nil {
		return ""
	}
	return env.Type
}
