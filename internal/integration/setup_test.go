//go:build integration

// Package integration tests herald end to end against the local stack:
// LocalStack's SQS and the SES v2 emulator, started by `make test`
// (scripts/local-up.sh), with the real AWS SDK, real HTTPS webhook
// receivers and the local event source mapping.
package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/localrunner"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/webhook"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var repoRoot = func() string { r, _ := filepath.Abs("../.."); return r }()

// env is what one test runs against: its own queue pair, a receiver, the
// processor as the Lambda wires it, and the local event source mapping.
type env struct {
	t        *testing.T
	ctx      context.Context
	sqs      *sqs.Client
	awsCfg   aws.Config
	queues   localenv.Queues
	receiver *localenv.Receiver
	runner   *localrunner.Runner
	logs     *logLines
}

type options struct {
	maxReceive int
	respond    func(path string, attempt int) int
	// deliver, when set, adjusts the deliver function's configuration and
	// options before it is built (the queues and receiver exist by then).
	deliver func(e *env, c *config.Deliver, o *app.DeliverOptions)
}

func setup(t *testing.T, o options) *env {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Fatal("AWS_ENDPOINT_URL is not set: run the integration tests with `make test`, which starts the local stack")
	}
	if o.maxReceive == 0 {
		o.maxReceive = 3
	}
	if o.respond == nil {
		o.respond = func(string, int) int { return 200 }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	e := &env{t: t, ctx: ctx, sqs: sqs.NewFromConfig(awsCfg), awsCfg: awsCfg, logs: &logLines{}}
	e.queues, err = localenv.CreateQueues(ctx, e.sqs, "it-"+strings.ToLower(sanitize(t.Name()))+"-"+randHex(4), o.maxReceive, 30*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { e.queues.Delete(context.Background(), e.sqs) })
	e.receiver = localenv.NewReceiver(o.respond)
	t.Cleanup(e.receiver.Close)
	t.Cleanup(func() {
		if t.Failed() { // what herald said, to tell a product fault from an emulator's
			for _, l := range e.logs.all() {
				t.Logf("herald: %v", l)
			}
		}
	})

	cfg := config.Deliver{
		QueueURL: e.queues.URL, DeadLetterQueueURL: e.queues.DLQURL, MaxReceiveCount: o.maxReceive,
		BackoffBase: time.Second, BackoffCap: 30 * time.Second, Concurrency: 10,
		EmailDefaultFrom: "noreply@example.com",
		WebhookSecret:    testSecret, WebhookTimeout: 5 * time.Second,
		// The receiver listens on 127.0.0.1, which webhooks may not reach
		// by default (docs/security.md).
		WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}
	dopts := app.DeliverOptions{WebhookTLS: e.receiver.TLSConfig(), Logger: slog.New(slog.NewJSONHandler(e.logs, nil))}
	if o.deliver != nil {
		o.deliver(e, &cfg, &dopts)
	}
	p, err := app.NewDeliverContext(ctx, cfg, awsCfg, dopts)
	require.NoError(t, err)
	e.runner = &localrunner.Runner{SQS: e.sqs, QueueURL: e.queues.URL, Handler: p.Handle, WaitTime: time.Second, FunctionTimeout: 20 * time.Second}
	return e
}

// send puts bodies on the test's queue and returns their SQS message ids.
func (e *env) send(bodies ...string) []string {
	e.t.Helper()
	ids := make([]string, len(bodies))
	for i, b := range bodies {
		out, err := e.sqs.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(e.queues.URL), MessageBody: aws.String(b)})
		require.NoError(e.t, err)
		ids[i] = aws.ToString(out.MessageId)
		if attempts, ok := retry.GetAttemptResults(out.ResultMetadata); ok && len(attempts.Results) > 1 {
			// The SDK retried: an attempt SQS took but whose answer was
			// lost stored a copy (SendMessage is at least once).
			e.t.Logf("SendMessage %s took %d attempts: the queue may hold a copy of it", ids[i], len(attempts.Results))
			var n struct {
				ID string `json:"id"`
			}
			if json.Unmarshal([]byte(b), &n) == nil && n.ID != "" {
				e.logs.markCopied(n.ID)
			}
		}
	}
	return ids
}

