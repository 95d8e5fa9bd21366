//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/deadletter"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/redrive"
)

// The herald command is built once and run as users run it: a process with
// the environment, arguments and standard streams of each case.
var (
	heraldOnce sync.Once
	heraldBin  string
	heraldErr  error
)

func heraldBinary(t *testing.T) string {
	t.Helper()
	heraldOnce.Do(func() {
		dir := filepath.Join(repoRoot, ".local", "test-bin")
		if heraldErr = os.MkdirAll(dir, 0o755); heraldErr != nil {
			return
		}
		heraldBin = filepath.Join(dir, "herald")
		cmd := exec.Command("go", "build", "-o", heraldBin, "./cmd/herald")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			heraldErr = fmt.Errorf("go build ./cmd/herald: %v: %s", err, out)
		}
	})
	require.NoError(t, heraldErr)
	return heraldBin
}

// cliEnv is one test's queue pair and the environment the command runs in.
type cliEnv struct {
	t      *testing.T
	ctx    context.Context
	sqs    *sqs.Client
	queues localenv.Queues
	vars   map[string]string
}

func setupCLI(t *testing.T, maxReceive int) *cliEnv {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Fatal("AWS_ENDPOINT_URL is not set: run the integration tests with `make test`, which starts the local stack")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	c := &cliEnv{t: t, ctx: ctx, sqs: sqs.NewFromConfig(awsCfg)}
	c.queues, err = localenv.CreateQueues(ctx, c.sqs, "cli-"+strings.ToLower(sanitize(t.Name()))+"-"+randHex(4), maxReceive, 30*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.queues.Delete(context.Background(), c.sqs) })
	c.vars = map[string]string{
		"HERALD_QUEUE_URL":            c.queues.URL,
		"HERALD_DLQ_URL":              c.queues.DLQURL,
		"HERALD_MAX_RECEIVE_COUNT":    strconv.Itoa(maxReceive),
		"HERALD_WEBHOOK_SECRET":       testSecret,
		"HERALD_WEBHOOK_ALLOW_HTTP":   "true",
		"HERALD_WEBHOOK_ALLOW_CIDRS":  "127.0.0.1/32",
		"HERALD_BACKOFF_BASE_SECONDS": "1",
		"HERALD_BACKOFF_CAP_SECONDS":  "2",
		"HERALD_EMAIL_DEFAULT_FROM":   "noreply@example.com",
	}
	return c
}

