package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

type result struct {
	code           int
	stdout, stderr string
}

// herald runs the command in-process with no environment variables.
func herald(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" },
		now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	code := execute(context.Background(), e, args)
	return result{code, out.String(), errOut.String()}
}

func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{}, {"--help"}, {"send", "--help"}, {"run", "--help"}, {"dlq"}, {"dlq", "--help"}, {"dlq", "ls", "--help"},
		{"dlq", "show", "--help"}, {"dlq", "redrive", "--help"}, {"secret", "--help"}, {"secret", "new", "--help"}, {"verify", "--help"},
		{"secret", "derive", "--help"}, {"resume", "--help"}, {"email"}, {"email", "--help"}, {"email", "events", "--help"}} {
		r := herald(t, "", args...)
		require.Equal(t, exitOK, r.code, "%v: %+v", args, r)
		require.Contains(t, r.stdout, "Usage:", args)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, "unknown command"},
		{[]string{"dlq", "bogus"}, "unknown command"},
		{[]string{"dlq", "ls", "--bogus"}, "unknown flag"},
		{[]string{"send"}, "needs FILE"},
		{[]string{"send", "--group"}, "flag needs an argument"},
		{[]string{"dlq", "show"}, "needs one ID"},
		{[]string{"dlq", "redrive"}, "choose what to redrive"},
		{[]string{"dlq", "redrive", "--all", "--id", "x"}, "cannot be combined"},
		{[]string{"dlq", "ls", "--older-than", "soon"}, "--older-than"},
		{[]string{"dlq", "ls", "--channel", "sms"}, "--channel"},
		{[]string{"dlq", "ls", "--hold", "13h"}, "--hold"},
		{[]string{"dlq", "ls"}, "no dead-letter queue"},
		{[]string{"send", "../../testdata/cases/email-welcome.json"}, "no notification queue"},
		{[]string{"run"}, "no notification queue"},
		{[]string{"secret", "new", "extra"}, "takes no arguments"},
		{[]string{"verify", "--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "--body, --id, --signature, --timestamp"},
		{[]string{"verify", "--secret", "nope", "--id", "i", "--timestamp", "1", "--signature", "s", "--body", "-"}, "whsec_"},
		{[]string{"verify", "--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "--id", "i", "--timestamp", "yesterday", "--signature", "s", "--body", "-"}, "Unix seconds"},
		{[]string{"verify", "--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "--id", "i", "--timestamp", "1", "--signature", "s", "--body", "-", "--tolerance", "-5m"}, "--tolerance"},
	} {
		r := herald(t, "", tc.args...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
}

func TestSendDryRunValidatesWithFieldPaths(t *testing.T) {
	t.Parallel()
	good := "../../testdata/cases/email-welcome.json"
	bad := "../../testdata/cases/poison-wrong-types.json"
	r := herald(t, "", "send", "--dry-run", good)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Regexp(t, `(?m)^SOURCE\s+ID\s+SQS MESSAGE ID$`, r.stdout)
	require.Contains(t, r.stdout, "valid (dry run)")

	r = herald(t, "", "send", "--dry-run", good, bad)
	require.Equal(t, exitFailed, r.code)
	require.Contains(t, r.stderr, "invalid: "+bad+": email.to: must be an array, not a JSON number")
	require.Contains(t, r.stderr, "nothing sent (a dry run)")
	require.NotContains(t, r.stderr, "--skip-invalid", "a dry run sends nothing either way")

	// Chat notifications: each service, and one over Discord's limit.
	r = herald(t, "", "send", "--dry-run", "../../testdata/cases/chat-slack-deploy.json", "../../testdata/cases/chat-discord-deploy.json", "../../testdata/cases/chat-teams-deploy.json")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Equal(t, 3, strings.Count(r.stdout, "valid (dry run)"), r.stdout)
	r = herald(t, "", "send", "--dry-run", "../../testdata/cases/poison-chat-embeds-with-slack.json")
	require.Equal(t, exitFailed, r.code)
	require.Contains(t, r.stderr, `chat.embeds: only with service "discord"`)
	require.NotContains(t, r.stderr+r.stdout, "XXXXXXXXXXXXXXXXXXXXXXXX", "no webhook URL path in the output")

	// NDJSON: blank lines skipped, sources are line numbers.
	stdin := `{"version":1,"id":"a","channel":"webhook","webhook":{"url":"https://h.example/x","event_type":"a.b","payload":1}}` + "\n\n" +
		`{"version":1,"id":"b","channel":"webhook","webhook":{"url":"https://h.example/x","event_type":"a b","payload":1}}` + "\n"
	r = herald(t, stdin, "send", "--dry-run", "--skip-invalid", "--json", "-")
	require.Equal(t, exitFailed, r.code, "an invalid notification fails the command even with --skip-invalid")
	require.Contains(t, r.stderr, "-:3: webhook.event_type")
	var rows []sendRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Equal(t, []sendRow{
		{Source: "-:3", ID: "b", Outcome: outcomeInvalid, Error: rows[0].Error, Invalid: true},
		{Source: "-:1", ID: "a", Outcome: outcomeDryRun},
	}, rows)
	require.Contains(t, rows[0].Error, "webhook.event_type")

	// The same as a table: the invalid one is listed and still fails the
	// command.
	r = herald(t, stdin, "send", "--dry-run", "--skip-invalid", "-")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Regexp(t, `(?m)^-:1 +a +valid \(dry run\)$`, r.stdout)
}

func TestReadInputsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "n.json")
	require.NoError(t, os.WriteFile(f, []byte("\n  {\"id\":\"x\"}\n\n"), 0o600))
	in, err := readInputs([]string{f, "-"}, strings.NewReader("{\"id\":\"y\"}\r\n"))
	require.NoError(t, err)
	require.Equal(t, []input{{source: f, body: []byte(`{"id":"x"}`)}, {source: "-:1", body: []byte(`{"id":"y"}`)}}, in)
	_, err = readInputs([]string{filepath.Join(dir, "missing.json")}, nil)
	require.Error(t, err)
}

// A line of standard input may be as long as the SQS maximum message size
// (notification.SQSMaxMessageBytes), newline aside; one byte more is refused
// with its line number.
func TestReadInputsLineAtTheSQSLimit(t *testing.T) {
	t.Parallel()
	longest := strings.Repeat("x", notification.SQSMaxMessageBytes)
	in, err := readInputs([]string{"-"}, strings.NewReader("{}\n"+longest+"\n"))
	require.NoError(t, err)
	require.Len(t, in, 2)
	require.Equal(t, "-:2", in[1].source)
	require.Len(t, in[1].body, notification.SQSMaxMessageBytes)

	_, err = readInputs([]string{"-"}, strings.NewReader("{}\n"+longest+"x\n"))
	require.EqualError(t, err, fmt.Sprintf("-:2: line longer than %d bytes, the SQS maximum message size; nothing sent", notification.SQSMaxMessageBytes))
}

func TestSecretNew(t *testing.T) {
	t.Parallel()
	r := herald(t, "", "secret", "new")
	require.Equal(t, exitOK, r.code)
	key, err := webhook.DecodeSecret(strings.TrimSpace(r.stdout))
	require.NoError(t, err)
	require.Len(t, key, webhook.SecretKeyBytes)

	r = herald(t, "", "secret", "new", "--json")
	var out map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.True(t, strings.HasPrefix(out["secret"], "whsec_"))
}

func TestVerify(t *testing.T) {
	t.Parallel()
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	key, _ := webhook.DecodeSecret(secret)
	now := time.Unix(1_800_000_000, 0)
	body := `{"type":"a.b"}`
	sig := webhook.Sign(key, "msg_1", now, []byte(body))
	ts := strconv.FormatInt(now.Unix(), 10)

	r := herald(t, body, "verify", "--secret", webhook.NewSecret()+" "+secret, "--id", "msg_1", "--timestamp", ts, "--signature", sig, "--body", "-")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Equal(t, "valid\n", r.stdout)

	r = herald(t, body+" ", "verify", "--secret", secret, "--id", "msg_1", "--timestamp", ts, "--signature", sig, "--body", "-", "--json")
	require.Equal(t, exitFailed, r.code)
	var out struct {
		Valid bool
		Error string
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.False(t, out.Valid)
	require.Contains(t, out.Error, "no webhook-signature matches")

	old := strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10)
	r = herald(t, body, "verify", "--secret", secret, "--id", "msg_1", "--timestamp", old, "--signature", webhook.Sign(key, "msg_1", now.Add(-10*time.Minute), []byte(body)), "--body", "-")
	require.Equal(t, exitFailed, r.code)
	require.Contains(t, r.stdout, "webhook-timestamp too far from now")

	// A tolerance of 0 is allowed: the timestamp must then be now.
	r = herald(t, body, "verify", "--secret", secret, "--id", "msg_1", "--timestamp", ts, "--signature", sig, "--body", "-", "--tolerance", "0s")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Equal(t, "valid\n", r.stdout)
}

func TestTable(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, table(&b, []string{"ID", "CLASS", "NOTE"}, [][]string{{"a-long-id", "", "x"}, {"b", "webhook_gone", "two\nlines\tand tab"}}))
	require.Equal(t, ""+
		"ID         CLASS         NOTE\n"+
		"a-long-id  -             x\n"+
		"b          webhook_gone  two lines and tab\n", b.String())
}

func TestAgeAndParseAge(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{0: "-", 45 * time.Second: "45s", 12 * time.Minute: "12m", time.Hour: "1h0m", 59 * time.Second: "59s", time.Minute: "1m", 3*time.Hour + 20*time.Minute: "3h20m", 52 * time.Hour: "2d4h",
		24*time.Hour - time.Minute: "23h59m", 24 * time.Hour: "1d0h", -time.Second: "-"} {
		require.Equal(t, want, age(d))
	}
	for s, want := range map[string]time.Duration{"90m": 90 * time.Minute, "36h": 36 * time.Hour, "7d": 7 * 24 * time.Hour, "0d": 0, "1h30m": 90 * time.Minute, "0s": 0} {
		got, err := parseAge(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "7", "d", "-1h", "1.5d", "7days", "x7d"} {
		_, err := parseAge(s)
		require.Error(t, err, s)
	}
}

func TestFormatRecord(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 10, 0, 5, 0, time.Local).Format(time.RFC3339Nano)
	line := fmt.Sprintf(`{"time":%q,"level":"WARN","msg":"notification","id":"evt-1","channel":"webhook","outcome":"retry","receive_count":2,"sqs_message_id":"m","delay_seconds":4,"error_class":"webhook_http_5xx","error":"503"}`, at)
	require.Equal(t, "10:00:05  evt-1                    webhook  retry          receive 2  in 4s  webhook_http_5xx: 503", formatRecord([]byte(line)))
	line = fmt.Sprintf(`{"time":%q,"level":"INFO","msg":"notification","channel":"email","outcome":"delivered","receive_count":1}`, at)
	require.Equal(t, "10:00:05  (no id)                  email    delivered      receive 1", formatRecord([]byte(line)))
	line = fmt.Sprintf(`{"time":%q,"level":"WARN","msg":"batch","_aws":{},"channel":"webhook","outcome":"dead_lettered","error_class":"webhook_gone","Notifications":1}`, at)
	require.Empty(t, formatRecord([]byte(line)), "a batch's metrics line names channel and outcome too, but is not a record: herald run does not print it")
	line = fmt.Sprintf(`{"time":%q,"level":"INFO","msg":"fanout","id":"evt_1","tenant":"acme","event_type":"invoice.paid","fanout":"fanned_out","total":24,"_aws":{}}`, at)
	require.Equal(t, "10:00:05  evt_1                    fan-out  fanned_out     24 deliveries enqueued", formatRecord([]byte(line)), "an event's fan-out line")
	line = fmt.Sprintf(`{"time":%q,"msg":"batch","channel":"webhook","outcome":"delivered","Notifications":2,"delivered":[{"id":"evt-2","ms":3.5},{"id":"evt-3","ms":4}]}`, at)
	require.Equal(t, "10:00:05  evt-2                    webhook  delivered      receive 1\n10:00:05  evt-3                    webhook  delivered      receive 1", formatRecord([]byte(line)), "a batch line's deliveries are records")
	line = fmt.Sprintf(`{"time":%q,"level":"ERROR","msg":"cold start"}`, at)
	require.Equal(t, "10:00:05  ERROR  cold start", formatRecord([]byte(line)))
	require.Equal(t, "not json", formatRecord([]byte("not json\n")))
}

func TestEndpointOfShowsHostOnly(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AWS_ENDPOINT_URL": "http://u:p@127.0.0.1:4566/x?y=z", "AWS_ENDPOINT_URL_SESV2": "http://127.0.0.1:8005"}
	get := func(k string) string { return env[k] }
	require.Equal(t, "http://127.0.0.1:4566", endpointOf(get, "SQS"))
	require.Equal(t, "http://127.0.0.1:8005", endpointOf(get, "SESV2"))
	require.Equal(t, "AWS", endpointOf(func(string) string { return "" }, "SQS"))
}

// cfnWire answers CloudFormation DescribeStacks in its query protocol (XML),
// as the real service does, for one stack.
func cfnWire(t *testing.T, stack string, outputs map[string]string) *cloudformation.Client {
	t.Helper()
	return cloudformation.New(cloudformation.Options{BaseEndpoint: aws.String(cfnURL(t, stack, outputs)), Region: "us-east-1", Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1})
}

// cfnURL is cfnWire's server, for a client the command builds itself
// (AWS_ENDPOINT_URL_CLOUDFORMATION).
func cfnURL(t *testing.T, stack string, outputs map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "text/xml")
		if r.Form.Get("Action") != "DescribeStacks" || r.Form.Get("StackName") != stack {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id %s does not exist</Message></Error><RequestId>r</RequestId></ErrorResponse>`, r.Form.Get("StackName"))
			return
		}
		var b strings.Builder
		for k, v := range outputs {
			fmt.Fprintf(&b, "<member><OutputKey>%s</OutputKey><OutputValue>%s</OutputValue></member>", k, v)
		}
		fmt.Fprintf(w, `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member><StackName>%s</StackName><StackStatus>CREATE_COMPLETE</StackStatus><CreationTime>2026-11-01T00:00:00Z</CreationTime><Outputs>%s</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeStacksResponse>`, stack, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestResolveQueues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfn := cfnWire(t, "herald-prod", map[string]string{
		"EmailQueueUrl": "https://sqs/e", "EmailDeadLetterQueueUrl": "https://sqs/e-dlq",
		"WebhookQueueUrl": "https://sqs/w", "WebhookDeadLetterQueueUrl": "https://sqs/w-dlq",
		outputQueueURL: "https://sqs/q", outputDLQURL: "https://sqs/dlq", "Other": "x",
	})
	api := func() (stackOutputs, error) { return cfn, nil }
	env := map[string]string{
		"HERALD_QUEUE_URL": "https://env/q", "HERALD_DLQ_URL": "https://env/dlq",
		"HERALD_WEBHOOK_QUEUE_URL": "https://env/w", "HERALD_WEBHOOK_DLQ_URL": "https://env/w-dlq",
		"HERALD_EVENT_QUEUE_URL": "https://env/ev", "HERALD_EVENT_DLQ_URL": "https://env/ev-dlq",
	}
	get := func(k string) string { return env[k] }
	none := func(string) string { return "" }

	q, err := resolveQueues(ctx, &globals{}, get, api, true, true)
	require.NoError(t, err)
	require.Equal(t, []queuePair{{channel: "webhook", url: "https://env/w", dlq: "https://env/w-dlq"}, {channel: "event", url: "https://env/ev", dlq: "https://env/ev-dlq"}, {url: "https://env/q", dlq: "https://env/dlq"}}, q.pairs)
	byChannel, shared := q.producer()
	require.Equal(t, map[notification.Channel]string{"webhook": "https://env/w", "event": "https://env/ev"}, byChannel, "events go to the event queue (HERALD_EVENT_QUEUE_URL)")
	require.Equal(t, "https://env/q", shared)

	q, err = resolveQueues(ctx, &globals{stack: "herald-prod"}, get, api, true, true)
	require.NoError(t, err)
	require.Equal(t, []queuePair{
		{channel: "email", url: "https://sqs/e", dlq: "https://sqs/e-dlq"},
		{channel: "webhook", url: "https://sqs/w", dlq: "https://sqs/w-dlq"},
		{url: "https://sqs/q", dlq: "https://sqs/dlq"},
	}, q.pairs, "--stack wins over the environment: every channel's outputs, and the queue of every channel's")

	q, err = resolveQueues(ctx, &globals{stack: "herald-prod", queueURL: "https://flag/q"}, get, api, true, true)
	require.NoError(t, err)
	require.Equal(t, []queuePair{{url: "https://flag/q", dlq: "https://env/dlq"}}, q.pairs, "a flag names the one queue, of every channel")

	_, err = resolveQueues(ctx, &globals{stack: "nope"}, none, api, true, true)
	require.ErrorContains(t, err, "does not exist")

	_, err = resolveQueues(ctx, &globals{}, none, api, false, true)
	var ue usageError
	require.ErrorAs(t, err, &ue)
	require.ErrorContains(t, err, "HERALD_<CHANNEL>_DLQ_URL")
	_, err = resolveQueues(ctx, &globals{}, none, api, false, false)
	require.NoError(t, err)

	other := cfnWire(t, "other", map[string]string{"Foo": "x"})
	_, err = resolveQueues(ctx, &globals{stack: "other"}, none, func() (stackOutputs, error) { return other, nil }, true, false)
	require.ErrorContains(t, err, "is it a herald stack?")
}

func TestSendRefusesARepeatedID(t *testing.T) {
	t.Parallel()
	line := `{"version":1,"id":"a","channel":"webhook","webhook":{"url":"https://h.example/x","event_type":"a.b","payload":%d}}`
	stdin := fmt.Sprintf(line, 1) + "\n" + fmt.Sprintf(line, 2) + "\n"
	r := herald(t, stdin, "send", "--dry-run", "-")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "invalid: -:2: id: repeats notification 1's id")
	require.Contains(t, r.stderr, "nothing sent")
	r = herald(t, stdin, "send", "--dry-run", "--skip-invalid", "--json", "-")
	require.Equal(t, exitFailed, r.code)
	var rows []sendRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Equal(t, []sendRow{{Source: "-:2", ID: "a", Outcome: outcomeInvalid, Error: rows[0].Error, Invalid: true}, {Source: "-:1", ID: "a", Outcome: outcomeDryRun}}, rows)
}

// A day count whose duration does not fit time.Duration must be refused,
// not wrapped: 106752d wrapped to a negative age, which the filter reads as
// "any age", so `dlq redrive --older-than 106752d` chose every dead letter.
func TestParseAgeRefusesDaysBeyondDuration(t *testing.T) {
	t.Parallel()
	got, err := parseAge("106751d")
	require.NoError(t, err)
	require.Positive(t, got)
	for _, s := range []string{"106752d", "300000d", "999999999d", "99999999999999999999d"} {
		_, err := parseAge(s)
		require.Error(t, err, s)
	}
	r := herald(t, "", "dlq", "redrive", "--older-than", "106752d", "--dlq-url", "http://127.0.0.1:1/dlq", "--queue-url", "http://127.0.0.1:1/q")
	require.Equal(t, exitUsage, r.code, "%+v", r)
	require.Contains(t, r.stderr, "--older-than")
}

// dlq show reads with the same hold as ls and redrive, so it checks it the
// same way: a hold of 0 (or under a second) would leave the letters visible
// while they are read, one over 12 h is refused by SQS.
func TestDLQShowChecksHold(t *testing.T) {
	t.Parallel()
	for _, hold := range []string{"13h", "500ms", "0s", "-1m"} {
		r := herald(t, "", "dlq", "show", "n-1", "--hold", hold, "--dlq-url", "http://127.0.0.1:1/dlq")
		require.Equal(t, exitUsage, r.code, "%s: %+v", hold, r)
		require.Contains(t, r.stderr, "--hold", hold)
	}
}

// herald run's flags outside their documented ranges are usage errors, not
// quietly replaced by the runner's defaults (--batch-size 50 ran with 10).
func TestRunChecksFlagRanges(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--batch-size", "0"}, {"--batch-size", "11"}, {"--wait", "21s"}, {"--wait", "-1s"}, {"--function-timeout", "0s"}, {"--function-timeout", "16m"}} {
		r := herald(t, "", append([]string{"run", "--queue-url", "http://127.0.0.1:1/q", "--dlq-url", "http://127.0.0.1:1/dlq"}, args...)...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", args, r)
		require.Contains(t, r.stderr, args[0], args)
	}
}

func TestSendNamesTheNDJSONLineTooLong(t *testing.T) {
	t.Parallel()
	stdin := `{"id":"a"}` + "\n" + strings.Repeat("x", 1<<20+10) + "\n"
	r := herald(t, stdin, "send", "--dry-run", "-")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "-:2: line longer than 1048576 bytes")
}

func TestEmptyIDIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"dlq", "redrive", "--id", ""}, {"dlq", "ls", "--id", ""}, {"dlq", "show", ""}} {
		r := herald(t, "", append(args, "--dlq-url", "http://127.0.0.1:1/dlq", "--queue-url", "http://127.0.0.1:1/q")...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", args, r)
		require.Contains(t, r.stderr, "empty", args)
	}
}

// Redriving into the dead-letter queue itself would replace each letter
// with a copy without herald's attributes: its reason lost.
func TestRedriveIntoTheDeadLetterQueueIsAUsageError(t *testing.T) {
	t.Parallel()
	r := herald(t, "", "dlq", "redrive", "--all", "--dlq-url", "http://127.0.0.1:1/000000000000/dlq", "--queue-url", "http://127.0.0.1:1/000000000000/dlq/")
	require.Equal(t, exitUsage, r.code, "%+v", r)
	require.Contains(t, r.stderr, "are the same")
}

// --region wins over the environment's region; without it the SDK's
// default chain decides.
func TestRegionFlagOverridesTheEnvironment(t *testing.T) { // t.Setenv: not parallel
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	cfg, err := (&globals{region: "eu-west-1"}).awsConfig(context.Background())
	require.NoError(t, err)
	require.Equal(t, "eu-west-1", cfg.Region)
	cfg, err = (&globals{}).awsConfig(context.Background())
	require.NoError(t, err)
	require.Equal(t, "us-east-1", cfg.Region)
}
