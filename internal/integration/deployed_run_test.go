//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/feedback"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// functionLog reads what LocalStack wrote to a function's CloudWatch Logs
// group (/aws/lambda/<function>: each invocation's output, START to REPORT,
// in one stream per execution environment).
type functionLog struct {
	c        *cloudwatchlogs.Client
	function string
}

// invocations returns the lines of each invocation so far, in order within
// each execution environment.
func (l functionLog) invocations(ctx context.Context, t *testing.T) [][]string {
	t.Helper()
	group := "/aws/lambda/" + l.function
	streams, err := l.c.DescribeLogStreams(ctx, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String(group)})
	if err != nil {
		return nil // no invocation has finished yet: LocalStack creates the group then
	}
	var out [][]string
	for _, s := range streams.LogStreams {
		var lines []string
		var token *string
		for {
			page, err := l.c.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{
				LogGroupName: aws.String(group), LogStreamName: s.LogStreamName, StartFromHead: aws.Bool(true), NextToken: token,
			})
			require.NoError(t, err)
			for _, e := range page.Events {
				lines = append(lines, strings.TrimRight(aws.ToString(e.Message), "\n"))
			}
			if len(page.Events) == 0 || aws.ToString(page.NextForwardToken) == aws.ToString(token) {
				break
			}
			token = page.NextForwardToken
		}
		var inv []string
		for _, line := range lines {
			if strings.HasPrefix(line, "START RequestId: ") {
				inv = nil
			}
			inv = append(inv, line)
			if strings.HasPrefix(line, "REPORT RequestId: ") {
				out = append(out, inv)
				inv = nil
			}
		}
	}
	return out
}

// records returns the function's JSON lines with msg: in invocation order
// within each execution environment, one environment after another.
func (l functionLog) records(ctx context.Context, t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, inv := range l.invocations(ctx, t) {
		out = append(out, jsonLines(inv, msg)...)
	}
	return out
}

// waitRecords polls the log until match finds lines with msg, within timeout.
func (l functionLog) waitRecords(ctx context.Context, t *testing.T, msg string, timeout time.Duration, match func([]map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		recs := l.records(ctx, t, msg)
		if match(recs) {
			return recs
		}
		require.True(t, time.Now().Before(deadline), "no %q lines as expected in /aws/lambda/%s within %s; got %v", msg, l.function, timeout, recs)
		time.Sleep(500 * time.Millisecond)
	}
}

func jsonLines(lines []string, msg string) []map[string]any {
	var out []map[string]any
	for _, line := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if msg == "" || m["msg"] == msg {
			out = append(out, m)
		}
		if msg == processor.LineNotification {
			out = append(out, listedRecords(m)...)
		}
	}
	return out
}