// command prepares `herald args...` with the test's environment: the
// process's own AWS_* variables (the local stack's), HERALD_* only from vars.
func (c *cliEnv) command(args ...string) *exec.Cmd {
	cmd := exec.Command(heraldBinary(c.t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range c.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

type cliResult struct {
	code           int
	stdout, stderr string
}

// herald runs the command to its end.
func (c *cliEnv) herald(stdin string, args ...string) cliResult {
	c.t.Helper()
	cmd := c.command(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(c.t, err)
	}
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

func (c *cliEnv) counts(queueURL string) deadletter.Counts {
	c.t.Helper()
	n, err := deadletter.Count(c.ctx, c.sqs, queueURL)
	require.NoError(c.t, err)
	return n
}

// lockedBuffer collects a running command's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hookReceiver is a plain-HTTP webhook receiver on 127.0.0.1 that answers
// 410 Gone until fixed, then 200.
type hookReceiver struct {
	srv   *httptest.Server
	fixed atomic.Bool
	ok    atomic.Int32
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if !h.fixed.Load() {
			w.WriteHeader(http.StatusGone)
			return
		}
		h.ok.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "%s: not within %s", what, timeout)
		time.Sleep(200 * time.Millisecond)
	}
}

// From a notification of one's own through `herald run` to the dead-letter
// queue, read there without consuming, redriven by id after the fix, and
// delivered.
func TestCLIRunSendDeadLetterRedriveDelivered(t *testing.T) {
	c := setupCLI(t, 3)
	hook := newHookReceiver(t)
	id := "cli-" + randHex(6)
	file := filepath.Join(t.TempDir(), "n.json")
	require.NoError(t, os.WriteFile(file, fmt.Appendf(nil,
		`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":"%s/hooks/billing?token=s3cr3t","event_type":"invoice.paid","payload":{"n":1}}}`, id, hook.srv.URL), 0o600))

	// The receiver is on this machine: the one switch allows it (no HERALD_WEBHOOK_ALLOW_*).
	delete(c.vars, "HERALD_WEBHOOK_ALLOW_HTTP")
	delete(c.vars, "HERALD_WEBHOOK_ALLOW_CIDRS")
	run := c.command("run", "--wait", "1s", "--local-receivers")
	var runOut, runErr lockedBuffer
	run.Stdout, run.Stderr = &runOut, &runErr
	require.NoError(t, run.Start())
	runDone := make(chan error, 1)
	go func() { runDone <- run.Wait() }()
	t.Cleanup(func() {
		if run.ProcessState == nil {
			_ = run.Process.Kill()
		}
		if t.Failed() {
			t.Logf("herald run stdout:\n%s\nstderr:\n%s", runOut.String(), runErr.String())
		}
	})

	waitFor(t, 30*time.Second, "herald run started", func() bool { return strings.Contains(runErr.String(), "Ctrl-C to stop") })
	require.Contains(t, runErr.String(), "webhooks: https and plain http;", "herald run says what it allows")
	require.Contains(t, runErr.String(), "receivers on this machine allowed")
	sent := c.herald("", "send", file)
	require.Equal(t, 0, sent.code, "send: %+v", sent)
	require.Contains(t, sent.stdout, id)

	// 410 Gone is permanent: herald dead-letters it with its reason.
	waitFor(t, 45*time.Second, "dead-lettered", func() bool { return strings.Contains(runOut.String(), "dead_lettered") })
	require.Regexp(t, id+`\s+webhook\s+dead_lettered\s+receive 1\s+webhook_gone`, runOut.String())
	waitFor(t, 10*time.Second, "dead letter visible", func() bool { return c.counts(c.queues.DLQURL).Visible == 1 })

	before := c.counts(c.queues.DLQURL)
	ls := c.herald("", "dlq", "ls", "--json")
	require.Equal(t, 0, ls.code, "dlq ls: %+v", ls)
	var letters []deadletter.Letter
	require.NoError(t, json.Unmarshal([]byte(ls.stdout), &letters), ls.stdout)
	require.Len(t, letters, 1)
	require.Equal(t, id, letters[0].NotificationID)
	require.Equal(t, "webhook_gone", letters[0].Class)
	require.Equal(t, "127.0.0.1", letters[0].Destination, "the host only: no port, path or query")
	require.Equal(t, deadletter.MovedByHerald, letters[0].MovedBy)
	require.Empty(t, letters[0].Body, "bodies only in dlq show")
	require.NotContains(t, ls.stdout, "s3cr3t")
	require.Equal(t, before, c.counts(c.queues.DLQURL), "dlq ls consumes nothing and leaves nothing hidden")

	table := c.herald("", "dlq", "ls", "--class", "webhook_gone")
	require.Equal(t, 0, table.code)
	require.Regexp(t, `(?m)^ID\s+CHANNEL\s+DESTINATION\s+CLASS`, table.stdout)
	require.Regexp(t, id+`\s+webhook\s+127\.0\.0\.1\s+webhook_gone\s+1\s`, table.stdout)
	require.NotContains(t, table.stdout, "s3cr3t")
	none := c.herald("", "dlq", "ls", "--class", "email_rejected")
	require.NotContains(t, none.stdout, id)

	show := c.herald("", "dlq", "show", id)
	require.Equal(t, 0, show.code, "dlq show: %+v", show)
	require.Contains(t, show.stdout, "error class:     webhook_gone")
	require.Contains(t, show.stdout, `"event_type": "invoice.paid"`)
	require.Equal(t, 1, c.herald("", "dlq", "show", "no-such-id").code)

	dry := c.herald("", "dlq", "redrive", "--id", id, "--dry-run")
	require.Equal(t, 0, dry.code, "dry run: %+v", dry)
	require.Contains(t, dry.stdout, "would_send")
	require.Equal(t, before, c.counts(c.queues.DLQURL), "a dry run changes nothing")

	// The receiver is fixed; the dead letter goes back and is delivered.
	hook.fixed.Store(true)
	rd := c.herald("", "dlq", "redrive", "--id", id, "--json")
	require.Equal(t, 0, rd.code, "redrive: %+v", rd)
	var rep deadletter.Report
	require.NoError(t, json.Unmarshal([]byte(rd.stdout), &rep))
	require.Equal(t, 1, rep.Sent)
	require.Equal(t, 0, rep.Failed)
	waitFor(t, 45*time.Second, "delivered after the redrive", func() bool { return strings.Contains(runOut.String(), "delivered") })
	require.Regexp(t, id+`\s+webhook\s+delivered\s+receive 1`, runOut.String())
	require.EqualValues(t, 1, hook.ok.Load())
	waitFor(t, 10*time.Second, "dead-letter queue empty", func() bool { return c.counts(c.queues.DLQURL) == deadletter.Counts{} })

	// Ctrl-C: the batch in flight is finished, then exit 0.
	require.NoError(t, run.Process.Signal(syscall.SIGINT))
	select {
	case err := <-runDone:
		require.NoError(t, err, "herald run exits 0 on Ctrl-C")
	case <-time.After(40 * time.Second):
		t.Fatal("herald run did not stop after SIGINT")
	}
	require.Contains(t, runErr.String(), "stopped")
}

// A redrive cut between its send and its delete leaves the message in both
// queues, never in neither: a proxy in front of LocalStack fails every
// DeleteMessage and DeleteMessageBatch.
func TestCLIRedriveInterruptedBetweenSendAndDelete(t *testing.T) {
	c := setupCLI(t, 3)
	target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var deletes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("X-Amz-Target") {
		case "AmazonSQS.DeleteMessage", "AmazonSQS.DeleteMessageBatch":
			deletes.Add(1)
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.Header().Set("x-amzn-query-error", "InternalError;Receiver")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"__type":"com.amazonaws.sqs#InternalError","message":"injected: crash before the delete"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	// A dead letter as herald writes it: the producer's attribute beside
	// herald's reason.
	id := "cut-" + randHex(4)
	body := `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":{}}}`
	reason, _ := json.Marshal(redrive.Reason{Outcome: "permanent_failure", ErrorClass: "webhook_gone", Error: "410", Attempts: 1,
		FailedAt: time.Now().UTC().Format(time.RFC3339Nano), NotificationID: id, Channel: "webhook", SourceMessageID: "m-1"})
	_, err = c.sqs.SendMessage(c.ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(c.queues.DLQURL), MessageBody: aws.String(body),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"tenant":               {DataType: aws.String("String"), StringValue: aws.String("t-7")},
			redrive.AttrReason:     {DataType: aws.String("String"), StringValue: aws.String(string(reason))},
			redrive.AttrErrorClass: {DataType: aws.String("String"), StringValue: aws.String("webhook_gone")},
		},
	})
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "dead letter visible", func() bool { return c.counts(c.queues.DLQURL).Visible == 1 })

	c.vars["AWS_ENDPOINT_URL"] = srv.URL // the command's SQS calls go through the proxy
	res := c.herald("", "dlq", "redrive", "--all")
	require.Equal(t, 1, res.code, "a redrive with a failed delete exits 1: %+v", res)
	require.Contains(t, res.stdout, "sent 0, skipped 0, failed 1")
	require.Contains(t, res.stdout, "in both")
	require.Positive(t, deletes.Load(), "the delete was attempted, after the send")

	// In both queues: sent to the main queue with the producer's attribute
	// and not herald's, and still (visible again) in the dead-letter queue.
	out := receiveSome(t, c.ctx, c.sqs, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(c.queues.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 2, MessageAttributeNames: []string{"All"},
	})
	require.Len(t, out.Messages, 1)
	require.Equal(t, body, aws.ToString(out.Messages[0].Body))
	require.Equal(t, "t-7", aws.ToString(out.Messages[0].MessageAttributes["tenant"].StringValue))
	require.NotContains(t, out.Messages[0].MessageAttributes, redrive.AttrReason)
	require.NotContains(t, out.Messages[0].MessageAttributes, redrive.AttrErrorClass)
	waitFor(t, 10*time.Second, "dead letter visible again", func() bool { return c.counts(c.queues.DLQURL).Visible == 1 })
}

