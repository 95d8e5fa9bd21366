//go:build integration

package integration

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/localrunner"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/notification"
)

// mapping is a function and its SQS event source mapping registered in
// LocalStack's Lambda API. LocalStack in host mode answers CreateFunction
// and the event-source-mapping calls; it cannot run the function (that
// needs Docker: the function's state becomes Failed), which the test does
// not need. The mapping's source is a queue of its own, so LocalStack's own
// poller never takes the test's messages.
type mapping struct {
	lambda    *lambda.Client
	function  string
	sourceARN string
	uuid      string
}

func registerMapping(t *testing.T, e *env) *mapping {
	t.Helper()
	m := &mapping{lambda: lambda.NewFromConfig(e.awsCfg), function: "herald-it-pause-" + randHex(4)}
	src, err := e.sqs.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(m.function + "-src")})
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = e.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: src.QueueUrl}) })
	attrs, err := e.sqs.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: src.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	require.NoError(t, err)
	m.sourceARN = attrs.Attributes[string(types.QueueAttributeNameQueueArn)]

	var code bytes.Buffer
	zw := zip.NewWriter(&code)
	w, err := zw.Create("bootstrap")
	require.NoError(t, err)
	_, _ = w.Write([]byte("#!/bin/sh\nexit 1\n"))
	require.NoError(t, zw.Close())
	_, err = m.lambda.CreateFunction(e.ctx, &lambda.CreateFunctionInput{
		FunctionName: aws.String(m.function), Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"),
		Role: aws.String("arn:aws:iam::000000000000:role/herald-deliver"), Code: &lambdatypes.FunctionCode{ZipFile: code.Bytes()},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = m.lambda.DeleteFunction(context.Background(), &lambda.DeleteFunctionInput{FunctionName: aws.String(m.function)})
	})
	esm, err := m.lambda.CreateEventSourceMapping(e.ctx, &lambda.CreateEventSourceMappingInput{
		FunctionName: aws.String(m.function), EventSourceArn: aws.String(m.sourceARN), BatchSize: aws.Int32(10), Enabled: aws.Bool(true),
		FunctionResponseTypes: []lambdatypes.FunctionResponseType{lambdatypes.FunctionResponseTypeReportBatchItemFailures},
	})
	require.NoError(t, err)
	m.uuid = aws.ToString(esm.UUID)
	t.Cleanup(func() {
		_, _ = m.lambda.DeleteEventSourceMapping(context.Background(), &lambda.DeleteEventSourceMappingInput{UUID: esm.UUID})
	})
	m.waitState(t, e.ctx, "Enabled")
	return m
}

func (m *mapping) state(t *testing.T, ctx context.Context) string {
	t.Helper()
	out, err := m.lambda.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(m.uuid)})
	require.NoError(t, err)
	return aws.ToString(out.State)
}

func (m *mapping) waitState(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return m.state(t, ctx) == want }, 30*time.Second, 200*time.Millisecond, "mapping %s never %s", m.uuid, want)
}

// TestPauseAndResumeAMapping disables and enables a mapping registered in
// LocalStack, found by function name and source queue.
func TestPauseAndResumeAMapping(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	m := registerMapping(t, e)

	got, err := pause.Pause(e.ctx, m.lambda, m.function, m.sourceARN)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, m.uuid, got[0].UUID)
	m.waitState(t, e.ctx, "Disabled")

	again, err := pause.Pause(e.ctx, m.lambda, m.function, m.sourceARN)
	require.NoError(t, err, "pausing a paused mapping is no error")
	require.Equal(t, "Disabled", again[0].State)

	_, err = pause.Pause(e.ctx, m.lambda, m.function, e.queues.ARN)
	require.ErrorIs(t, err, pause.ErrNoMapping, "only the mapping from the given queue")

	_, err = pause.Resume(e.ctx, m.lambda, m.function, m.sourceARN)
	require.NoError(t, err)
	m.waitState(t, e.ctx, "Enabled")
}