// scheduleRunsRetention makes the stack's retention rule fire every minute
// (LocalStack checks its schedules once a minute, so an hourly rate would
// not fire within the test) with its target kept, and waits for the
// retention function's summary line.
func scheduleRunsRetention(ctx context.Context, t *testing.T, awsCfg aws.Config, d deployed) {
	eb := eventbridge.NewFromConfig(awsCfg)
	var rule string
	for _, name := range d.ofType("AWS::Events::Rule") {
		r, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(name)})
		require.NoError(t, err)
		if aws.ToString(r.ScheduleExpression) != "" {
			rule = name
		}
	}
	require.NotEmpty(t, rule)
	targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(rule)})
	require.NoError(t, err)
	_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(rule), ScheduleExpression: aws.String("rate(1 minute)"), State: ebtypes.RuleStateEnabled})
	require.NoError(t, err)
	// LocalStack schedules a rule's job when its targets are put.
	_, err = eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(rule), Targets: targets.Targets})
	require.NoError(t, err)

	log := functionLog{cloudwatchlogs.NewFromConfig(awsCfg), aws.ToString(d.retention.FunctionName)}
	recs := log.waitRecords(ctx, t, "retention sweep", 150*time.Second, func(r []map[string]any) bool { return len(r) > 0 })
	require.Equal(t, d.params["DeadLetterMaxAgeHours"], strings.TrimSuffix(jsonNumber(recs[0]["max_age_hours"]), ".0"),
		"the sweep ran with the deployed DeadLetterMaxAgeHours")
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sesEventReachesFeedback puts an SES event, as SES publishes it, on the
// default event bus: the stack's rule invokes the feedback function, which
// logs it with the notification id from the herald-id tag.
func sesEventReachesFeedback(ctx context.Context, t *testing.T, awsCfg aws.Config, d deployed) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "ses-events", "delivery.json"))
	require.NoError(t, err)
	var ev struct {
		Source     string          `json:"source"`
		DetailType string          `json:"detail-type"`
		Detail     json.RawMessage `json:"detail"`
	}
	require.NoError(t, json.Unmarshal(raw, &ev))
	out, err := eventbridge.NewFromConfig(awsCfg).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		Source: aws.String(ev.Source), DetailType: aws.String(ev.DetailType), Detail: aws.String(string(ev.Detail)),
	}}})
	require.NoError(t, err)
	require.Zero(t, out.FailedEntryCount, "%+v", out.Entries)

	log := functionLog{cloudwatchlogs.NewFromConfig(awsCfg), aws.ToString(d.functions["FeedbackFunction"].FunctionName)}
	// The "invoke" subtest, in parallel, hands the same function an SES
	// send event directly: this one is the delivery event.
	deliveries := func(r []map[string]any) []map[string]any {
		var out []map[string]any
		for _, rec := range r {
			if rec["event_type"] == string(feedback.Delivered) {
				out = append(out, rec)
			}
		}
		return out
	}
	recs := deliveries(log.waitRecords(ctx, t, "email_event", time.Minute, func(r []map[string]any) bool { return len(deliveries(r)) > 0 }))
	require.Len(t, recs, 1)
	require.Equal(t, "welcome-jana.2026:1", recs[0]["id"], "the notification id, from the herald-id tag")
}

// feedbackReplayAsDocumented runs the replay of docs/alarms.md's
// feedback-dead-letters runbook, the shell block as written there, with
// the local stack's AWS CLI (v1) and jq: a saved SES event in the feedback
// dead-letter queue (as Lambda puts a failed invocation's event there: the
// body is the event) is invoked asynchronously and deleted, and the
// deployed function logs it. `aws events put-events` with its aws.ses
// source would work here but not on AWS, which reserves aws.* sources.
func feedbackReplayAsDocumented(ctx context.Context, t *testing.T, awsCfg aws.Config, d deployed) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "alarms.md"))
	require.NoError(t, err)
	section := string(doc)[strings.Index(string(doc), "### feedback-dead-letters"):]
	start := strings.Index(section, "```sh\n")
	require.GreaterOrEqual(t, start, 0, "docs/alarms.md's feedback-dead-letters section has a sh block")
	script := section[start+len("```sh\n"):]
	script = script[:strings.Index(script, "```")]
	placeholders := strings.NewReplacer(
		"<FeedbackDeadLetterQueueUrl>", "'"+d.outputs["FeedbackDeadLetterQueueUrl"]+"'",
		"<FeedbackFunctionName>", "'"+d.outputs["FeedbackFunctionName"]+"'")
	require.Contains(t, script, "<FeedbackFunctionName>", "the block names the function by its output")
	script = placeholders.Replace(script)

	event, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "ses-events", "bounce.json"))
	require.NoError(t, err)
	sqsc := sqs.NewFromConfig(awsCfg)
	dlq := d.outputs["FeedbackDeadLetterQueueUrl"]
	_, err = sqsc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dlq), MessageBody: aws.String(string(event))})
	require.NoError(t, err)

	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(repoRoot, ".venv", "localstack", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AWS_DEFAULT_REGION="+awsCfg.Region) // AWS CLI v1 reads no AWS_REGION
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the documented replay: %s", out)
	require.Contains(t, string(out), "202", "the asynchronous invoke was accepted: %s", out)

	log := functionLog{cloudwatchlogs.NewFromConfig(awsCfg), d.outputs["FeedbackFunctionName"]}
	bounces := func(r []map[string]any) []map[string]any {
		var out []map[string]any
		for _, rec := range r {
			if rec["event_type"] == string(feedback.Bounced) {
				out = append(out, rec)
			}
		}
		return out
	}
	recs := bounces(log.waitRecords(ctx, t, "email_event", time.Minute, func(r []map[string]any) bool { return len(bounces(r)) > 0 }))
	require.Len(t, recs, 1, "the replayed event, logged once")
	a := queueAttributes(ctx, t, sqsc, dlq)
	require.Equal(t, "0", a["ApproximateNumberOfMessages"], "the replayed message was deleted")
	require.Equal(t, "0", a["ApproximateNumberOfMessagesNotVisible"])
}

