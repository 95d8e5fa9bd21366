package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// notifyBuffer is a buffer that many goroutines write and a test reads,
// signalling each write on wrote.
type notifyBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (n *notifyBuffer) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	select {
	case n.wrote <- struct{}{}:
	default:
	}
	return n.b.Write(p)
}

func (n *notifyBuffer) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.b.String()
}

// listening is a herald listen running in-process.
type listening struct {
	url         string
	out, errOut *notifyBuffer
	cancel      context.CancelFunc
	done        chan int
}

var listenURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/webhook`)

// startListen runs `herald listen --port 0 ARGS` with the environment vars
// and the real clock (signatures' timestamps are checked against it), and
// returns once it printed its URL.
func startListen(t *testing.T, vars map[string]string, args ...string) *listening {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	wrote := make(chan struct{}, 1)
	l := &listening{out: &notifyBuffer{wrote: wrote}, errOut: &notifyBuffer{wrote: wrote}, cancel: cancel, done: make(chan int, 1)}
	e := &env{stdin: strings.NewReader(""), stdout: l.out, stderr: l.errOut, getenv: getenvOf(vars), now: time.Now}
	go func() { l.done <- execute(ctx, e, append([]string{"listen", "--port", "0"}, args...)) }()
	t.Cleanup(func() { l.stop() })
	deadline := time.After(10 * time.Second)
	for {
		if u := listenURL.FindString(l.out.String() + l.errOut.String()); u != "" {
			l.url = u
			return l
		}
		select {
		case code := <-l.done:
			l.done <- code
			t.Fatalf("herald listen exited %d before listening:\n%s%s", code, l.out, l.errOut)
		case <-wrote:
		case <-deadline:
			t.Fatalf("herald listen printed no URL:\n%s%s", l.out, l.errOut)
		}
	}
}

// stop is Ctrl-C: it returns herald listen's exit status.
func (l *listening) stop() int {
	l.cancel()
	code := <-l.done
	l.done <- code
	return code
}

// lineOf returns the printed line (text output) that names id.
func (l *listening) lineOf(t *testing.T, id string) string {
	t.Helper()
	for _, line := range strings.Split(l.out.String(), "\n") {
		if strings.Contains(line, "  "+id+"  ") {
			return line
		}
	}
	t.Fatalf("no line for %s in:\n%s", id, l.out)
	return ""
}

// jsonLines returns every JSON line printed (--json).
func (l *listening) jsonLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.out.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

// listenSender is herald's real webhook sender as herald run
// --local-receivers builds it, signing with the deployment secret secret.
func listenSender(t *testing.T, cfg webhook.Config) *webhook.Sender {
	t.Helper()
	cfg.AllowHTTP, cfg.AllowCIDRs, cfg.Timeout = true, outbound.LoopbackPrefixes, 5*time.Second
	if cfg.Secret == "" && cfg.Secrets == nil {
		cfg.Secret = deploySecretOld
	}
	s, err := webhook.NewSender(cfg)
	require.NoError(t, err)
	return s
}

func hookTo(url, id, eventType, payload string) *notification.Message {
	return &notification.Message{Version: notification.Version, ID: id, Channel: notification.ChannelWebhook,
		Webhook: &notification.Webhook{URL: url, EventType: eventType, Payload: []byte(payload)}}
}

var deploymentVars = map[string]string{"HERALD_WEBHOOK_SECRET": deploySecretOld}

// TestListenVerifiesWhatHeraldSends: herald's webhook sender, signing with
// the deployment secret as herald run does, posts to herald listen, which
// derives the key of its own origin from the same secret: each delivery is
// printed verified, with its id, event type, attempt and body, answered
// 200; a second attempt of one id is attempt 2.
func TestListenVerifiesWhatHeraldSends(t *testing.T) {
	t.Parallel()
	l := startListen(t, deploymentVars)
	banner := l.errOut.String()
	origin, err := webhook.Origin(l.url)
	require.NoError(t, err)
	require.Contains(t, banner, "receiving webhooks at "+l.url)
	require.Contains(t, banner, "the key herald derives for "+origin)
	require.Contains(t, banner, "HERALD_WEBHOOK_SECRET")
	require.Contains(t, banner, "herald run --local-receivers")
	require.NotContains(t, banner, deploySecretOld[len("whsec_"):])
	// The banner's send line is a valid notification to this listener.
	m := regexp.MustCompile(`(?m)^printf '(.*)\\n' "\$\(date \+%s\)" \| (.+) send -$`).FindStringSubmatch(banner)
	require.NotNil(t, m, banner)
	sample, err := notification.Parse([]byte(strings.Replace(m[1], "%s", "1796000000", 1)))
	require.NoError(t, err)
	require.Equal(t, "listen-1796000000", sample.ID)
	require.Equal(t, l.url, sample.Webhook.URL)
	require.Equal(t, commandName(os.Args[0]), m[2])

	s := listenSender(t, webhook.Config{})
	ctx := context.Background()
	require.NoError(t, s.Send(ctx, hookTo(l.url, "evt_listen_1", "invoice.paid", `{"invoice_id":"INV-1"}`)))
	require.NoError(t, s.Send(ctx, hookTo(l.url, "evt_listen_2", "user.created", `{"user":"u-7"}`)))
	require.NoError(t, s.Send(ctx, hookTo(l.url, "evt_listen_1", "invoice.paid", `{"invoice_id":"INV-1"}`)))

	out := l.out.String()
	require.Regexp(t, `(?m)^\d\d:\d\d:\d\d  evt_listen_1  invoice\.paid  attempt 1  verified \(key version 1\)  answered 200\n`+
		`          POST /webhook  \d+ bytes  \{"type":"invoice\.paid","timestamp":"[^"]+","data":\{"invoice_id":"INV-1"\}\}\n`, out)
	require.Regexp(t, `evt_listen_2  user\.created  attempt 1  verified \(key version 1\)  answered 200`, out)
	require.Regexp(t, `evt_listen_1  invoice\.paid  attempt 2  verified \(key version 1\)  answered 200`, out)
	require.Equal(t, exitOK, l.stop())
	require.Contains(t, l.errOut.String(), "herald listen: stopped")
}