// TestMalformedSecretPausesInsteadOfDraining runs the deliver function's
// bootstrap under the Runtime Interface Emulator with a malformed signing
// secret. A local event source mapping that, like Lambda's, polls only
// while the registered mapping is enabled feeds it the main queue's
// messages. The function pauses its mapping, hands the batch back and says
// how to resume; the messages stay in the main queue with the one receive
// that brought them, the dead-letter queue stays empty. After the secret is
// fixed and the mapping resumed, they are delivered.
func TestMalformedSecretPausesInsteadOfDraining(t *testing.T) {
	t.Parallel()
	rie := filepath.Join(repoRoot, ".tools", "bin", "aws-lambda-rie")
	_, err := os.Stat(rie)
	require.NoError(t, err, "the emulator is installed by scripts/install-rie.sh (make test runs it)")
	e := setup(t, options{maxReceive: 3})
	m := registerMapping(t, e)
	// Short visibility timeout so that handed-back messages return soon.
	_, err = e.sqs.SetQueueAttributes(e.ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(e.queues.URL), Attributes: map[string]string{"VisibilityTimeout": "2"}})
	require.NoError(t, err)

	bootstrap := filepath.Join(t.TempDir(), "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bootstrap, "./functions/deliver")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	certFile := filepath.Join(filepath.Dir(bootstrap), "receiver.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.receiver.Certificate().Raw}), 0o600))

	const malformed = "whsec_this-is-not-base64!"
	start := func(secret string) *localenv.RIE {
		fn, err := localenv.StartRIE(rie, []string{bootstrap}, []string{
			"AWS_LAMBDA_FUNCTION_TIMEOUT=30", "AWS_LAMBDA_FUNCTION_NAME=" + m.function,
			"HERALD_QUEUE_URL=" + e.queues.URL, "HERALD_DLQ_URL=" + e.queues.DLQURL, "HERALD_MAX_RECEIVE_COUNT=3",
			"HERALD_WEBHOOK_SECRET=" + secret, "HERALD_WEBHOOK_SECRET_ARN=",
			"HERALD_WEBHOOK_ALLOW_CIDRS=127.0.0.1/32", "SSL_CERT_FILE=" + certFile,
			"HERALD_EMAIL_DEFAULT_FROM=noreply@example.com",
		})
		require.NoError(t, err)
		t.Cleanup(fn.Stop)
		return fn
	}
	fn := start(malformed)
	var invocations int
	runner := &localrunner.Runner{SQS: e.sqs, QueueURL: e.queues.URL, WaitTime: time.Second, FunctionTimeout: 20 * time.Second,
		Handler: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			invocations++
			for i := range ev.Records {
				ev.Records[i].EventSourceARN = m.sourceARN // the registered mapping's queue
			}
			resp, _, err := fn.InvokeWhenUp(ctx, ev, 10*time.Second)
			return resp, err
		}}
	// pollWhileEnabled is one poll of Lambda's poller: none while the
	// mapping is disabled.
	pollWhileEnabled := func() int {
		if m.state(t, e.ctx) != "Enabled" {
			return 0
		}
		n, err := runner.Poll(e.ctx)
		require.NoError(t, err)
		return n
	}

	hook := e.receiver.URL()
	ids := e.send(
		`{"version":1,"id":"pause-1","channel":"webhook","webhook":{"url":"`+hook+`/p1","event_type":"t","payload":{}}}`,
		`{"version":1,"id":"pause-2","channel":"webhook","webhook":{"url":"`+hook+`/p2","event_type":"t","payload":{}}}`,
		`{"version":1,"id":"pause-3","channel":"email","email":{"to":["a@example.org"],"subject":"s","text":"t"}}`,
	)
	received := 0
	require.Eventually(t, func() bool { received += pollWhileEnabled(); return received >= len(ids) }, 20*time.Second, 10*time.Millisecond)
	m.waitState(t, e.ctx, "Disabled")

	logs := fn.Logs()
	require.Contains(t, logs, pause.ResumeCommand(m.uuid), "the ERROR says how to resume")
	require.Contains(t, logs, "HERALD_WEBHOOK_SECRET", "the ERROR names the bad setting")
	require.NotContains(t, logs, "this-is-not-base64", "never the secret itself")
	var pausedLine string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `"`+metrics.Paused+`"`) {
			pausedLine = l
		}
	}
	require.NotEmpty(t, pausedLine, "the Paused metric the alarm watches; logs: %s", logs)
	require.NoError(t, metrics.Validate([]byte(pausedLine), time.Now()))
	require.Contains(t, pausedLine, `"level":"ERROR"`)

	// Paused: many polling rounds later nothing was received again.
	before := invocations
	for range 5 {
		require.Zero(t, pollWhileEnabled())
		time.Sleep(500 * time.Millisecond)
	}
	require.Equal(t, before, invocations)
	require.Empty(t, e.deadLetters(), "nothing dead-lettered")
	counts := receiveCounts(t, e, len(ids))
	require.Len(t, counts, len(ids), "every notification still in the main queue")
	for id, cs := range counts {
		if len(cs) > 1 {
			// SendMessage is at least once: under load the SDK may retry a
			// send SQS had already stored (see docs/reliability.md).
			t.Logf("%s is stored %d times (the test's own send, retried)", id, len(cs))
		}
		for _, c := range cs {
			require.Contains(t, []string{"1", "2"}, c, "%s: at most the receive that brought it, plus this look; not run up", id)
		}
		require.Contains(t, cs, "2", "%s: the copy the function was handed came back untouched", id)
	}

	// The operator fixes the secret (a new execution environment reads
	// it) and resumes the mapping: the backlog is delivered.
	fn.Stop()
	fn = start(testSecret)
	_, err = pause.Resume(e.ctx, m.lambda, m.function, m.sourceARN)
	require.NoError(t, err)
	m.waitState(t, e.ctx, "Enabled")
	require.Eventually(t, func() bool { pollWhileEnabled(); return e.queueEmpty() }, 30*time.Second, 100*time.Millisecond, "logs: %s", fn.Logs())
	delivered := map[string]bool{}
	for _, r := range e.receiver.Requests() {
		delivered[r.Header.Get("webhook-id")] = true
	}
	require.Equal(t, map[string]bool{"pause-1": true, "pause-2": true}, delivered, "both webhooks delivered")
	require.Empty(t, e.deadLetters())
}