// invokeDirectly calls the functions as `aws lambda invoke` does: the
// feedback function answers an SES event with its result (null); the
// deliver function, given a payload that is no SQS event, fails, and
// LocalStack reports the function error the emulator put in its answer.
func invokeDirectly(ctx context.Context, t *testing.T, awsCfg aws.Config, d deployed) {
	c := lambda.NewFromConfig(awsCfg)
	event, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "ses-events", "send.json"))
	require.NoError(t, err)
	ok, err := c.Invoke(ctx, &lambda.InvokeInput{FunctionName: d.functions["FeedbackFunction"].FunctionName, Payload: event})
	require.NoError(t, err)
	require.Equal(t, int32(200), ok.StatusCode)
	require.Nil(t, ok.FunctionError, "%s", ok.Payload)
	require.Equal(t, "null", string(ok.Payload))

	bad, err := c.Invoke(ctx, &lambda.InvokeInput{FunctionName: d.deliver.FunctionName, Payload: []byte(`"not an SQS event"`)})
	require.NoError(t, err)
	require.Equal(t, "Unhandled", aws.ToString(bad.FunctionError), "%s", bad.Payload)
	var fnErr struct{ ErrorMessage, ErrorType string }
	require.NoError(t, json.Unmarshal(bad.Payload, &fnErr), "%s", bad.Payload)
	require.NotEmpty(t, fnErr.ErrorMessage, "%s", bad.Payload)
}

// deployedRun is the deployed deliver function at work, fed by LocalStack's
// event source mapping from the deployed queue.
type deployedRun struct {
	ctx      context.Context
	d        deployed
	sqs      *sqs.Client
	lambda   *lambda.Client
	secrets  *secretsmanager.Client
	log      functionLog
	queueURL string
	dlqURL   string
	sesURL   string
	// visibility is the queue's VisibilityTimeout as deployed (seconds).
	visibility string
}

func newDeployedRun(ctx context.Context, t *testing.T, awsCfg aws.Config, d deployed) *deployedRun {
	r := &deployedRun{
		ctx: ctx, d: d, sqs: sqs.NewFromConfig(awsCfg), lambda: lambda.NewFromConfig(awsCfg),
		secrets:  secretsmanager.NewFromConfig(awsCfg),
		log:      functionLog{cloudwatchlogs.NewFromConfig(awsCfg), aws.ToString(d.deliver.FunctionName)},
		queueURL: d.outputs["NotificationQueueUrl"], dlqURL: d.outputs["DeadLetterQueueUrl"],
		sesURL: os.Getenv("AWS_ENDPOINT_URL_SESV2"),
	}
	r.visibility = queueAttributes(ctx, t, r.sqs, r.queueURL)["VisibilityTimeout"]
	return r
}