// send validates everything first: one invalid file, and nothing is sent.
func TestCLISendRefusesInvalidAndSendsNothing(t *testing.T) {
	c := setupCLI(t, 3)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(good, []byte(sample(t, "email-welcome.json")), 0o600))
	require.NoError(t, os.WriteFile(bad, []byte(sample(t, "poison-wrong-types.json")), 0o600))

	res := c.herald("", "send", good, bad)
	require.Equal(t, 1, res.code, "%+v", res)
	require.Contains(t, res.stderr, bad+": email.to: must be an array")
	require.Contains(t, res.stderr, "nothing sent")
	time.Sleep(time.Second)
	require.Equal(t, deadletter.Counts{}, c.counts(c.queues.URL), "nothing was sent")

	// NDJSON on standard input, with --skip-invalid: the valid one goes.
	stdin := strings.ReplaceAll(sample(t, "email-welcome.json"), "\n", "") + "\n\n" + strings.ReplaceAll(sample(t, "poison-wrong-types.json"), "\n", "") + "\n"
	res = c.herald(stdin, "send", "--skip-invalid", "--json", "-")
	require.Equal(t, 1, res.code, "an invalid notification still fails the command: %+v", res)
	require.Contains(t, res.stderr, "-:3: email.to")
	var rows []struct {
		Source, ID string
		SQS        string `json:"sqs_message_id"`
		Invalid    bool
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rows), res.stdout)
	require.Len(t, rows, 2)
	waitFor(t, 10*time.Second, "one message sent", func() bool { return c.counts(c.queues.URL).Visible == 1 })
}

