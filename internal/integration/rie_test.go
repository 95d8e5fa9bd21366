//go:build integration

package integration

import (
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
)

// TestBootstrapUnderRuntimeInterfaceEmulator builds the deliver function's
// bootstrap as `make build` does (for this machine's architecture), runs it
// under the AWS Lambda Runtime Interface Emulator with the environment the
// template gives it (the signing secret in Secrets Manager), and invokes it
// with one SQS event: a webhook, an expired notification and a poison
// message.
func TestBootstrapUnderRuntimeInterfaceEmulator(t *testing.T) {
	t.Parallel()
	rie := filepath.Join(repoRoot, ".tools", "bin", "aws-lambda-rie")
	_, err := os.Stat(rie)
	require.NoError(t, err, "the emulator is installed by scripts/install-rie.sh (make test runs it)")

	// Built before setup: the environment's two-minute context is for
	// the calls to the local stack, not for a build on a loaded machine.
	dir := t.TempDir()
	bootstrap := filepath.Join(dir, "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bootstrap, "./functions/deliver")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	e := setup(t, options{})

	// The bootstrap trusts the receiver through the standard SSL_CERT_FILE,
	// as it would any private CA: no test hook in the function.
	certFile := filepath.Join(dir, "receiver.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.receiver.Certificate().Raw}), 0o600))

	fn, err := localenv.StartRIE(rie, []string{bootstrap}, []string{
		"AWS_LAMBDA_FUNCTION_TIMEOUT=30", "AWS_LAMBDA_FUNCTION_NAME=deliver",
		"SSL_CERT_FILE=" + certFile,
		"HERALD_QUEUE_URL=" + e.queues.URL, "HERALD_DLQ_URL=" + e.queues.DLQURL,
		"HERALD_MAX_RECEIVE_COUNT=3",
		// As the template does: the signing secret is read from Secrets
		// Manager (LocalStack, through AWS_ENDPOINT_URL) at cold start.
		"HERALD_WEBHOOK_SECRET=", "HERALD_WEBHOOK_SECRET_ARN=" + e.createSecret(testSecret),
		// The receiver is on 127.0.0.1, blocked unless allowed.
		"HERALD_WEBHOOK_ALLOW_CIDRS=127.0.0.1/32",
	})
	require.NoError(t, err)
	t.Cleanup(fn.Stop)

	webhook := fmt.Sprintf(`{"version":1,"id":"rie-1","channel":"webhook","webhook":{"url":"%s/rie","event_type":"t","payload":{"via":"rie"}}}`, e.receiver.URL())
	expired := strings.ReplaceAll(sample(t, "webhook-expired.json"), "https://hooks.example.test", e.receiver.URL())
	ev := events.SQSEvent{Records: []events.SQSMessage{
		rec("m-webhook", webhook), rec("m-expired", expired), rec("m-poison", sample(t, "poison-not-json.json")),
	}}
	for i := range ev.Records {
		ev.Records[i].EventSourceARN = e.queues.ARN
	}
	got, _, err := fn.InvokeWhenUp(e.ctx, ev, 10*time.Second)
	require.NoError(t, err)
	require.Empty(t, got.BatchItemFailures, "all three are settled; logs: %s", fn.Logs())

	reqs := e.receiver.Requests()
	require.Len(t, reqs, 1, "only the live webhook is sent")
	require.Equal(t, "/rie", reqs[0].Path)
	dl := e.deadLetters()
	require.Len(t, dl, 1)
	require.Equal(t, "invalid_message", string(reasonOf(t, dl[0]).ErrorClass))
	require.Contains(t, fn.Logs(), `"outcome":"delivered"`, "the function logs JSON lines to stdout")
	require.NoError(t, verifyWithReference(t, derivedSecret(t, testSecret, e.receiver.URL()), map[string]string{
		"webhook-id":        reqs[0].Header.Get("webhook-id"),
		"webhook-timestamp": reqs[0].Header.Get("webhook-timestamp"),
		"webhook-signature": reqs[0].Header.Get("webhook-signature"),
	}, reqs[0].Body), "signed with the secret read from Secrets Manager")
	require.NotContains(t, fn.Logs(), testSecret[len("whsec_"):], "nothing the function writes holds the signing secret")
}

func rec(id, body string) events.SQSMessage {
	return events.SQSMessage{
		MessageId: id, ReceiptHandle: "rh-" + id, Body: body, EventSource: "aws:sqs", AWSRegion: "us-east-1",
		Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": fmt.Sprint(time.Now().UnixMilli())},
	}
}