// email is a notification to the SES emulator with a subject of its own.
func (r *deployedRun) email(t *testing.T, id string) string {
	var n map[string]any
	require.NoError(t, json.Unmarshal([]byte(sample(t, "email-welcome.json")), &n))
	n["id"] = id
	n["email"].(map[string]any)["subject"] = "deployed stack " + id
	body, err := json.Marshal(n)
	require.NoError(t, err)
	return string(body)
}

// mailed counts the emails the SES emulator holds for notification id.
func (r *deployedRun) mailed(t *testing.T, id string) int {
	emails, err := localenv.SentEmails(r.ctx, r.sesURL)
	require.NoError(t, err)
	n := 0
	for _, e := range emails {
		if e.Subject == "deployed stack "+id {
			n++
		}
	}
	return n
}

func (r *deployedRun) sendBatch(t *testing.T, bodies ...string) {
	entries := make([]types.SendMessageBatchRequestEntry, len(bodies))
	for i, b := range bodies {
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(string(rune('a' + i))), MessageBody: aws.String(b)}
	}
	out, err := r.sqs.SendMessageBatch(r.ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(r.queueURL), Entries: entries})
	require.NoError(t, err)
	require.Empty(t, out.Failed)
}

// held is how many messages the queue holds, visible or not.
func (r *deployedRun) held(t *testing.T, queueURL string) int {
	a := queueAttributes(r.ctx, t, r.sqs, queueURL)
	n := 0
	for _, k := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"} {
		var v int
		require.NoError(t, json.Unmarshal([]byte(a[k]), &v), "%s=%q", k, a[k])
		n += v
	}
	return n
}