// secret new makes a secret the reference library signs with, and verify
// checks that signature as a receiver would.
func TestCLISecretNewAndVerify(t *testing.T) {
	c := setupCLI(t, 1)
	res := c.herald("", "secret", "new")
	require.Equal(t, 0, res.code)
	secret := strings.TrimSpace(res.stdout)
	require.True(t, strings.HasPrefix(secret, "whsec_"), secret)

	body := `{"type":"invoice.paid","timestamp":"2026-12-01T00:00:00Z","data":{"n":1}}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	py := exec.Command(filepath.Join(repoRoot, ".venv", "verify", "bin", "python"), "-c",
		"import sys, datetime; from standardwebhooks.webhooks import Webhook; "+
			"print(Webhook(sys.argv[1]).sign(sys.argv[2], datetime.datetime.fromtimestamp(int(sys.argv[3]), tz=datetime.timezone.utc), sys.argv[4]))",
		secret, "msg_cli_1", ts, body)
	sigOut, err := py.CombinedOutput()
	require.NoError(t, err, "the Python reference library (scripts/install-verifiers.sh): %s", sigOut)
	sig := strings.TrimSpace(string(sigOut))

	file := filepath.Join(t.TempDir(), "body.json")
	require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
	ok := c.herald("", "verify", "--secret", secret, "--id", "msg_cli_1", "--timestamp", ts, "--signature", sig, "--body", file)
	require.Equal(t, 0, ok.code, "%+v", ok)
	require.Equal(t, "valid\n", ok.stdout)

	tampered := c.herald(strings.Replace(body, `"n":1`, `"n":2`, 1), "verify", "--secret", secret, "--id", "msg_cli_1", "--timestamp", ts, "--signature", sig, "--body", "-")
	require.Equal(t, 1, tampered.code, "%+v", tampered)
	require.Contains(t, tampered.stdout, "invalid")

	usage := c.herald("", "verify", "--secret", secret)
	require.Equal(t, 2, usage.code, "%+v", usage)
}

// On FIFO queues a redriven dead letter keeps its message group.
func TestCLIRedriveFIFOKeepsGroup(t *testing.T) {
	c := setupCLI(t, 3)
	q, err := localenv.CreateFIFOQueues(c.ctx, c.sqs, "cli-fifo-"+randHex(4), 3, 30*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { q.Delete(context.Background(), c.sqs) })
	c.vars["HERALD_QUEUE_URL"], c.vars["HERALD_DLQ_URL"] = q.URL, q.DLQURL

	body := `{"version":1,"id":"fifo-1","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":{}}}`
	_, err = c.sqs.SendMessage(c.ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(q.DLQURL), MessageBody: aws.String(body),
		MessageGroupId: aws.String("tenant-7"), MessageDeduplicationId: aws.String("d-1"),
	})
	require.NoError(t, err)

	res := c.herald("", "dlq", "redrive", "--id", "fifo-1")
	require.Equal(t, 0, res.code, "%+v", res)
	require.Contains(t, res.stdout, "sent 1, skipped 0, failed 0")
	out := receiveSome(t, c.ctx, c.sqs, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 2,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId},
	})
	require.Len(t, out.Messages, 1)
	require.Equal(t, body, aws.ToString(out.Messages[0].Body))
	require.Equal(t, "tenant-7", out.Messages[0].Attributes["MessageGroupId"])
	require.Equal(t, deadletter.Counts{}, c.counts(q.DLQURL))
}

// More dead letters than one receive or one batch call holds: all listed,
// all released, and a redrive by class moves exactly that class.
func TestCLIDeadLettersByClassAtScale(t *testing.T) {
	c := setupCLI(t, 3)
	const n = 23
	for i := range n {
		class := "webhook_http_5xx"
		if i%3 == 0 {
			class = "webhook_gone"
		}
		id := fmt.Sprintf("many-%02d", i)
		reason, _ := json.Marshal(redrive.Reason{Outcome: "permanent_failure", ErrorClass: delivery.Class(class), Attempts: 1,
			FailedAt: time.Now().UTC().Format(time.RFC3339Nano), NotificationID: id, Channel: "webhook", SourceMessageID: "src-" + id})
		_, err := c.sqs.SendMessage(c.ctx, &sqs.SendMessageInput{
			QueueUrl:    aws.String(c.queues.DLQURL),
			MessageBody: aws.String(`{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":{}}}`),
			MessageAttributes: map[string]types.MessageAttributeValue{
				redrive.AttrReason: {DataType: aws.String("String"), StringValue: aws.String(string(reason))},
			},
		})
		require.NoError(t, err)
	}
	waitFor(t, 10*time.Second, "dead letters visible", func() bool { return c.counts(c.queues.DLQURL).Visible == n })

	ls := c.herald("", "dlq", "ls", "--json")
	require.Equal(t, 0, ls.code, "%+v", ls)
	var letters []deadletter.Letter
	require.NoError(t, json.Unmarshal([]byte(ls.stdout), &letters))
	require.Len(t, letters, n)
	require.Equal(t, deadletter.Counts{Visible: n}, c.counts(c.queues.DLQURL), "every letter released")

	gone := c.herald("", "dlq", "ls", "--class", "webhook_gone", "--json")
	require.NoError(t, json.Unmarshal([]byte(gone.stdout), &letters))
	require.Len(t, letters, 8)

	rd := c.herald("", "dlq", "redrive", "--class", "webhook_gone")
	require.Equal(t, 0, rd.code, "%+v", rd)
	require.Contains(t, rd.stdout, "sent 8, skipped 15, failed 0")
	waitFor(t, 10*time.Second, "counts settle", func() bool {
		return c.counts(c.queues.DLQURL) == deadletter.Counts{Visible: n - 8} && c.counts(c.queues.URL).Visible == 8
	})
}

