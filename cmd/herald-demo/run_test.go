package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/sestest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
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
	for _, c := range demoChannels() {
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
	var names []string // the fate table's first column, in order
	for _, l := range lines[3:] {
		if l == "" {
			break
		}
		names = append(names, strings.SplitN(l, "  ", 2)[0])
	}
	require.Len(t, names, 17)
	require.True(t, slices.IsSorted(names), "rows sorted by name: %q", names)
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
	// It reads the dead letters hiding each for 5 s only, so that they are
	// soon back for herald dlq or the next run.
	dlqReads := 0
	for _, raw := range s.sqs.Requests("ReceiveMessage") {
		var in struct {
			QueueUrl          string
			VisibilityTimeout *int
		}
		if json.Unmarshal(raw, &in) != nil {
			continue // a runner's receive cut short when the run stopped it
		}
		if strings.HasSuffix(in.QueueUrl, "-dlq") {
			dlqReads++
			require.NotNil(t, in.VisibilityTimeout, in.QueueUrl)
			require.Equal(t, 5, *in.VisibilityTimeout, in.QueueUrl)
		}
	}
	require.GreaterOrEqual(t, dlqReads, 3, "each channel's dead-letter queue read")
	for _, m := range s.sqs.Messages(stale) {
		require.NotContains(t, m.Body, "earlier run", "purged before the run")
	}
}

// TestRunFailures: run stops with an error naming what is missing or
// broken, before it sends anything when the stack or the samples are not
// there.
func TestRunFailures(t *testing.T) {
	noTSV := t.TempDir()
	missingFile := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(missingFile, "expected.tsv"), []byte("file\toutcome\nnot-there.json\tdelivered\n"), 0o644))
	for _, tc := range []struct {
		name       string
		maxReceive string
		skip       []string
		dir        string
		prepare    func(t *testing.T, s *localStack)
		want       string
	}{
		{name: "no channel queue", maxReceive: "5", skip: []string{"herald-chat"}, want: "queue herald-chat (is the local stack provisioned? run make local-up)"},
		{name: "no dead-letter queue", maxReceive: "5", skip: []string{"herald-webhook-dlq"}, want: "queue herald-webhook-dlq (is the local stack provisioned? run make local-up)"},
		{name: "no redrive policy", want: "redrive policy of "},
		{name: "maxReceiveCount 0", maxReceive: "0", want: "MaxReceiveCount 0"},
		{name: "no expected.tsv", maxReceive: "5", dir: noTSV, want: "expected.tsv: no such file"},
		{name: "a listed sample missing", maxReceive: "5", dir: missingFile, want: "not-there.json: no such file"},
		{name: "purge refused", maxReceive: "5", prepare: func(_ *testing.T, s *localStack) { s.sqs.FailAction("PurgeQueue") }, want: "purge http://"},
		{name: "send refused", maxReceive: "5", prepare: func(_ *testing.T, s *localStack) { s.sqs.FailAction("SendMessage") }, want: "send email-"},
		{name: "remote endpoint", maxReceive: "5", prepare: func(t *testing.T, _ *localStack) {
			t.Setenv("AWS_ENDPOINT_URL_SESV2", "https://email.us-east-1.amazonaws.com")
		}, want: "AWS_ENDPOINT_URL_SESV2 points at https://email.us-east-1.amazonaws.com, not this machine"},
		{name: "no such profile", maxReceive: "5", prepare: func(t *testing.T, _ *localStack) { t.Setenv("AWS_PROFILE", "no-such-profile") }, want: "load AWS config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := setupStack(t, tc.maxReceive, tc.skip...)
			if tc.prepare != nil {
				tc.prepare(t, s)
			}
			dir := casesDir
			if tc.dir != "" {
				dir = tc.dir
			}
			out, _, err := runDemo(t, dir, 10*time.Second)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, out, "Every notification met its expected fate.")
			for _, c := range demoChannels() {
				u := s.sqs.URL() + "/123456789012/herald-" + string(c)
				if !contains(tc.skip, "herald-"+string(c)) && tc.name != "send refused" {
					require.Empty(t, s.sqs.Messages(u), "nothing sent")
				}
			}
		})
	}
}

// TestRunLogPathUnwritable: a log path whose folder cannot be made, or that
// is a folder, fails the run before anything is sent.
func TestRunLogPathUnwritable(t *testing.T) {
	s := setupStack(t, "5")
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, logPath := range []string{filepath.Join(file, "sub", "deliver.log"), t.TempDir()} {
		err := run(&bytes.Buffer{}, casesDir, "herald", "", logPath, "", 10*time.Second)
		require.Error(t, err, logPath)
		require.Empty(t, s.sqs.Messages(s.sqs.URL()+"/123456789012/herald-email"), logPath)
	}
}

// TestRunSESUnreachable: with SES down every email is retried until the
// timeout, the run reports the emails as not delivered and fails, and says
// nothing of the mail sent (the emulator's store cannot be read).
func TestRunSESUnreachable(t *testing.T) {
	s := setupStack(t, "1000")
	t.Setenv("AWS_ENDPOINT_URL_SESV2", "http://127.0.0.1:1")
	out, _, err := runDemo(t, casesDir, time.Second)
	require.EqualError(t, err, "some notifications did not meet their expected fate")
	require.Regexp(t, `email-welcome.json +retried [0-9s, ]+ \(ses_network\); [a-z]+ +NO, expected: delivered\n`, out)
	require.Contains(t, out, "webhook-invoice-paid.json            delivered on receive 1")
	require.NotContains(t, out, "emails to the SES v2 emulator")
	require.Contains(t, out, "Webhook receiver got")
	require.Empty(t, s.ses.Emails())
}