// mixedBatch sends two emails and a webhook to a receiver that is down
// while the event source mapping is disabled, then enables it: LocalStack's
// poller finds them and hands them to the function in one batch or, when a
// receive answers with fewer messages than the queue holds, in two. The
// partial batch response names only the webhook, so the
// poller deletes the emails (each delivered once, never received again)
// while the webhook comes back after herald's backoff (1 s, then 2 s: the
// visibility timeout herald set, not the queue's 150 s) and, on its third
// receive (MaxReceiveCount), is dead-lettered with its reason.
func (r *deployedRun) mixedBatch(t *testing.T) {
	suffix := randHex(4)
	mail1, mail2, hook := "mixed-mail-1-"+suffix, "mixed-mail-2-"+suffix, "mixed-hook-"+suffix
	port, err := localenv.FreePort()
	require.NoError(t, err)
	down := `{"version":1,"id":"` + hook + `","channel":"webhook","webhook":{"url":"https://127.0.0.1:` + port +
		`/down","event_type":"t","payload":{}}}`
	m := mappingOf(r.ctx, t, r.lambda, r.d, r.queueURL)
	r.setMappingEnabled(t, aws.ToString(m.UUID), false)
	r.sendBatch(t, r.email(t, mail1), down, r.email(t, mail2))
	r.setMappingEnabled(t, aws.ToString(m.UUID), true)

	recs := r.log.waitRecords(r.ctx, t, "notification", time.Minute, func(recs []map[string]any) bool {
		return slices.Contains(outcomesOf(recs, hook), string(processor.DeadLettered))
	})
	require.Equal(t, []string{"delivered"}, outcomesOf(recs, mail1), "delivered once, never back")
	require.Equal(t, []string{"delivered"}, outcomesOf(recs, mail2), "delivered once, never back")
	// Attempts may run in different execution environments, whose log
	// streams are read one after another: the receive count orders them.
	hookRecs := slices.SortedStableFunc(slices.Values(recordsOf(recs, hook)), func(a, b map[string]any) int {
		return int(a["receive_count"].(float64) - b["receive_count"].(float64))
	})
	require.Equal(t, []string{"retry", "retry", "dead_lettered"}, outcomesOf(hookRecs, hook))
	require.Equal(t, 1, r.mailed(t, mail1))
	require.Equal(t, 1, r.mailed(t, mail2))

	// One invocation held all three: the one of the webhook's first
	// receive, whose partial batch response named only the webhook.
	var first []string
	for _, inv := range r.log.invocations(r.ctx, t) {
		for _, m := range recordsOf(jsonLines(inv, "notification"), hook) {
			if m["receive_count"] == 1.0 {
				first = inv
			}
		}
	}
	// SQS may answer a receive with fewer messages than it holds, so the
	// poller can split the three; at least one email shared the webhook's
	// failing batch, and was deleted while the webhook came back.
	got := jsonLines(first, "notification")
	sharing := len(outcomesOf(got, mail1)) + len(outcomesOf(got, mail2))
	require.Positive(t, sharing, "an email in the batch of the webhook's first receive; invocation: %v", first)
	for _, id := range []string{mail1, mail2} {
		if o := outcomesOf(got, id); o != nil {
			require.Equal(t, []string{"delivered"}, o, "invocation: %v", first)
		}
	}

	// Each attempt came back after the backoff herald set as the message's
	// visibility timeout, 1 s then 2 s: within the minute waited above, where
	// the queue's own visibility timeout (150 s) would not have let it.
	var counts, delays []float64
	for _, m := range hookRecs {
		counts = append(counts, m["receive_count"].(float64))
		if d, ok := m["delay_seconds"].(float64); ok {
			delays = append(delays, d)
		}
	}
	require.Equal(t, []float64{1, 2, 3}, counts)
	require.Equal(t, []float64{1, 2}, delays)

	var letter *localenv.DeadLetter
	deadline := time.Now().Add(30 * time.Second)
	for letter == nil {
		require.True(t, time.Now().Before(deadline), "the webhook is not in the dead-letter queue")
		letters, err := localenv.ReceiveAll(r.ctx, r.sqs, r.dlqURL, time.Second)
		require.NoError(t, err)
		for _, l := range letters {
			if strings.Contains(l.Body, hook) {
				letter = &l
			}
		}
	}
	reason := reasonOf(t, *letter)
	require.Equal(t, "attempts_exhausted", reason.Outcome)
	require.Equal(t, delivery.Class("webhook_connection"), reason.ErrorClass)
	require.Equal(t, 3, reason.Attempts)
	require.Equal(t, hook, reason.NotificationID)
	require.Equal(t, r.d.outputs["NotificationQueueArn"], reason.SourceQueueARN)
	require.Eventually(t, func() bool { return r.held(t, r.queueURL) == 0 }, 10*time.Second, 200*time.Millisecond, "the queue is empty")
	r.traced(t, hook, mail1)
}

func recordsOf(recs []map[string]any, id string) []map[string]any {
	var out []map[string]any
	for _, m := range recs {
		if m["id"] == id {
			out = append(out, m)
		}
	}
	return out
}

func outcomesOf(recs []map[string]any, id string) []string {
	var out []string
	for _, m := range recs {
		if m["id"] == id {
			o, _ := m["outcome"].(string)
			out = append(out, o)
		}
	}
	return out
}

