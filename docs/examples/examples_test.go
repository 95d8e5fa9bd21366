//go:build integration

// Package examples_test runs the guide's Python samples
// (docs/endpoints-guide.md): the signed call to the endpoints API against a
// stand-in that checks the Signature Version 4 signature as API Gateway's
// AWS_IAM authorization computes it, and the raw SQS SendMessage of an
// event against the repository's SQS wire fake.
package examples_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/notification"
)

// python is an interpreter with botocore, boto3 and requests: LocalStack's
// own (scripts/local-up.sh installs it; make test-integration runs these
// tests).
var python = filepath.Join("..", "..", ".venv", "localstack", "bin", "python")

var creds = aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}

// env is a Python sample's environment: the example credentials and
// Region, no configuration files.
func env(t *testing.T, extra ...string) []string {
	dir := t.TempDir()
	return append([]string{
		"AWS_ACCESS_KEY_ID=" + creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + creds.SecretAccessKey, "AWS_DEFAULT_REGION=eu-west-1",
		"AWS_CONFIG_FILE=" + filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "none"),
		"AWS_EC2_METADATA_DISABLED=true", "PATH=/usr/bin:/bin",
	}, extra...)
}

// sigV4Valid reports whether r carries the Signature Version 4 signature
// of service execute-api in region with creds, over body: the signature is
// computed again over the headers it says it signed.
func sigV4Valid(t *testing.T, r *http.Request, body []byte, region string) bool {
	t.Helper()
	auth := r.Header.Get("Authorization")
	_, signed, ok := strings.Cut(auth, "SignedHeaders=")
	require.True(t, ok, "Authorization %q", auth)
	signed, _, _ = strings.Cut(signed, ",")
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	require.NoError(t, err)
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	require.NoError(t, err)
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	sum := sha256.Sum256(body)
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "execute-api", region, at))
	return again.Header.Get("Authorization") == auth
}

// TestPythonCreateEndpoint: create_endpoint.py posts the endpoint to
// /v1/endpoints signed for execute-api (the signature checks out over its
// body), prints the id and secret of the answer, and exits non-zero naming
// the field the API refused.
func TestPythonCreateEndpoint(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []map[string]any
	status := http.StatusCreated
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/endpoints" || !sigV4Valid(t, r, b, "eu-west-1") {
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"message":"The request signature we calculated does not match"}`)
			return
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		mu.Lock()
		bodies = append(bodies, m)
		code := status
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code == http.StatusBadRequest {
			_, _ = io.WriteString(w, `{"error":{"code":"invalid","field":"url","message":"must be an https URL"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"endpoint":{"id":"ep_01m921tccrt0eax58fafvapteh","tenant":"acme","kind":"webhook","url":"https://hooks.acme.example/herald","url_host":"hooks.acme.example","event_types":["invoice.*","customer.deleted"],"state":"enabled","version":1,"created_at":"2026-12-05T10:00:00Z","updated_at":"2026-12-05T10:00:00Z"},"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`)
	}))
	t.Cleanup(api.Close)

	run := func() (string, error) {
		cmd := exec.Command(python, filepath.Join("python", "create_endpoint.py"))
		cmd.Env = env(t, "HERALD_ENDPOINTS_API_URL="+api.URL+"/api/")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := run()
	require.NoError(t, err, out)
	require.Equal(t, "ep_01m921tccrt0eax58fafvapteh whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", out)
	require.Len(t, bodies, 1)
	require.Equal(t, map[string]any{"tenant": "acme", "url": "https://hooks.acme.example/herald", "description": "Acme's billing system",
		"event_types": []any{"invoice.*", "customer.deleted"}}, bodies[0])

	mu.Lock()
	status = http.StatusBadRequest
	mu.Unlock()
	out, err = run()
	require.Error(t, err)
	require.Contains(t, out, "400: {'code': 'invalid', 'field': 'url'")
}

// TestPythonSendEvent: send_event.py puts one event on the event queue
// with boto3's SendMessage; the body is an event the contract accepts.
func TestPythonSendEvent(t *testing.T) {
	t.Parallel()
	sq := sqstest.New(t)
	q := sq.URL() + "/123456789012/herald-event"
	sq.AddQueue(q, nil)
	cmd := exec.Command(python, filepath.Join("python", "send_event.py"))
	cmd.Env = env(t, "HERALD_EVENT_QUEUE_URL="+q, "AWS_ENDPOINT_URL="+sq.URL())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), out.String())
	require.True(t, strings.HasPrefix(out.String(), "sent evt_01jh7q3kz9 "), out.String())
	msgs := sq.Messages(q)
	require.Len(t, msgs, 1)
	m, err := notification.Parse([]byte(msgs[0].Body))
	require.NoError(t, err)
	require.Equal(t, notification.ChannelEvent, m.Channel)
	require.Equal(t, "acme", m.Event.Tenant)
	require.Equal(t, "invoice.paid", m.Event.Type)
}