// deployedFakes answer, in their wire formats, what run asks of a stack
// deployed into the local stack: CloudFormation's DescribeStacks (query
// protocol, XML) with outputs, and Lambda's GetFunctionConfiguration
// (REST-JSON); Lambda refuses UpdateFunctionConfiguration with a 500
// ServiceException.
type deployedFakes struct {
	outputs map[string]string // nil: no such stack
	env     map[string]string // nil: no such function
	updates int
	// updated is the environment of the last UpdateFunctionConfiguration.
	updated map[string]string
}

func (d *deployedFakes) start(t *testing.T) {
	cfn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "text/xml")
		if r.Form.Get("Action") != "DescribeStacks" || d.outputs == nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id %s does not exist</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`, r.Form.Get("StackName"))
			return
		}
		var outs strings.Builder
		for k, v := range d.outputs {
			fmt.Fprintf(&outs, "<member><OutputKey>%s</OutputKey><OutputValue>%s</OutputValue></member>", k, v)
		}
		fmt.Fprintf(w, `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member><StackName>%s</StackName><StackStatus>CREATE_COMPLETE</StackStatus><CreationTime>2026-12-01T00:00:00Z</CreationTime><Outputs>%s</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r-2</RequestId></ResponseMetadata></DescribeStacksResponse>`, r.Form.Get("StackName"), outs.String())
	}))
	t.Cleanup(cfn.Close)
	lam := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPut:
			d.updates++
			var in struct {
				Environment struct{ Variables map[string]string }
			}
			_ = json.NewDecoder(r.Body).Decode(&in)
			d.updated = in.Environment.Variables
			w.Header().Set("X-Amzn-ErrorType", "ServiceException")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"message":"injected"}`)
		case d.env == nil:
			w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"Type":"User","message":"Function not found"}`)
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"FunctionName": "deliver-fn", "Environment": map[string]any{"Variables": d.env}})
		}
	}))
	t.Cleanup(lam.Close)
	t.Setenv("AWS_ENDPOINT_URL_CLOUDFORMATION", cfn.URL)
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", lam.URL)
}

// TestRunDeployedStackFailures: through a deployed stack, run needs the
// stack, its three outputs and its function, and stops when the function
// cannot be given the demo's settings, having tried to put its deployed
// environment back.
func TestRunDeployedStackFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fakes   deployedFakes
		want    string
		updates int
	}{
		{name: "no stack", want: "stack herald-local (deploy it with make deploy-local)"},
		{name: "no outputs", fakes: deployedFakes{outputs: map[string]string{"DeadLetterQueueUrl": "x", "DeliverFunctionName": "f"}}, want: "stack herald-local lacks the outputs"},
		{name: "no dead-letter output", fakes: deployedFakes{outputs: map[string]string{"NotificationQueueUrl": "x", "DeliverFunctionName": "f"}}, want: "stack herald-local lacks the outputs"},
		{name: "no function output", fakes: deployedFakes{outputs: map[string]string{"NotificationQueueUrl": "x", "DeadLetterQueueUrl": "y"}}, want: "stack herald-local lacks the outputs"},
		{name: "no function", fakes: deployedFakes{outputs: map[string]string{}}, want: "ResourceNotFoundException"},
		{name: "configure refused", fakes: deployedFakes{env: map[string]string{"HERALD_LOG_LEVEL": "INFO", "HERALD_STORE_TABLE": "t-1"}}, want: "configure deliver-fn", updates: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := setupStack(t, "5")
			base := s.sqs.URL() + "/123456789012/"
			if tc.fakes.outputs != nil && len(tc.fakes.outputs) == 0 || tc.fakes.env != nil {
				tc.fakes.outputs = map[string]string{"NotificationQueueUrl": base + "herald-email", "DeadLetterQueueUrl": base + "herald-email-dlq", "DeliverFunctionName": "deliver-fn"}
			}
			tc.fakes.start(t)
			var out bytes.Buffer
			logPath := filepath.Join(t.TempDir(), "deliver.log")
			err := run(&out, casesDir, "ignored", "", logPath, "herald-local", 10*time.Second)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, tc.updates, tc.fakes.updates, "the demo's settings only: the deployed ones were never replaced")
			if tc.updates > 0 {
				require.Contains(t, out.String(), "herald demo: 17 notifications → herald-email of stack herald-local, delivered by its function deliver-fn")
				pem, err := os.ReadFile(filepath.Join(filepath.Dir(logPath), "demo-receivers.pem"))
				require.NoError(t, err)
				require.Contains(t, string(pem), "-----BEGIN CERTIFICATE-----")
				require.Empty(t, s.sqs.Messages(base+"herald-email"), "nothing sent")
				require.Equal(t, "t-1", tc.fakes.updated["HERALD_STORE_TABLE"], "the deployed environment kept")
				require.Equal(t, "DEBUG", tc.fakes.updated["HERALD_LOG_LEVEL"], "with the demo's settings over it")
			}
		})
	}
}