// brokenSecretPauses breaks the stack's signing secret and starts fresh
// execution environments (a new WebhookSigningSecretVersion, as a rotation
// does). The function cannot deliver: it disables its own event source
// mapping through LocalStack's Lambda API, hands its batch back and logs how
// to resume; the messages stay in the queue, none in the dead-letter queue.
// With the secret fixed, `herald resume --stack` enables the mapping and they
// are delivered on their second receive.
func (r *deployedRun) brokenSecretPauses(t *testing.T) {
	secretARN := r.d.outputs["WebhookSigningSecretArn"]
	good, err := r.secrets.GetSecretValue(r.ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(secretARN)})
	require.NoError(t, err)
	const malformed = "whsec_this-is-not-base64!"
	_, err = r.secrets.PutSecretValue(r.ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(secretARN), SecretString: aws.String(malformed)})
	require.NoError(t, err)
	r.newEnvironments(t, "broken-"+randHex(3))
	// The batch the paused function hands back is visible again after the
	// queue's visibility timeout: 5 s instead of 150 s for this part. (The
	// function stops at the secret, before its queue check would object.)
	r.setVisibilityTimeout(t, "5")
	// A receive that is already waiting (LocalStack's poller long-polls for
	// the batching window) hides what it takes for the timeout it started with.
	time.Sleep(2 * time.Second)
	dlqBefore := r.held(t, r.dlqURL)

	suffix := randHex(4)
	ids := []string{"paused-1-" + suffix, "paused-2-" + suffix}
	// Sent while the mapping is off, the two arrive in one batch (see
	// mixedBatch), so the paused function is handed both.
	m := mappingOf(r.ctx, t, r.lambda, r.d, r.queueURL)
	r.setMappingEnabled(t, aws.ToString(m.UUID), false)
	r.sendBatch(t, r.email(t, ids[0]), r.email(t, ids[1]))
	r.setMappingEnabled(t, aws.ToString(m.UUID), true)
	require.Eventually(t, func() bool { return r.mappingState(t, aws.ToString(m.UUID)) == "Disabled" }, time.Minute, 250*time.Millisecond,
		"the function disabled its event source mapping")
	paused := r.log.waitRecords(r.ctx, t, "", 30*time.Second, func(recs []map[string]any) bool { return len(pausedLines(recs)) > 0 })
	line := pausedLines(paused)[0]
	require.Equal(t, "ERROR", line["level"])
	require.Contains(t, line["error"], "HERALD_WEBHOOK_SECRET", "the ERROR names the bad setting")
	require.Equal(t, pause.ResumeCommand(aws.ToString(m.UUID)), line["resume"])
	for _, inv := range r.log.invocations(r.ctx, t) {
		require.NotContains(t, strings.Join(inv, "\n"), "this-is-not-base64", "never the secret itself")
	}

	// Paused: the batch is visible again and nobody takes it.
	require.Eventually(t, func() bool { return queueAttributes(r.ctx, t, r.sqs, r.queueURL)["ApproximateNumberOfMessages"] == "2" },
		30*time.Second, 250*time.Millisecond, "both notifications wait in the queue, visible")
	time.Sleep(3 * time.Second)
	a := queueAttributes(r.ctx, t, r.sqs, r.queueURL)
	require.Equal(t, "2", a["ApproximateNumberOfMessages"], "nobody takes them; invocations: %v", r.log.invocations(r.ctx, t))
	require.Equal(t, "0", a["ApproximateNumberOfMessagesNotVisible"])
	require.Equal(t, dlqBefore, r.held(t, r.dlqURL), "nothing dead-lettered")
	for _, id := range ids {
		require.Zero(t, r.mailed(t, id))
	}

	// Fixed: the secret back, fresh environments, the queue as deployed.
	_, err = r.secrets.PutSecretValue(r.ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(secretARN), SecretString: good.SecretString})
	require.NoError(t, err)
	r.newEnvironments(t, "fixed-"+randHex(3))
	r.setVisibilityTimeout(t, r.visibility)
	cmd := exec.CommandContext(r.ctx, heraldBinary(t), "resume", "--json", "--stack", r.d.stack)
	out, err := cmd.Output()
	require.NoError(t, err, "herald resume --stack: %s", out)
	var rows []struct{ UUID, Action string }
	require.NoError(t, json.Unmarshal(out, &rows), "%s", out)
	// Every mapping of the function, one per queue: the queue of every
	// channel's and the webhook queue's were paused (the broken secret is
	// the webhook channel's), the others delivered all along.
	actions := map[string]string{}
	for _, row := range rows {
		actions[row.UUID] = row.Action
	}
	require.Len(t, rows, len(config.DeliverChannels)+1, "%s", out)
	require.Equal(t, "enabled", actions[aws.ToString(m.UUID)], "%s", out)
	hookMapping := mappingOf(r.ctx, t, r.lambda, r.d, r.d.outputs[producer.QueueOutput(notification.ChannelWebhook)])
	require.Equal(t, "enabled", actions[aws.ToString(hookMapping.UUID)], "the webhook channel was paused too: %s", out)
	emailMapping := mappingOf(r.ctx, t, r.lambda, r.d, r.d.outputs[producer.QueueOutput(notification.ChannelEmail)])
	require.Equal(t, "already enabled", actions[aws.ToString(emailMapping.UUID)], "the email channel was not: %s", out)

	recs := r.log.waitRecords(r.ctx, t, "notification", time.Minute, func(recs []map[string]any) bool {
		return slices.Contains(outcomesOf(recs, ids[0]), "delivered") && slices.Contains(outcomesOf(recs, ids[1]), "delivered")
	})
	for _, id := range ids {
		require.Equal(t, []string{"delivered"}, outcomesOf(recs, id))
		require.Equal(t, 1, r.mailed(t, id))
		for _, m := range recs {
			if m["id"] == id {
				require.Equal(t, 2.0, m["receive_count"], "%s: delivered on the receive after the one the paused function handed back: %v", id, recordsOf(recs, id))
			}
		}
	}
	require.Eventually(t, func() bool { return r.held(t, r.queueURL) == 0 }, 10*time.Second, 200*time.Millisecond, "the queue is empty")
}