// A FIFO dead-letter queue returns no more of a message group while some
// of it is held: with 13 letters in one group a listing reads 10. herald
// must warn and exit 1 rather than list 10 as all, consume nothing, and a
// redrive of what it read lets the next one read the rest.
func TestCLIFIFOGroupReadOnlyInPart(t *testing.T) {
	c := setupCLI(t, 3)
	q, err := localenv.CreateFIFOQueues(c.ctx, c.sqs, "cli-fifo-group-"+randHex(4), 3, 30*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { q.Delete(context.Background(), c.sqs) })
	c.vars["HERALD_QUEUE_URL"], c.vars["HERALD_DLQ_URL"] = q.URL, q.DLQURL
	for i := range 13 {
		body := fmt.Sprintf(`{"version":1,"id":"grp-%02d","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":{}}}`, i)
		_, err = c.sqs.SendMessage(c.ctx, &sqs.SendMessageInput{
			QueueUrl: aws.String(q.DLQURL), MessageBody: aws.String(body),
			MessageGroupId: aws.String("tenant-7"), MessageDeduplicationId: aws.String(fmt.Sprintf("d-%d", i)),
		})
		require.NoError(t, err)
	}

	ls := c.herald("", "dlq", "ls")
	require.Equal(t, 1, ls.code, "%+v", ls)
	require.Contains(t, ls.stderr, "more of")
	require.Contains(t, ls.stderr, "10 of 10 dead letters shown")
	waitFor(t, 10*time.Second, "every letter visible again", func() bool { return c.counts(q.DLQURL) == deadletter.Counts{Visible: 13} })

	first := c.herald("", "dlq", "redrive", "--all")
	require.Equal(t, 1, first.code, "%+v", first)
	require.Contains(t, first.stdout, "sent 10, skipped 0, failed 0")
	second := c.herald("", "dlq", "redrive", "--all")
	require.Equal(t, 0, second.code, "%+v", second)
	require.Contains(t, second.stdout, "sent 3, skipped 0, failed 0")
	require.Equal(t, deadletter.Counts{}, c.counts(q.DLQURL))
}

