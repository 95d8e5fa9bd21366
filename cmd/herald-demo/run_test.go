package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/sestest"
	"github.com/heraldhq/herald/internal/sqstest"
	"github.com/heraldhq/herald/notification"
)

// casesDir is the samples make demo sends.
const casesDir = "../../testdata/cases"

// localStack is the demo's local stack as wire fakes: SQS with each
// channel's queue herald-CHANNEL (redrive policy of maxReceive receives)
// and its herald-CHANNEL-dlq, and SES v2 holding the template
// password-reset; the AWS_ENDPOINT_URL variables point at them. skip names
// queues left out. SQS's clock is simulated: an empty receive moves it on by
// its wait, so a retry's visibility timeout runs out without sleeping.
type localStack struct {
	sqs *sqstest.Server
	ses *sestest.Server
}

func setupStack(t *testing.T, maxReceive string, skip ...string) *localStack {
	sq := sqstest.New(t)
	sq.SetReceiveClock(time.Now(), 0)
	base := sq.URL() + "/123456789012/"
	for _, c := range notification.Channels {
		name := "herald-" + string(c)
		if !contains(skip, name+"-dlq") {
			sq.AddQueue(base+name+"-dlq", nil)
		}
		if !contains(skip, name) {
			attrs := map[string]string{"VisibilityTimeout": "30"}
			if maxReceive != "" {
				attrs["RedrivePolicy"] = `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:` + name + `-dlq","maxReceiveCount":` + maxReceive + `}`
			}
			sq.AddQueue(base+name, attrs)
		}
	}
	ses := sestest.New(t)
	ses.AddTemplate("password-reset")
	t.Setenv("AWS_ENDPOINT_URL", sq.URL())
	t.Setenv("AWS_ENDPOINT_URL_SESV2", ses.URL())
	t.Setenv("AWS_ENDPOINT_URL_SQS", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	t.Setenv("HERALD_LOCAL_STACK_STOPS", "")
	return &localStack{sqs: sq, ses: ses}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// runDemo runs the demo in process with the samples of dir.
func runDemo(t *testing.T, dir string, timeout time.Duration) (string, string, error) {
	t.Helper()
	var out bytes.Buffer
	logPath := filepath.Join(t.TempDir(), "logs", "deliver.log")
	err := run(&out, dir, "herald", "", logPath, "", timeout)
	return out.String(), logPath, err
}

// TestRunEveryNotificationMeetsItsFate: the demo of make demo, run against
// the wire fakes, sends every sample and its own two webhooks to their
// channels' queues, reports each fate as expected.tsv says, lists the dead
// letters with herald's reason, counts the mail SES accepted, writes the
// function's log lines, and purged the queues first.
func TestRunEveryNotificationMeetsItsFate(t *testing.T) {
	s := setupStack(t, "5")
	stale := s.sqs.URL() + "/123456789012/herald-webhook"
	s.sqs.Put(stale, `{"left":"from an earlier run"}`, time.Now(), nil)
	t.Setenv("HERALD_LOCAL_STACK_STOPS", "1")

	out, logPath, err := runDemo(t, casesDir, 5*time.Second)
	require.NoError(t, err, out)
	require.Contains(t, out, "herald demo: 17 notifications → herald-{email,webhook,chat} (maxReceiveCount 5, backoff 1 s doubling)")
	require.Contains(t, out, "Every notification met its expected fate.")
	require.NotContains(t, out, "NO, expected")
	lines := strings.Split(out, "\n")
	row := func(name string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, name+" ") {
				return strings.Join(strings.Fields(l), " ")
			}
		}
		t.Fatalf("no row for %s in\n%s", name, out)
		return ""
	}
	require.Equal(t, "email-welcome.json delivered on receive 1 yes", row("email-welcome.json"))
	require.Equal(t, "webhook-expired.json dropped (expired) yes", row("webhook-expired.json"))
	require.Equal(t, "poison-not-json.json dead-lettered (invalid_message) yes", row("poison-not-json.json"))
	require.Equal(t, "chat-teams-deploy.json delivered on receive 1 yes", row("chat-teams-deploy.json"))
	// Its retries' delays are jittered: the row names the class and the
	// receive it was delivered on.
	require.Regexp(t, `^webhook, fails twice retried [0-9s, ]+ \(webhook_http_5xx\); delivered on receive 3 yes$`, row("webhook, fails twice"))
	require.Equal(t, "webhook to 169.254.169.254 dead-lettered (webhook_blocked_destination) yes", row("webhook to 169.254.169.254"))
	require.Contains(t, out, "Dead-letter queues herald-email-dlq (3), herald-webhook-dlq (3), herald-chat-dlq (2) hold 8 messages; their herald.reason attribute says why:")
	require.Contains(t, out, "  poison-not-json.json         invalid_message\n      invalid message: invalid JSON", "each dead letter named as the fate table names it, herald's reason below")
	require.Contains(t, out, "  poison-unknown-channel.json  invalid_message\n", "a body naming no known channel goes to the first channel's queue")
	require.Contains(t, out, "This run sent 3 emails to the SES v2 emulator (it holds 3): open "+s.ses.URL()+"/ to read them (JSON at "+s.ses.URL()+"/store).")
	require.Contains(t, out, "(make demo stops the local stack when it ends")
	require.Contains(t, out, "Webhook receiver got 4 requests. The function's log lines: "+logPath)
	require.Len(t, s.ses.Emails(), 3)

	log, err := os.ReadFile(logPath)
	require.NoError(t, err)
	require.Contains(t, string(log), `"id":"demo-flaky-1","channel":"webhook","outcome":"delivered","receive_count":3`)
	for _, m := range s.sqs.Messages(stale) {
		require.NotContains(t, m.Body, "earlier run", "purged before the run")
	}
}