// receiveSome repeats in until SQS answers with a message, for at most
// 45 s: LocalStack's receive can come back empty while a message is there
// (seen on fresh clones' CI runs), so one empty answer proves nothing; and
// a receive whose answer was cut under load (the SDK then retries it) hid
// the message it took for the queue's visibility timeout, 30 s by default,
// so the wait outlasts that.
func receiveSome(t *testing.T, ctx context.Context, c *sqs.Client, in *sqs.ReceiveMessageInput) *sqs.ReceiveMessageOutput {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		out, err := c.ReceiveMessage(ctx, in)
		require.NoError(t, err)
		if len(out.Messages) > 0 {
			return out
		}
		require.True(t, time.Now().Before(deadline), "no message on %s within 45 s", aws.ToString(in.QueueUrl))
	}
}

// pollUntil runs the local event source mapping until done reports true.
func (e *env) pollUntil(timeout time.Duration, done func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for !done() {
		require.True(e.t, time.Now().Before(deadline), "condition not met within %s; log lines: %v", timeout, e.logs.all())
		_, err := e.runner.Poll(e.ctx)
		require.NoError(e.t, err)
	}
}

// deadLetters reads the test's dead-letter queue, one per notification
// the test sent: SendMessage is at least once on a standard queue (a retried
// send that SQS had already taken stores a second copy), so copies count
// once, and are logged: herald's copies of one move (the same herald.reason
// source_message_id) and copies of the test's own send (the same body; no
// test sends one body twice).
func (e *env) deadLetters() []localenv.DeadLetter {
	e.t.Helper()
	dl, err := localenv.ReceiveAll(e.ctx, e.sqs, e.queues.DLQURL, 30*time.Second)
	require.NoError(e.t, err)
	var out []localenv.DeadLetter
	seen, bodies := map[string]bool{}, map[string]bool{}
	for _, d := range dl {
		var r redrive.Reason
		if json.Unmarshal([]byte(d.Attributes[redrive.AttrReason]), &r) == nil && r.SourceMessageID != "" {
			if seen[r.SourceMessageID] {
				e.t.Logf("dead letter of %s stored twice (at-least-once SendMessage); counted once", r.SourceMessageID)
				continue
			}
			seen[r.SourceMessageID] = true
		}
		if bodies[d.Body] {
			e.t.Logf("dead letter of %s: a copy of a message sent once (at-least-once SendMessage); counted once", r.SourceMessageID)
			continue
		}
		bodies[d.Body] = true
		out = append(out, d)
	}
	return out
}

func (e *env) queueEmpty() bool {
	out, err := e.sqs.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(e.queues.URL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible},
	})
	require.NoError(e.t, err)
	return out.Attributes["ApproximateNumberOfMessages"] == "0" && out.Attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
}

func reasonOf(t *testing.T, d localenv.DeadLetter) redrive.Reason {
	t.Helper()
	var r redrive.Reason
	require.NoError(t, json.Unmarshal([]byte(d.Attributes[redrive.AttrReason]), &r), "dead letter without a reason: %+v", d)
	return r
}

// logLines collects the processor's JSON log lines.
type logLines struct {
	mu    sync.Mutex
	lines []map[string]any
	// emf holds what metrics.Validate said of each line with an "_aws"
	// member that is not CloudWatch Embedded Metric Format.
	emf []error
	// copied holds the notification ids whose SendMessage the SDK retried:
	// the queue may hold a copy, which herald settles as duplicate.
	copied map[string]bool
}

// markCopied records that the queue may hold a copy of notification id.
func (l *logLines) markCopied(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.copied == nil {
		l.copied = map[string]bool{}
	}
	l.copied[id] = true
}