// A FIFO group's dead letters go back in the group's order whichever moved
// them: LocalStack's redrive policy (no failure time, a new SequenceNumber
// in the dead-letter queue) or herald (a reason with failed_at), and not in
// the text order of their ids (n-11 before n-9).
func TestCLIRedriveKeepsAGroupsOrderAcrossMovers(t *testing.T) {
	c := setupCLI(t, 3)
	q, err := localenv.CreateFIFOQueues(c.ctx, c.sqs, "cli-fifo-order-"+randHex(4), 1, 30*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { q.Delete(context.Background(), c.sqs) })
	c.vars["HERALD_QUEUE_URL"], c.vars["HERALD_DLQ_URL"] = q.URL, q.DLQURL
	body := func(id string) string {
		return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":{}}}`
	}
	send := func(url, id string, attrs map[string]types.MessageAttributeValue) {
		_, err := c.sqs.SendMessage(c.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body(id)),
			MessageGroupId: aws.String("n"), MessageDeduplicationId: aws.String("d-" + id), MessageAttributes: attrs})
		require.NoError(t, err)
	}
	// byPolicy receives the group's head and makes it visible again at
	// once, until the redrive policy (maxReceiveCount 1) has moved it to
	// the dead-letter queue: want letters there.
	byPolicy := func(want int) {
		waitFor(t, 30*time.Second, "the redrive policy moves the group's head", func() bool {
			out, err := c.sqs.ReceiveMessage(c.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 1})
			require.NoError(t, err)
			for _, m := range out.Messages {
				_, err := c.sqs.ChangeMessageVisibility(c.ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
				require.NoError(t, err)
			}
			return c.counts(q.DLQURL).Visible == want
		})
	}
	send(q.URL, "n-9", nil)
	send(q.URL, "n-11", nil)
	byPolicy(1) // n-9
	reason, err := json.Marshal(redrive.Reason{Outcome: "attempts_exhausted", ErrorClass: "webhook_http_5xx", Attempts: 1,
		FailedAt: time.Now().UTC().Format(time.RFC3339Nano), NotificationID: "n-10", Channel: "webhook", SourceMessageID: "src-n-10"})
	require.NoError(t, err)
	send(q.DLQURL, "n-10", map[string]types.MessageAttributeValue{ // as herald dead-letters it
		redrive.AttrReason: {DataType: aws.String("String"), StringValue: aws.String(string(reason))},
	})
	byPolicy(3) // n-11

	res := c.herald("", "dlq", "redrive", "--all")
	require.Equal(t, 0, res.code, "%+v", res)
	require.Contains(t, res.stdout, "sent 3, skipped 0, failed 0")
	var got []string
	waitFor(t, 30*time.Second, "the three back in the queue", func() bool {
		out, err := c.sqs.ReceiveMessage(c.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, VisibilityTimeout: 30})
		require.NoError(t, err)
		for _, m := range out.Messages {
			var n struct{ ID string }
			require.NoError(t, json.Unmarshal([]byte(aws.ToString(m.Body)), &n))
			got = append(got, n.ID)
			_, err := c.sqs.DeleteMessage(c.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle})
			require.NoError(t, err)
		}
		return len(got) >= 3
	})
	require.Equal(t, []string{"n-9", "n-10", "n-11"}, got)
}