// receiveCounts receives every message of the main queue once (waiting for
// handed-back ones to become visible, until want notifications are seen)
// and returns the ApproximateReceiveCount of each copy by notification id,
// then makes them visible again.
func receiveCounts(t *testing.T, e *env, want int) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	deadline := time.Now().Add(15 * time.Second)
	var handles []string
	for time.Now().Before(deadline) && len(out) < want {
		r, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(e.queues.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
		})
		require.NoError(t, err)
		for _, msg := range r.Messages {
			id := notification.IDOf([]byte(aws.ToString(msg.Body)))
			out[id] = append(out[id], msg.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
			handles = append(handles, aws.ToString(msg.ReceiptHandle))
		}
	}
	for _, h := range handles {
		_, err := e.sqs.ChangeMessageVisibility(e.ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(e.queues.URL), ReceiptHandle: aws.String(h), VisibilityTimeout: 0})
		require.NoError(t, err)
	}
	return out
}

// TestPauseThatCannotFindItsMappingFailsTheInvocation: a degraded function
// with no mapping to pause (here: none registered for its name) returns an
// error, so that Lambda counts a function error (the deliver-errors alarm),
// and still hands every record back; it writes no Paused metric.
func TestPauseThatCannotFindItsMappingFailsTheInvocation(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	var logs bytes.Buffer
	h := &pause.Handler{
		API: lambda.NewFromConfig(e.awsCfg), FunctionName: "herald-it-nomapping-" + randHex(4),
		Cause:  errors.New("configuration: HERALD_MAX_RECEIVE_COUNT: must be at least 1"),
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	}
	require.NoError(t, h.Validate())
	ev := events.SQSEvent{Records: []events.SQSMessage{rec("m-1", "{}"), rec("m-2", "{}")}}
	for i := range ev.Records {
		ev.Records[i].EventSourceARN = e.queues.ARN
	}
	resp, err := h.Handle(e.ctx, ev)
	require.ErrorIs(t, err, pause.ErrNoMapping)
	require.ErrorContains(t, err, "HERALD_MAX_RECEIVE_COUNT")
	require.Len(t, resp.BatchItemFailures, 2)
	require.Contains(t, logs.String(), `"level":"ERROR"`)
	require.NotContains(t, logs.String(), metrics.Paused)
}
