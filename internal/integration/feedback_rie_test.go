//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/feedback"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/metrics"
)

// TestFeedbackBootstrapUnderRuntimeInterfaceEmulator builds the feedback
// function's bootstrap as `make build` does (for this machine's
// architecture), runs it under the AWS Lambda Runtime Interface Emulator
// with the environment the template gives it, and invokes it with each SES
// event sample as EventBridge delivers it (testdata/ses-events): every event
// gives one JSON line on standard output, with the notification id, its
// event type and its EMF metric, and no recipient's address.
func TestFeedbackBootstrapUnderRuntimeInterfaceEmulator(t *testing.T) {
	t.Parallel()
	rie := filepath.Join(repoRoot, ".tools", "bin", "aws-lambda-rie")
	_, err := os.Stat(rie)
	require.NoError(t, err, "the emulator is installed by scripts/install-rie.sh (make test runs it)")

	dir := t.TempDir()
	bootstrap := filepath.Join(dir, "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bootstrap, "./functions/feedback")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	fn, err := localenv.StartRIE(rie, []string{bootstrap}, []string{
		"AWS_LAMBDA_FUNCTION_TIMEOUT=10", "AWS_LAMBDA_FUNCTION_NAME=feedback", "AWS_REGION=us-east-1",
		"HERALD_LOG_LEVEL=INFO",
	})
	require.NoError(t, err)
	t.Cleanup(fn.Stop)

	files, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "ses-events", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, len(feedback.EventTypes), "one sample per event type")
	for _, f := range files {
		payload, err := os.ReadFile(f)
		require.NoError(t, err)
		answer, err := fn.InvokeJSON(t.Context(), payload, 10*time.Second)
		require.NoError(t, err, f)
		require.Equal(t, "null", strings.TrimSpace(string(answer)), "%s: the handler returns nothing", f)
	}
	// Payloads the runtime could not decode into an EventBridge event (not
	// an object; a time that is not RFC 3339) succeed too, each logged
	// once as unreadable: a failed invocation would be retried and then
	// dead-lettered, failing the same way each time.
	unreadable := []string{`[1,2]`, `{"source":"aws.ses","time":"yesterday","detail":{"eventType":"Open"}}`}
	for _, payload := range unreadable {
		answer, err := fn.InvokeJSON(t.Context(), []byte(payload), 10*time.Second)
		require.NoError(t, err, payload)
		require.Equal(t, "null", strings.TrimSpace(string(answer)), "%s: not a failed invocation", payload)
	}

	// The function's lines, among the emulator's own. Their metrics are
	// timed by the samples' EventBridge time (2026-11-30T10:00Z and
	// after), checked against a clock shortly after that.
	sampleClock := time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)
	var got []map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for {
		got = got[:0]
		for _, l := range strings.Split(fn.Logs(), "\n") {
			if !strings.Contains(l, `"msg":"email_event"`) {
				continue
			}
			require.NoError(t, metrics.Validate([]byte(l), sampleClock), "the line is valid EMF: %s", l)
			var m map[string]any
			require.NoError(t, json.NewDecoder(bytes.NewReader([]byte(l))).Decode(&m))
			got = append(got, m)
		}
		// The emulator passes on the function's output as it comes: wait
		// for the unreadable payloads' lines too, not only the events'.
		unreadableLines := strings.Count(fn.Logs(), `"msg":"email_event_unreadable"`)
		if (len(got) >= len(files) && unreadableLines >= len(unreadable)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Len(t, got, len(files), "one line per event; logs:\n%s", fn.Logs())
	var types []string
	for _, m := range got {
		require.Equal(t, "welcome-jana.2026:1", m["id"], "the notification id, decoded from the herald-id tag")
		require.Equal(t, 1.0, m[feedback.MetricEmailEvents])
		types = append(types, m["event_type"].(string))
		if m["event_type"] == string(feedback.Bounced) {
			require.Equal(t, "Permanent", m["bounce_type"])
			require.Equal(t, []any{"mail.example.org"}, m["recipient_domains"])
		}
	}
	var want []string
	for _, k := range feedback.EventTypes {
		want = append(want, string(k.Type))
	}
	require.ElementsMatch(t, want, types)
	require.Equal(t, len(unreadable), strings.Count(fn.Logs(), `"msg":"email_event_unreadable"`), "each unreadable payload logged once")
	require.Empty(t, regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+`).FindAllString(fn.Logs(), -1),
		"no address in anything the function writes")
}