// TestListenNotVerified: a request that fails verification is printed NOT
// VERIFIED with the reason, and still answered the chosen status: a wrong
// deployment secret, the shared scope's signature (with the setting that
// explains it), a timestamp past the tolerance, no signature headers, no
// v1 entry, a body changed after signing.
func TestListenNotVerified(t *testing.T) {
	t.Parallel()
	l := startListen(t, deploymentVars)
	ctx := context.Background()

	require.NoError(t, listenSender(t, webhook.Config{Secret: deploySecretNew}).Send(ctx, hookTo(l.url, "evt_wrong_secret", "a.b", `{}`)))
	require.Regexp(t, `attempt 1  NOT VERIFIED: no webhook-signature matches: 1 signature\(s\) checked against 1 secret\(s\) \(the keys herald derives for http://127\.0\.0\.1:\d+ from HERALD_WEBHOOK_SECRET\)  answered 200`,
		l.lineOf(t, "evt_wrong_secret"))

	require.NoError(t, listenSender(t, webhook.Config{SecretScope: webhook.ScopeShared}).Send(ctx, hookTo(l.url, "evt_shared", "a.b", `{}`)))
	require.Contains(t, l.lineOf(t, "evt_shared"), "NOT VERIFIED: no webhook-signature matches")
	require.Contains(t, l.lineOf(t, "evt_shared"), "signed with the signing secret itself, as a sender with HERALD_WEBHOOK_SECRET_SCOPE=shared signs")

	old := listenSender(t, webhook.Config{Now: func() time.Time { return time.Now().Add(-webhook.DefaultTolerance - time.Minute) }})
	require.NoError(t, old.Send(ctx, hookTo(l.url, "evt_old", "a.b", `{}`)))
	require.Regexp(t, `NOT VERIFIED: webhook-timestamp too far from now: 6m\d+s from now, tolerance 5m0s  answered 200`, l.lineOf(t, "evt_old"))

	post := func(id string, header map[string]string, body string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, l.url, strings.NewReader(body))
		require.NoError(t, err)
		if id != "" {
			req.Header.Set(webhook.HeaderID, id)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	require.Equal(t, http.StatusOK, post("evt_no_sig", nil, `{"type":"a.b"}`).StatusCode)
	require.Contains(t, l.lineOf(t, "evt_no_sig"), "NOT VERIFIED: missing Standard Webhooks header: webhook-timestamp, webhook-signature  answered 200")
	require.Equal(t, http.StatusOK, post("evt_bad_ts", map[string]string{webhook.HeaderTimestamp: "yesterday", webhook.HeaderSignature: "v1,abc"}, `{}`).StatusCode)
	require.Contains(t, l.lineOf(t, "evt_bad_ts"), "NOT VERIFIED: webhook-timestamp is not Unix seconds")
	require.Equal(t, http.StatusOK, post("evt_v2", map[string]string{webhook.HeaderTimestamp: now, webhook.HeaderSignature: "v1a,abc v2,def"}, `{}`).StatusCode)
	require.Contains(t, l.lineOf(t, "evt_v2"), "NOT VERIFIED: no webhook-signature matches: webhook-signature has no v1,<base64> entry")

	// Signed by the Standard Webhooks reference library with the right key,
	// then changed.
	key, err := webhook.DeriveSecret(deploySecretOld, l.url)
	require.NoError(t, err)
	ref, err := standardwebhooks.NewWebhook(key)
	require.NoError(t, err)
	at := time.Now()
	sig, err := ref.Sign("evt_ref", at, []byte(`{"type":"a.b"}`))
	require.NoError(t, err)
	ts := strconv.FormatInt(at.Unix(), 10)
	post("evt_ref", map[string]string{webhook.HeaderTimestamp: ts, webhook.HeaderSignature: sig}, `{"type":"a.b"}`)
	require.Contains(t, l.lineOf(t, "evt_ref"), "attempt 1  verified (key version 1)")
	post("evt_ref", map[string]string{webhook.HeaderTimestamp: ts, webhook.HeaderSignature: sig}, `{"type":"a.c"}`)
	require.Contains(t, l.out.String(), "evt_ref  a.c  attempt 2  NOT VERIFIED: no webhook-signature matches")

	// Not a webhook at all: no id, no headers.
	require.Equal(t, http.StatusOK, post("", nil, "hello").StatusCode)
	require.Contains(t, l.out.String(), "-  -  -  NOT VERIFIED: missing Standard Webhooks header: webhook-id, webhook-timestamp, webhook-signature  answered 200")
	require.NotContains(t, l.out.String(), sig[3:], "signatures are not printed")
}

// TestListenStatusMakesHeraldRetry: the status herald listen answers is the
// one herald's sender classifies: --status 503 a retry, --status 410 a
// dead letter, --fail-first 2 two retries and then a delivery.
func TestListenStatusMakesHeraldRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := listenSender(t, webhook.Config{})

	l := startListen(t, deploymentVars, "--status", "503")
	require.Contains(t, l.errOut.String(), "answering 503 to every POST")
	err := s.Send(ctx, hookTo(l.url, "evt_503", "a.b", `{}`))
	permanent, class, _ := delivery.Classify(err)
	require.False(t, permanent)
	require.Equal(t, webhook.ClassHTTP5xx, class)
	require.Contains(t, err.Error(), "herald listen: answered 503 (--status)", "herald's error carries the listener's answer")
	require.Contains(t, l.lineOf(t, "evt_503"), "verified (key version 1)  answered 503")

	l = startListen(t, deploymentVars, "--status", "410")
	permanent, class, _ = delivery.Classify(s.Send(ctx, hookTo(l.url, "evt_410", "a.b", `{}`)))
	require.True(t, permanent)
	require.Equal(t, webhook.ClassGone, class)

	l = startListen(t, deploymentVars, "--fail-first", "2")
	require.Contains(t, l.errOut.String(), "answering 503 to the first 2 attempt(s) of each webhook-id, then 200")
	for attempt := 1; attempt <= 2; attempt++ {
		err := s.Send(ctx, hookTo(l.url, "evt_ff", "a.b", `{}`))
		permanent, class, _ := delivery.Classify(err)
		require.False(t, permanent, "attempt %d", attempt)
		require.Equal(t, webhook.ClassHTTP5xx, class, "attempt %d", attempt)
		require.Contains(t, err.Error(), fmt.Sprintf("--fail-first 2, attempt %d", attempt))
	}
	require.NoError(t, s.Send(ctx, hookTo(l.url, "evt_ff", "a.b", `{}`)), "attempt 3")
	require.Error(t, s.Send(ctx, hookTo(l.url, "evt_ff_other", "a.b", `{}`)), "each webhook-id counts its own attempts")
	out := l.out.String()
	require.Contains(t, out, "evt_ff  a.b  attempt 1  verified (key version 1)  answered 503")
	require.Contains(t, out, "evt_ff  a.b  attempt 2  verified (key version 1)  answered 503")
	require.Contains(t, out, "evt_ff  a.b  attempt 3  verified (key version 1)  answered 200")
	require.Contains(t, out, "evt_ff_other  a.b  attempt 1  verified (key version 1)  answered 503")
}