// listedRecords returns a record line (processor.LineNotification) for
// each notification the batch line m lists as delivered on its first
// receive (processor.MemberDelivered, processor.Listed), as its own line
// would have been before issue 30: the tests read a notification's fate
// from record lines.
func listedRecords(m map[string]any) []map[string]any {
	if m["msg"] != processor.LineBatch {
		return nil
	}
	list, _ := m[processor.MemberDelivered].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		d, _ := e.(map[string]any)
		r := map[string]any{"msg": processor.LineNotification, "id": d["id"], "channel": m["channel"], "outcome": m["outcome"], "receive_count": 1.0, "duration_ms": d["ms"], "listed": true}
		if h, ok := d["host"]; ok {
			r["webhook_host"] = h
		}
		out = append(out, r)
	}
	return out
}

func (l *logLines) Write(p []byte) (int, error) {
	var m map[string]any
	if json.Unmarshal(p, &m) == nil {
		l.mu.Lock()
		l.lines = append(append(l.lines, m), listedRecords(m)...)
		if _, ok := m["_aws"]; ok {
			if err := metrics.Validate(bytes.TrimSuffix(p, []byte("\n")), time.Time{}); err != nil {
				l.emf = append(l.emf, fmt.Errorf("%w: %s", err, p))
			}
		}
		l.mu.Unlock()
	}
	return len(p), nil
}

// emfErrors returns the lines that carry "_aws" but break the EMF
// specification.
func (l *logLines) emfErrors() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.emf...)
}

func (l *logLines) all() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.lines...)
}

// outcomes returns the outcome of every log line about a notification id,
// but for the duplicates of a copy the test's own SendMessage put (an SDK
// retry after LocalStack cut its answer: markCopied), which herald rightly
// settles as duplicate and which are not the behaviour under test.
func (l *logLines) outcomes(id string) []string {
	l.mu.Lock()
	copied := l.copied[id]
	l.mu.Unlock()
	var out []string
	for _, m := range l.all() {
		if m["id"] == id {
			if copied && m["outcome"] == "duplicate" {
				continue
			}
			out = append(out, m["outcome"].(string))
		}
	}
	return out
}

func sample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "cases", name))
	require.NoError(t, err)
	return string(b)
}

// verifyWithReference checks a webhook request with both Standard Webhooks
// reference libraries: the JavaScript one (npm standardwebhooks, through
// localstack/verify-webhook.mjs) and the Python one (PyPI standardwebhooks,
// through localstack/verify_webhook.py in .venv/verify). They must agree; the
// error is theirs when both reject.
func verifyWithReference(t *testing.T, secret string, h map[string]string, body []byte) error {
	t.Helper()
	in, err := json.Marshal(map[string]any{"secret": secret, "headers": h, "body": string(body)})
	require.NoError(t, err)
	run := func(name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Stdin = bytes.NewReader(in)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit) && exit.ExitCode() == 1, "%s could not verify: %v: %s", name, err, out.String())
			return &verifyError{out: strings.TrimSpace(out.String()), err: err}
		}
		return nil
	}
	jsErr := run("node", filepath.Join(repoRoot, "localstack", "verify-webhook.mjs"))
	pyErr := run(filepath.Join(repoRoot, ".venv", "verify", "bin", "python"), filepath.Join(repoRoot, "localstack", "verify_webhook.py"))
	require.Equal(t, jsErr == nil, pyErr == nil, "the reference libraries disagree: JavaScript %v, Python %v", jsErr, pyErr)
	return jsErr
}

// derivedSecret is the secret the receiver at rawURL installs: the output
// of `herald secret derive URL` (webhook.DeriveSecret).
func derivedSecret(t *testing.T, secret, rawURL string) string {
	t.Helper()
	s, err := webhook.DeriveSecret(secret, rawURL)
	require.NoError(t, err)
	return s
}

type verifyError struct {
	out string
	err error
}

func (e *verifyError) Error() string { return e.err.Error() + ": " + e.out }

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = io.ReadFull(rand.Reader, b)
	return hex.EncodeToString(b)
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteRune('-')
		}
	}
	out := b.String()
	if len(out) > 50 {
		out = out[:50]
	}
	return out
}