// A gap in the letters of a FIFO group chosen with --id: the letter left
// out stays, so the later one is held (exit 1), not sent ahead of it;
// chosen together they go back in the group's order.
func TestCLIRedriveHoldsAGroupBehindALetterNotChosen(t *testing.T) {
	c := setupCLI(t, 3)
	q, err := localenv.CreateFIFOQueues(c.ctx, c.sqs, "cli-fifo-gap-"+randHex(4), 3, 30*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { q.Delete(context.Background(), c.sqs) })
	c.vars["HERALD_QUEUE_URL"], c.vars["HERALD_DLQ_URL"] = q.URL, q.DLQURL
	for _, id := range []string{"n-9", "n-10", "n-11"} {
		_, err := c.sqs.SendMessage(c.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.DLQURL),
			MessageBody:    aws.String(`{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":{}}}`),
			MessageGroupId: aws.String("n"), MessageDeduplicationId: aws.String("d-" + id)})
		require.NoError(t, err)
	}
	gap := c.herald("", "dlq", "redrive", "--id", "n-9", "--id", "n-11")
	require.Equal(t, 1, gap.code, "%+v", gap)
	require.Contains(t, gap.stdout, "sent 1, skipped 1, failed 1")
	require.Regexp(t, `n-11 .* held .*\(n-10\) of message group n, before it, was not chosen`, gap.stdout)
	waitFor(t, 10*time.Second, "n-10 and n-11 visible again", func() bool { return c.counts(q.DLQURL) == deadletter.Counts{Visible: 2} })

	rest := c.herald("", "dlq", "redrive", "--id", "n-11", "--id", "n-10")
	require.Equal(t, 0, rest.code, "%+v", rest)
	require.Contains(t, rest.stdout, "sent 2, skipped 0, failed 0")
	var got []string
	waitFor(t, 30*time.Second, "the three back in the queue", func() bool {
		out, err := c.sqs.ReceiveMessage(c.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, VisibilityTimeout: 30})
		require.NoError(t, err)
		for _, m := range out.Messages {
			var n struct{ ID string }
			require.NoError(t, json.Unmarshal([]byte(aws.ToString(m.Body)), &n))
			got = append(got, n.ID)
			_, err := c.sqs.DeleteMessage(c.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle})
			require.NoError(t, err)
		}
		return len(got) >= 3
	})
	require.Equal(t, []string{"n-9", "n-10", "n-11"}, got)
}