func pausedLines(recs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range recs {
		if msg, _ := m["msg"].(string); strings.HasPrefix(msg, "paused:") {
			out = append(out, m)
		}
	}
	return out
}

// newEnvironments changes the deliver function's
// HERALD_WEBHOOK_SECRET_VERSION, which makes Lambda (and LocalStack) start
// new execution environments that read the secret again.
func (r *deployedRun) newEnvironments(t *testing.T, version string) {
	env := maps.Clone(r.d.deliver.Environment.Variables)
	env["HERALD_WEBHOOK_SECRET_VERSION"] = version
	_, err := r.lambda.UpdateFunctionConfiguration(r.ctx, &lambda.UpdateFunctionConfigurationInput{
		FunctionName: r.d.deliver.FunctionName, Environment: &lambdatypes.Environment{Variables: env},
	})
	require.NoError(t, err)
	w := lambda.NewFunctionUpdatedV2Waiter(r.lambda, func(o *lambda.FunctionUpdatedV2WaiterOptions) {
		o.MinDelay, o.MaxDelay = 200*time.Millisecond, time.Second
	})
	require.NoError(t, w.Wait(r.ctx, &lambda.GetFunctionInput{FunctionName: r.d.deliver.FunctionName}, time.Minute))
}

func (r *deployedRun) setVisibilityTimeout(t *testing.T, seconds string) {
	_, err := r.sqs.SetQueueAttributes(r.ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(r.queueURL),
		Attributes: map[string]string{string(types.QueueAttributeNameVisibilityTimeout): seconds}})
	require.NoError(t, err)
}

func (r *deployedRun) setMappingEnabled(t *testing.T, uuid string, enabled bool) {
	_, err := r.lambda.UpdateEventSourceMapping(r.ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(uuid), Enabled: aws.Bool(enabled)})
	require.NoError(t, err)
	want := map[bool]string{true: "Enabled", false: "Disabled"}[enabled]
	require.Eventually(t, func() bool { return r.mappingState(t, uuid) == want }, 30*time.Second, 200*time.Millisecond, "mapping %s never %s", uuid, want)
}

func (r *deployedRun) mappingState(t *testing.T, uuid string) string {
	m, err := r.lambda.GetEventSourceMapping(r.ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)})
	require.NoError(t, err)
	return aws.ToString(m.State)
}