// TestListenJSONConcurrent: with --json the first line names the URL, and
// each of many deliveries arriving at once is one JSON line, verified,
// attempt 1, with its event type and body.
func TestListenJSONConcurrent(t *testing.T) {
	t.Parallel()
	l := startListen(t, deploymentVars, "--json")
	s := listenSender(t, webhook.Config{})
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Send(context.Background(), hookTo(l.url, fmt.Sprintf("evt_c_%02d", i), "load.test", fmt.Sprintf(`{"i":%d}`, i)))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, i)
	}
	lines := l.jsonLines(t)
	require.Len(t, lines, n+1, l.out.String())
	require.Equal(t, "listening", lines[0]["line"])
	require.Equal(t, l.url, lines[0]["url"])
	seen := map[string]bool{}
	for _, m := range lines[1:] {
		id := m["webhook_id"].(string)
		require.False(t, seen[id], id)
		seen[id] = true
		require.Equal(t, "delivery", m["line"], id)
		require.Equal(t, true, m["verified"], "%s: %v", id, m["reason"])
		require.Equal(t, "key version 1", m["verified_with"], id)
		require.Equal(t, "load.test", m["event_type"], id)
		require.EqualValues(t, 1, m["attempt"], id)
		require.EqualValues(t, http.StatusOK, m["status"], id)
		i, _ := strconv.Atoi(strings.TrimPrefix(id, "evt_c_"))
		require.Contains(t, m["body"], fmt.Sprintf(`"data":{"i":%d}}`, i), id)
		_, err := time.Parse(time.RFC3339Nano, m["time"].(string))
		require.NoError(t, err)
	}
	require.Len(t, seen, n)
	start := time.Now()
	require.Equal(t, exitOK, l.stop(), l.errOut.String())
	require.Less(t, time.Since(start), listenShutdownWait, "Ctrl-C does not wait for connections that never sent a request")
}

