//go:build integration

package integration

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
)

// TestCLIListenLoop is the README's "Watch webhooks arrive" against the
// local stack: `herald run --local-receivers` and `herald listen` with the
// signing secret of Secrets Manager herald/webhook-signing and the store
// table, as the env file gives them; the send line herald listen prints is
// run as printed. The first attempt is answered 503 (--fail-first 1) and
// retried; both attempts verify, and herald run says retry, then delivered.
func TestCLIListenLoop(t *testing.T) {
	c := setupCLI(t, 5)
	awsCfg, err := app.AWSConfig(c.ctx)
	require.NoError(t, err)
	secret, err := secretsmanager.NewFromConfig(awsCfg).DescribeSecret(c.ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String("herald/webhook-signing")})
	require.NoError(t, err, "scripts/local-up.sh provisions herald/webhook-signing")
	delete(c.vars, "HERALD_WEBHOOK_SECRET")
	delete(c.vars, "HERALD_WEBHOOK_ALLOW_HTTP")
	delete(c.vars, "HERALD_WEBHOOK_ALLOW_CIDRS")
	c.vars["HERALD_WEBHOOK_SECRET_ARN"] = aws.ToString(secret.ARN)
	c.vars["HERALD_STORE_TABLE"] = "herald-store"

	start := func(args ...string) (*exec.Cmd, *lockedBuffer, *lockedBuffer, chan error) {
		cmd := c.command(args...)
		var out, errOut lockedBuffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
			}
			if t.Failed() {
				t.Logf("herald %v stdout:\n%s\nstderr:\n%s", args, out.String(), errOut.String())
			}
		})
		return cmd, &out, &errOut, done
	}
	listen, listenOut, listenErr, listenDone := start("listen", "--port", "0", "--json", "--fail-first", "1")
	waitFor(t, 30*time.Second, "herald listen started", func() bool { return strings.Contains(listenErr.String(), "Ctrl-C to stop") })
	var listening struct{ URL string }
	first, _, _ := strings.Cut(listenOut.String(), "\n")
	require.NoError(t, json.Unmarshal([]byte(first), &listening), first)
	require.Contains(t, listenErr.String(), "the signing secret(s) of HERALD_WEBHOOK_SECRET_ARN "+aws.ToString(secret.ARN))
	require.Contains(t, listenErr.String(), "the origin's key versions in the store table")

	run, runOut, runErr, runDone := start("run", "--wait", "1s", "--local-receivers")
	waitFor(t, 30*time.Second, "herald run started", func() bool { return strings.Contains(runErr.String(), "Ctrl-C to stop") })

	// The send line, as printed: it names this herald and the listener's URL.
	send := regexp.MustCompile(`(?m)^printf .* send -$`).FindString(listenErr.String())
	require.NotEmpty(t, send, listenErr.String())
	require.Contains(t, send, listening.URL)
	sh := c.command()
	sh.Path, sh.Args = "/bin/sh", []string{"/bin/sh", "-c", send}
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	id := regexp.MustCompile(`listen-\d+`).FindString(string(out))
	require.NotEmpty(t, id, "herald send prints the id: %s", out)

	type line struct {
		WebhookID    string `json:"webhook_id"`
		EventType    string `json:"event_type"`
		Attempt      int
		Verified     bool
		VerifiedWith string `json:"verified_with"`
		Reason       string
		Status       int
	}
	deliveries := func() []line {
		var ls []line
		sc := bufio.NewScanner(strings.NewReader(listenOut.String()))
		for sc.Scan() {
			var l line
			require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
			if l.WebhookID == id {
				ls = append(ls, l)
			}
		}
		return ls
	}
	waitFor(t, 60*time.Second, "two attempts", func() bool { return len(deliveries()) == 2 })
	for i, l := range deliveries() {
		require.True(t, l.Verified, "attempt %d: %s", i+1, l.Reason)
		require.Equal(t, "key version 1", l.VerifiedWith)
		require.Equal(t, "listen.test", l.EventType)
		require.Equal(t, i+1, l.Attempt)
		require.Equal(t, map[int]int{0: 503, 1: 200}[i], l.Status)
	}
	waitFor(t, 30*time.Second, "herald run: delivered", func() bool { return strings.Contains(runOut.String(), "delivered") })
	require.Regexp(t, id+`\s+webhook\s+retry\s+receive 1\s+in \d+s\s+webhook_http_5xx: .*herald listen: answered 503 \(--fail-first 1, attempt 1\)`, runOut.String())
	require.Regexp(t, id+`\s+webhook\s+delivered\s+receive 2`, runOut.String())

	// A request the Python reference library signs with the key `herald
	// secret derive` prints for this URL verifies; changed, it does not.
	derived := c.herald("", "secret", "derive", listening.URL)
	require.Equal(t, 0, derived.code, "%+v", derived)
	body := `{"type":"py.signed","timestamp":"2026-12-01T00:00:00Z","data":{"n":1}}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	py := exec.Command(filepath.Join(repoRoot, ".venv", "verify", "bin", "python"), "-c",
		"import sys, datetime; from standardwebhooks.webhooks import Webhook; "+
			"print(Webhook(sys.argv[1]).sign(sys.argv[2], datetime.datetime.fromtimestamp(int(sys.argv[3]), tz=datetime.timezone.utc), sys.argv[4]))",
		strings.TrimSpace(derived.stdout), "msg_py_1", ts, body)
	sigOut, err := py.CombinedOutput()
	require.NoError(t, err, "the Python reference library (scripts/install-verifiers.sh): %s", sigOut)
	for _, b := range []string{body, strings.Replace(body, `"n":1`, `"n":2`, 1)} {
		req, err := http.NewRequest(http.MethodPost, listening.URL, strings.NewReader(b))
		require.NoError(t, err)
		req.Header.Set("webhook-id", "msg_py_1")
		req.Header.Set("webhook-timestamp", ts)
		req.Header.Set("webhook-signature", strings.TrimSpace(string(sigOut)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	// herald listen prints a line before it answers, but the line reaches
	// listenOut through the pipe's copier, which may come later.
	var py1, py2 line
	waitFor(t, 10*time.Second, "both lines of msg_py_1 printed", func() bool {
		for _, raw := range strings.Split(strings.TrimSpace(listenOut.String()), "\n") {
			var l line
			if json.Unmarshal([]byte(raw), &l) != nil {
				continue // a line still being copied
			}
			if l.WebhookID == "msg_py_1" && l.Attempt == 1 {
				py1 = l
			}
			if l.WebhookID == "msg_py_1" && l.Attempt == 2 {
				py2 = l
			}
		}
		return py1.Attempt == 1 && py2.Attempt == 2
	})
	require.True(t, py1.Verified, "%+v", py1)
	require.Equal(t, "py.signed", py1.EventType)
	require.False(t, py2.Verified, "%+v", py2)
	require.Contains(t, py2.Reason, "no webhook-signature matches")

	for _, p := range []struct {
		cmd  *exec.Cmd
		done chan error
	}{{listen, listenDone}, {run, runDone}} {
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
		select {
		case err := <-p.done:
			require.NoError(t, err, "%v exits 0 on Ctrl-C", p.cmd.Args)
		case <-time.After(40 * time.Second):
			t.Fatalf("%v did not stop after SIGINT", p.cmd.Args)
		}
	}
	require.Contains(t, listenErr.String(), "herald listen: stopped")
}