// TestListenOddRequests: another method is answered 405 and printed as not
// a webhook; a body over the read limit 413, unverified; a long body is
// verified whole and printed cut; control characters a sender put in the
// event type are printed escaped.
func TestListenOddRequests(t *testing.T) {
	t.Parallel()
	l := startListen(t, deploymentVars)
	resp, err := http.Get(l.url + "?token=secret-in-query")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	require.Equal(t, http.MethodPost, resp.Header.Get("Allow"))
	require.Regexp(t, `(?m)^\d\d:\d\d:\d\d  -  -  -  not a webhook: herald sends POST  answered 405\n          GET /webhook  0 bytes  -$`, l.out.String())
	require.NotContains(t, l.out.String(), "secret-in-query")

	req, err := http.NewRequest(http.MethodPost, l.url+"/big", bytes.NewReader(bytes.Repeat([]byte("x"), listenMaxBody+1)))
	require.NoError(t, err)
	req.Header.Set(webhook.HeaderID, "evt_huge")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Contains(t, l.lineOf(t, "evt_huge"), fmt.Sprintf("attempt 1  NOT VERIFIED: body over %d bytes, not read whole  answered 413", listenMaxBody))

	s := listenSender(t, webhook.Config{})
	// The largest notification herald sends is read whole and verified.
	largest := `{"blob":"` + strings.Repeat("x", notification.MaxMessageBytes-2048) + `"}`
	require.NoError(t, s.Send(context.Background(), hookTo(l.url, "evt_largest", "big.one", largest)))
	require.Contains(t, l.lineOf(t, "evt_largest"), "attempt 1  verified (key version 1)  answered 200")
	long := `{"blob":"` + strings.Repeat("é", 100_000) + `"}`
	require.NoError(t, s.Send(context.Background(), hookTo(l.url, "evt_long", "big.one", long)))
	require.NoError(t, s.Send(context.Background(), hookTo(l.url, "evt_esc", "evil\u001b[2J\u009b.type", `{}`)))
	out := l.out.String()
	require.Contains(t, l.lineOf(t, "evt_long"), "verified (key version 1)  answered 200")
	m := regexp.MustCompile(`POST /webhook  (\d+) bytes  (\{"type":"big\.one","timestamp":"[^"]+","data":\{"blob":"é.*)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	n, _ := strconv.Atoi(m[1])
	require.Greater(t, n, 200_000, "the size is the whole body's")
	require.LessOrEqual(t, len(m[2]), listenExcerptBytes+len("…"), "the printed body is cut")
	require.True(t, strings.HasSuffix(m[2], "é…"), "cut at a character: %q", m[2][len(m[2])-10:])
	require.Contains(t, out, `evt_esc  evil\x1b[2J\u009b.type  attempt 1  verified`)
	require.NotContains(t, out, "\x1b")
}

// TestListenSecretGiven: --secret verifies with the receiver's own secret
// (the line herald secret derive prints for this URL), and a request the
// Standard Webhooks reference library signs with it.
func TestListenSecretGiven(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/webhook"
	derived := heraldWith(t, nil, "secret", "derive", "--secret", deploySecretOld, url)
	require.Equal(t, exitOK, derived.code, "%+v", derived)
	secret := strings.TrimSpace(derived.stdout)
	l := startListen(t, nil, "--port", strconv.Itoa(port), "--secret", secret)
	require.Equal(t, url, l.url)
	require.Contains(t, l.errOut.String(), "verifying with --secret (1 key(s))")
	require.NotContains(t, l.errOut.String(), secret[len("whsec_"):])

	require.NoError(t, listenSender(t, webhook.Config{}).Send(context.Background(), hookTo(url, "evt_given", "a.b", `{}`)))
	require.Contains(t, l.lineOf(t, "evt_given"), "attempt 1  verified (--secret)  answered 200")
	require.NoError(t, listenSender(t, webhook.Config{Secret: deploySecretNew}).Send(context.Background(), hookTo(url, "evt_given_wrong", "a.b", `{}`)))
	require.Contains(t, l.lineOf(t, "evt_given_wrong"), "NOT VERIFIED: no webhook-signature matches: 1 signature(s) checked against 1 secret(s)  answered 200")

	ref, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	at := time.Now()
	body := []byte(`{"type":"ref.signed","timestamp":"2026-12-01T00:00:00Z","data":{}}`)
	sig, err := ref.Sign("evt_ref_given", at, body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(webhook.HeaderID, "evt_ref_given")
	req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(webhook.HeaderSignature, sig)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Contains(t, l.lineOf(t, "evt_ref_given"), "ref.signed  attempt 1  verified (--secret)")
}

// TestListenSharedScope: with HERALD_WEBHOOK_SECRET_SCOPE=shared, as the
// sender has it, the signing secret itself verifies.
func TestListenSharedScope(t *testing.T) {
	t.Parallel()
	l := startListen(t, map[string]string{"HERALD_WEBHOOK_SECRET": deploySecretOld, "HERALD_WEBHOOK_SECRET_SCOPE": "Shared"}) // as the deliver function reads it too
	require.Contains(t, l.errOut.String(), "verifying with the signing secret(s) of HERALD_WEBHOOK_SECRET themselves (HERALD_WEBHOOK_SECRET_SCOPE=shared)")
	require.NoError(t, listenSender(t, webhook.Config{SecretScope: webhook.ScopeShared}).Send(context.Background(), hookTo(l.url, "evt_sh", "a.b", `{}`)))
	require.Contains(t, l.lineOf(t, "evt_sh"), "attempt 1  verified (the signing secret)")
	require.NoError(t, listenSender(t, webhook.Config{}).Send(context.Background(), hookTo(l.url, "evt_derived", "a.b", `{}`)))
	require.Contains(t, l.lineOf(t, "evt_derived"), "NOT VERIFIED: no webhook-signature matches: 1 signature(s) checked against 1 secret(s) (the signing secrets of HERALD_WEBHOOK_SECRET)")
}

// TestListenRotatedOrigin: with a store table, herald listen verifies with
// the key versions of its origin as herald signs them: after a rotation
// without grace, version 2 alone; during a grace period versions 3 and 2,
// and the line says which one verified; without the table it expects
// version 1.
func TestListenRotatedOrigin(t *testing.T) { // t.Setenv: not parallel
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddb.URL())
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	vars := map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_WEBHOOK_SECRET": deploySecretOld}
	port := strconv.Itoa(freePort(t))
	url := "http://127.0.0.1:" + port + "/webhook"
	r := heraldWith(t, vars, "secret", "rotate", "--grace", "0", url)
	require.Equal(t, exitOK, r.code, "%+v", r)
	g := &globals{}
	st, err := openStore(context.Background(), g, getenvOf(vars), func() (aws.Config, error) { return g.awsConfig(context.Background()) }, nil)
	require.NoError(t, err)

	l := startListen(t, vars, "--port", port)
	require.Contains(t, l.errOut.String(), "the origin's key versions in the store table")
	require.NoError(t, listenSender(t, webhook.Config{KeyVersions: st}).Send(context.Background(), hookTo(url, "evt_v2", "a.b", `{}`)))
	require.Contains(t, l.lineOf(t, "evt_v2"), "attempt 1  verified (key version 2)")
	require.Equal(t, exitOK, l.stop())

	r = heraldWith(t, vars, "secret", "rotate", "--grace", "1h", url)
	require.Equal(t, exitOK, r.code, "%+v", r)
	l = startListen(t, vars, "--port", port)
	require.NoError(t, listenSender(t, webhook.Config{KeyVersions: st}).Send(context.Background(), hookTo(url, "evt_v3", "a.b", `{}`)))
	require.Contains(t, l.lineOf(t, "evt_v3"), "attempt 1  verified (key version 3)")
	v2, err := webhook.DeriveSecretVersion(deploySecretOld, url, 2)
	require.NoError(t, err)
	onlyV2 := listenSender(t, webhook.Config{Secret: v2, SecretScope: webhook.ScopeShared}) // signs with version 2's key alone
	require.NoError(t, onlyV2.Send(context.Background(), hookTo(url, "evt_only_v2", "a.b", `{}`)))
	require.Contains(t, l.lineOf(t, "evt_only_v2"), "attempt 1  verified (key version 2)")
	require.Equal(t, exitOK, l.stop())

	l = startListen(t, map[string]string{"HERALD_WEBHOOK_SECRET": deploySecretOld}, "--port", port)
	require.Contains(t, l.errOut.String(), "key version 1 (no store table: HERALD_STORE_TABLE unset)")
	require.NoError(t, listenSender(t, webhook.Config{KeyVersions: st}).Send(context.Background(), hookTo(url, "evt_v3_unknown", "a.b", `{}`)))
	require.Contains(t, l.lineOf(t, "evt_v3_unknown"), "NOT VERIFIED: no webhook-signature matches")
}

// freePort returns a port no one listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestListenStartFailures: a port in use, a missing key and flags out of
// range say what to do, with exit 1 (the port) or 2 (usage), before
// anything listens.
func TestListenStartFailures(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { busy.Close() })
	port := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	r := heraldWith(t, deploymentVars, "listen", "--port", port)
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Equal(t, "herald: 127.0.0.1:"+port+" is in use (another herald listen, or another server): choose another port with --port N, or --port 0 for a free one\n", r.stderr)

	for _, tc := range []struct {
		vars map[string]string
		args []string
		want string
	}{
		{nil, nil, "no key to verify with: give --secret whsec_… (the receiver's), or the deployment's signing secret: source the local stack's env file"},
		{nil, []string{"--secret", "nope"}, "--secret: webhook secret: must start with whsec_"},
		{nil, []string{"--secret", " "}, "--secret is empty"},
		{map[string]string{"HERALD_WEBHOOK_SECRET": "whsec_c2hvcnQ="}, nil, "secrets from HERALD_WEBHOOK_SECRET: secret 1 of 1: webhook secret: key is 5 bytes"},
		{deploymentVars, []string{"--host", "0.0.0.0"}, `--host "0.0.0.0": want a loopback address`},
		{deploymentVars, []string{"--host", "localhost"}, `--host "localhost": want a loopback address`},
		{deploymentVars, []string{"--port", "65536"}, "--port 65536"},
		{deploymentVars, []string{"--status", "199"}, "--status 199: want 200 to 599"},
		{deploymentVars, []string{"--status", "600"}, "--status 600"},
		{deploymentVars, []string{"--fail-status", "100"}, "--fail-status 100"},
		{deploymentVars, []string{"--fail-first", "-1"}, "--fail-first -1"},
		{deploymentVars, []string{"--tolerance", "-1s"}, "--tolerance -1s"},
		{deploymentVars, []string{"--url", "ftp://x"}, "--url: webhook URL"},
		{deploymentVars, []string{"extra"}, "takes no arguments"},
	} {
		r := heraldWith(t, tc.vars, append([]string{"listen", "--port", "0"}, tc.args...)...)
		want := exitUsage
		if strings.HasPrefix(tc.want, "secrets from") {
			want = exitFailed
		}
		require.Equal(t, want, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.want, tc.args)
		require.Empty(t, r.stdout, tc.args)
	}
}

// TestListenHelp: herald listen is listed and has --help.
func TestListenHelp(t *testing.T) {
	t.Parallel()
	r := herald(t, "", "--help")
	require.Regexp(t, `(?m)^  listen\s+Receive webhooks on this machine`, r.stdout)
	r = herald(t, "", "listen", "--help")
	require.Equal(t, exitOK, r.code, "%+v", r)
	for _, want := range []string{"Usage:", "--port int", "(default 8778)", "--secret", "--status", "--fail-first", "--json", "HERALD_BACKOFF_BASE_SECONDS=5"} {
		require.Contains(t, r.stdout, want)
	}
}

// TestCommandName: the banner's lines run the herald that printed them.
func TestCommandName(t *testing.T) {
	t.Parallel()
	for arg0, want := range map[string]string{
		"herald":                               "herald",
		".local/bin/herald":                    ".local/bin/herald",
		"/usr/local/bin/herald":                "/usr/local/bin/herald",
		"/tmp/go-build1234567/b001/exe/herald": "go run ./cmd/herald",
		"":                                     "herald",
	} {
		require.Equal(t, want, commandName(arg0), arg0)
	}
}

// TestReadmeListenLoop: the README's "Watch webhooks arrive" sends the line
// herald listen prints at start (at its default port, run as
// .local/bin/herald), and shows a delivery as herald listen prints it.
func TestReadmeListenLoop(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "### Watch webhooks arrive\n")
	require.True(t, ok)
	require.Contains(t, section, ".local/bin/herald listen ")
	require.Contains(t, section, "make run ARGS=--local-receivers")

	url := "http://127.0.0.1:" + strconv.Itoa(DefaultListenPort) + listenPath
	origin, err := webhook.Origin(url)
	require.NoError(t, err)
	var banner, printed bytes.Buffer
	l := &listener{keys: &listenKeys{deployment: []string{deploySecretOld}, source: "HERALD_WEBHOOK_SECRET_ARN"}, flags: listenFlags{status: 200}, out: &printed}
	require.NoError(t, l.banner(&banner, url, origin, ".local/bin/herald"))
	send := regexp.MustCompile(`(?m)^printf .*$`).FindString(banner.String())
	require.NotEmpty(t, send, banner.String())
	require.Contains(t, section, "\n"+send+"\n", "the README sends what herald listen prints")

	_, sample, ok := strings.Cut(section, "then the start of the body:\n\n```\n")
	require.True(t, ok)
	sample, _, _ = strings.Cut(sample, "```")
	at, err := time.Parse(time.TimeOnly, sample[:8])
	require.NoError(t, err)
	body := `{"type":"listen.test","timestamp":"2026-12-04T23:52:14.495Z","data":{"hello":"world"}}`
	l.print(listenLine{Line: "delivery", Time: time.Date(2026, 12, 4, at.Hour(), at.Minute(), at.Second(), 0, time.Local), Method: "POST", Path: listenPath,
		WebhookID: "listen-1796428334", EventType: "listen.test", Attempt: 1, Verified: true, VerifiedBy: "key version 1", Status: 200,
		BodyBytes: len(body), Body: excerpt([]byte(body))})
	require.Equal(t, sample, printed.String())
}

// TestListenURLAndTolerance: behind a tunnel herald signs for the public
// URL, not the listener's: --url derives the key of that origin, whatever
// the Host; --tolerance widens the timestamp window.
func TestListenURLAndTolerance(t *testing.T) {
	t.Parallel()
	const public = "https://hooks.example.com/tunnel"
	l := startListen(t, deploymentVars, "--url", public, "--tolerance", "20m")
	require.Contains(t, l.errOut.String(), "the key herald derives for https://hooks.example.com (herald secret derive)")
	key, err := webhook.DeriveSecret(deploySecretOld, public)
	require.NoError(t, err)
	post := func(secret, id string, at time.Time) {
		ref, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		body := []byte(`{"type":"tunnel.test","timestamp":"2026-12-01T00:00:00Z","data":{}}`)
		sig, err := ref.Sign(id, at, body)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, l.url, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set(webhook.HeaderID, id)
		req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
		req.Header.Set(webhook.HeaderSignature, sig)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	post(key, "evt_tunnel", time.Now())
	require.Contains(t, l.lineOf(t, "evt_tunnel"), "attempt 1  verified (key version 1)")
	post(key, "evt_tunnel_old", time.Now().Add(-15*time.Minute))
	require.Contains(t, l.lineOf(t, "evt_tunnel_old"), "attempt 1  verified (key version 1)", "15 minutes is within --tolerance 20m")
	post(key, "evt_tunnel_older", time.Now().Add(-25*time.Minute))
	require.Contains(t, l.lineOf(t, "evt_tunnel_older"), "NOT VERIFIED: webhook-timestamp too far from now")
	own, err := webhook.DeriveSecret(deploySecretOld, l.url)
	require.NoError(t, err)
	post(own, "evt_own_origin", time.Now())
	require.Contains(t, l.lineOf(t, "evt_own_origin"), "NOT VERIFIED: no webhook-signature matches: 1 signature(s) checked against 1 secret(s) (the keys herald derives for https://hooks.example.com from HERALD_WEBHOOK_SECRET)")
}

// TestListenKeysReadAgainAfterTTL: an origin's key versions are read from
// the store once per webhook.KeyVersionsCacheTTL, as a deliver function
// reads them: a rotation is seen after that time, not before. The clock
// here only ages the cache (no signature is checked).
func TestListenKeysReadAgainAfterTTL(t *testing.T) {
	t.Parallel()
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: "herald-store"})
	require.NoError(t, err)
	base := time.Now()
	now := base
	k := &listenKeys{deployment: []string{deploySecretOld}, source: "HERALD_WEBHOOK_SECRET", store: st, now: func() time.Time { return now }, cache: map[string]cachedKeys{}}
	const origin = "http://127.0.0.1:8778"
	labels := func() []string {
		sets, err := k.forOrigin(context.Background(), origin)
		require.NoError(t, err)
		var out []string
		for _, s := range sets {
			out = append(out, s.label)
		}
		return out
	}
	require.Equal(t, []string{"key version 1"}, labels())
	_, err = st.Rotate(context.Background(), origin, 0)
	require.NoError(t, err)
	now = base.Add(webhook.KeyVersionsCacheTTL - time.Second)
	require.Equal(t, []string{"key version 1"}, labels(), "cached")
	now = base.Add(webhook.KeyVersionsCacheTTL)
	require.Equal(t, []string{"key version 2"}, labels(), "read again")
	v2, err := webhook.DeriveSecretVersion(deploySecretOld, origin, 2)
	require.NoError(t, err)
	key, _ := webhook.DecodeSecret(v2)
	sets, err := k.forOrigin(context.Background(), origin)
	require.NoError(t, err)
	require.Equal(t, [][]byte{key}, sets[0].keys)
}

// TestListenCtrlCFinishesRequestInFlight: a request whose handler is
// reading its body when Ctrl-C comes (the server asked for the body with
// 100 Continue) is still read, verified, printed and answered; then herald
// listen exits 0.
func TestListenCtrlCFinishesRequestInFlight(t *testing.T) {
	t.Parallel()
	l := startListen(t, deploymentVars)
	host := strings.TrimSuffix(strings.TrimPrefix(l.url, "http://"), listenPath)
	key, err := webhook.DeriveSecret(deploySecretOld, l.url)
	require.NoError(t, err)
	ref, err := standardwebhooks.NewWebhook(key)
	require.NoError(t, err)
	body := []byte(`{"type":"late.one","timestamp":"2026-12-01T00:00:00Z","data":{}}`)
	at := time.Now()
	sig, err := ref.Sign("evt_inflight", at, body)
	require.NoError(t, err)

	conn, err := net.Dial("tcp", host)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n%s: evt_inflight\r\n%s: %d\r\n%s: %s\r\n\r\n",
		listenPath, host, len(body), webhook.HeaderID, webhook.HeaderTimestamp, at.Unix(), webhook.HeaderSignature, sig)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	cont, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusContinue, cont.StatusCode, "the handler reads the body")

	l.cancel() // Ctrl-C while the request is in flight
	_, err = conn.Write(body)
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, exitOK, l.stop(), l.errOut.String())
	require.Contains(t, l.lineOf(t, "evt_inflight"), "late.one  attempt 1  verified (key version 1)  answered 200")
	require.Contains(t, l.errOut.String(), "herald listen: stopped")
}
