//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/localrunner"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/testkit/pausetest"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// TestChannelsDrainIndependently: with the webhook signing secret broken
// and SES healthy, the deliver function as the Lambda wires it (per-channel
// setup, pause.Gate) pauses the webhook queue's event source mapping at
// cold start; the emails sent are delivered while the webhooks — two sent to
// the webhook queue by the producer, one misrouted to the email queue and
// moved — wait in the webhook queue never received. After the secret is
// fixed and the webhook channel resumed, they are delivered and every queue
// is empty.
//
// SQS is LocalStack's, SES the v2 emulator, the webhook receiver a real
// HTTPS server. The event source mappings are registered in pausetest's
// Lambda wire fake: LocalStack's own poller would take messages from a
// mapping's queue (it cannot run the function without Docker), which is the
// receive count this test watches. Each local event source mapping polls
// only while its registered mapping is Enabled, as Lambda's does.
func TestChannelsDrainIndependently(t *testing.T) {
	t.Parallel()
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Fatal("AWS_ENDPOINT_URL is not set: run the integration tests with `make test`, which starts the local stack")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	sqsc := sqs.NewFromConfig(awsCfg)
	prefix := "it-channels-" + randHex(4)
	var emailQ, hookQ localenv.Queues
	for name, q := range map[string]*localenv.Queues{prefix + "-email": &emailQ, prefix + "-webhook": &hookQ} {
		*q, err = localenv.CreateQueues(ctx, sqsc, name, 3, 30*time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { q.Delete(context.Background(), sqsc) })
	}
	receiver := localenv.NewReceiver(func(string, int) int { return 200 })
	t.Cleanup(receiver.Close)

	const function = "herald-it-deliver"
	fnArn := "arn:aws:lambda:us-east-1:000000000000:function:" + function
	lambdaAPI := &pausetest.Lambda{Mappings: []pausetest.Mapping{
		{UUID: "email-mapping", FunctionArn: fnArn, EventSourceArn: emailQ.ARN, State: "Enabled"},
		{UUID: "webhook-mapping", FunctionArn: fnArn, EventSourceArn: hookQ.ARN, State: "Enabled"},
	}}
	lambdac := pausetest.Client(t, lambdaAPI)
	state := func(uuid string) string {
		lambdaAPI.Mu.Lock()
		defer lambdaAPI.Mu.Unlock()
		for _, m := range lambdaAPI.Mappings {
			if m.UUID == uuid {
				return m.State
			}
		}
		return ""
	}

	cfg := config.Deliver{
		Queues: []redrive.Queue{
			{Channel: notification.ChannelEmail, URL: emailQ.URL, DeadLetterURL: emailQ.DLQURL},
			{Channel: notification.ChannelWebhook, URL: hookQ.URL, DeadLetterURL: hookQ.DLQURL},
		},
		MaxReceiveCount: 3, BackoffBase: time.Second, BackoffCap: 30 * time.Second, Concurrency: 10,
		EmailDefaultFrom: "noreply@example.com",
		WebhookSecret:    "whsec_this-is-not-base64!", WebhookTimeout: 5 * time.Second,
		WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	// start is the deliver function's cold start (functions/deliver: run).
	start := func() *pause.Gate {
		p, down, err := app.NewDeliverChannels(ctx, cfg, awsCfg, app.DeliverOptions{WebhookTLS: receiver.TLSConfig(), Logger: logger})
		require.NoError(t, err)
		g := &pause.Gate{
			Deliver: p.Handle, Queues: cfg.AllQueues(),
			Causes: app.QueueCauses(cfg.AllQueues(), down, app.CheckEachQueue(ctx, cfg, awsCfg, 0)),
			Paused: pause.Handler{API: lambdac, FunctionName: function, Logger: logger},
		}
		require.Empty(t, g.PauseAtStart(ctx))
		return g
	}
	gate := start()
	require.Equal(t, "Disabling", state("webhook-mapping"), "the webhook channel is paused at cold start")
	require.Equal(t, "Enabled", state("email-mapping"), "the email channel is not")

	// The producer routes by channel; one webhook goes to the email queue
	// by hand (a producer that has not moved yet).
	hook := receiver.URL()
	webhook := func(id string) []byte {
		return []byte(`{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + hook + `/` + id + `","event_type":"t","payload":{}}}`)
	}
	email := func(id string) []byte {
		return []byte(`{"version":1,"id":"` + id + `","channel":"email","email":{"to":["a@example.org"],"subject":"` + prefix + ` ` + id + `","text":"t"}}`)
	}
	prod := &producer.Client{SQS: sqsc, Queues: map[notification.Channel]string{notification.ChannelEmail: emailQ.URL, notification.ChannelWebhook: hookQ.URL}}
	_, err = prod.SendBodies(ctx, [][]byte{email("ch-e1"), webhook("ch-w1"), email("ch-e2"), webhook("ch-w2")})
	require.NoError(t, err)
	_, err = sqsc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(emailQ.URL), MessageBody: aws.String(string(webhook("ch-w3")))})
	require.NoError(t, err)

	handler := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		return gate.Handle(ctx, ev)
	}
	runners := map[string]*localrunner.Runner{
		"email-mapping":   {SQS: sqsc, QueueURL: emailQ.URL, Handler: handler, WaitTime: time.Second, FunctionTimeout: 20 * time.Second},
		"webhook-mapping": {SQS: sqsc, QueueURL: hookQ.URL, Handler: handler, WaitTime: time.Second, FunctionTimeout: 20 * time.Second},
	}
	polled := map[string]int{}
	// pollEnabled is one poll of each mapping that is Enabled; Lambda
	// moves a mapping from Disabling/Enabling to its state at once here.
	pollEnabled := func() {
		lambdaAPI.Mu.Lock()
		for i := range lambdaAPI.Mappings {
			lambdaAPI.Mappings[i].State = strings.NewReplacer("Disabling", "Disabled", "Enabling", "Enabled").Replace(lambdaAPI.Mappings[i].State)
		}
		lambdaAPI.Mu.Unlock()
		for uuid, r := range runners {
			if state(uuid) != "Enabled" {
				continue
			}
			n, err := r.Poll(ctx)
			require.NoError(t, err)
			polled[uuid] += n
		}
	}
	sentEmails := func() int {
		all, err := localenv.SentEmails(ctx, os.Getenv("AWS_ENDPOINT_URL_SESV2"))
		require.NoError(t, err)
		n := 0
		for _, m := range all {
			if strings.HasPrefix(m.Subject, prefix+" ") {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { pollEnabled(); return sentEmails() == 2 && queueEmpty(t, sqsc, emailQ.URL) },
		30*time.Second, 10*time.Millisecond, "logs: %s", logs.String())
	require.Zero(t, polled["webhook-mapping"], "the paused webhook queue is never polled")
	require.Empty(t, receiver.Requests(), "no webhook sent")

	// The webhooks wait in their queue, never received: the look below is
	// their first receive. The misrouted one was moved there unattempted.
	counts := lookAtReceiveCounts(t, ctx, sqsc, hookQ.URL, 3)
	require.Len(t, counts, 3, "every webhook waits in the webhook queue: %v", counts)
	for id, c := range counts {
		require.Equal(t, []string{"1"}, c, "%s: no receive spent while paused (1 is this look)", id)
	}
	for _, q := range []string{emailQ.DLQURL, hookQ.DLQURL} {
		dl, err := localenv.ReceiveAll(ctx, sqsc, q, 30*time.Second)
		require.NoError(t, err)
		require.Empty(t, dl, "nothing dead-lettered in %s", q)
	}
	out := logs.String()
	require.Contains(t, out, `"outcome":"moved"`, "the misrouted webhook was moved")
	var paused string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"`+metrics.Paused+`":1`) {
			paused = l
		}
	}
	require.NotEmpty(t, paused, "the ERROR line with Paused 1; logs: %s", out)
	require.NoError(t, metrics.Validate([]byte(paused), time.Time{}))
	require.Contains(t, paused, `"channel":"webhook"`)
	require.Contains(t, paused, "HERALD_WEBHOOK_SECRET")
	require.Contains(t, paused, pause.ResumeCommand("webhook-mapping"))
	require.NotContains(t, out, "this-is-not-base64", "never the secret itself")

	// The operator fixes the secret (a new execution environment reads
	// it) and resumes the webhook channel: the webhooks are delivered.
	cfg.WebhookSecret = testSecret
	gate = start()
	_, err = pause.Resume(ctx, lambdac, function, hookQ.ARN)
	require.NoError(t, err)
	require.Eventually(t, func() bool { pollEnabled(); return len(receiver.Requests()) >= 3 && queueEmpty(t, sqsc, hookQ.URL) },
		30*time.Second, 10*time.Millisecond, "logs: %s", logs.String())
	delivered := map[string]bool{}
	for _, r := range receiver.Requests() {
		delivered[r.Header.Get("webhook-id")] = true
	}
	require.Equal(t, map[string]bool{"ch-w1": true, "ch-w2": true, "ch-w3": true}, delivered)
	require.True(t, queueEmpty(t, sqsc, emailQ.URL))
	require.Equal(t, 2, sentEmails(), "no email sent twice")
}

// lookAtReceiveCounts receives the queue's messages once (until want
// notifications are seen or 15 s pass) and returns each copy's
// ApproximateReceiveCount by notification id, then makes them visible again.
func lookAtReceiveCounts(t *testing.T, ctx context.Context, c *sqs.Client, queueURL string, want int) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	var handles []string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && len(out) < want; {
		r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
		})
		require.NoError(t, err)
		for _, m := range r.Messages {
			id := notification.IDOf([]byte(aws.ToString(m.Body)))
			out[id] = append(out[id], m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
			handles = append(handles, aws.ToString(m.ReceiptHandle))
		}
	}
	for _, h := range handles {
		_, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String(h), VisibilityTimeout: 0})
		require.NoError(t, err)
	}
	return out
}

func queueEmpty(t *testing.T, c *sqs.Client, queueURL string) bool {
	t.Helper()
	out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible},
	})
	require.NoError(t, err)
	return out.Attributes["ApproximateNumberOfMessages"] == "0" && out.Attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
}

// TestCLIEveryChannelQueue: herald send routes each notification to its
// channel's queue; herald dlq ls lists the dead letters of every channel's
// dead-letter queue and the queue of every channel's; redrive sends each
// back to the queue whose dead-letter queue held it.
func TestCLIEveryChannelQueue(t *testing.T) {
	c := setupCLI(t, 3)
	var emailQ, hookQ localenv.Queues
	for name, q := range map[string]*localenv.Queues{"cli-ch-email-" + randHex(4): &emailQ, "cli-ch-webhook-" + randHex(4): &hookQ} {
		var err error
		*q, err = localenv.CreateQueues(c.ctx, c.sqs, name, 3, 30*time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { q.Delete(context.Background(), c.sqs) })
	}
	c.vars[producer.QueueURLEnv(notification.ChannelEmail)], c.vars[producer.DeadLetterQueueURLEnv(notification.ChannelEmail)] = emailQ.URL, emailQ.DLQURL
	c.vars[producer.QueueURLEnv(notification.ChannelWebhook)], c.vars[producer.DeadLetterQueueURLEnv(notification.ChannelWebhook)] = hookQ.URL, hookQ.DLQURL
	// c.queues stays the queue of every channel (HERALD_QUEUE_URL).

	email := `{"version":1,"id":"cli-ch-e1","channel":"email","email":{"to":["a@example.org"],"subject":"s","text":"t"}}`
	hook := `{"version":1,"id":"cli-ch-w1","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":{}}}`
	chat := `{"version":1,"id":"cli-ch-c1","channel":"chat","chat":{"service":"slack","url":"https://hooks.slack.com/services/T0/B0/X","text":"t"}}`
	sent := c.herald(email+"\n"+hook+"\n"+chat+"\n", "send", "-")
	require.Equal(t, 0, sent.code, "%+v", sent)
	// ids looks at the queue's notifications (until want are seen).
	ids := func(queueURL string, want int) []string {
		var out []string
		for id := range lookAtReceiveCounts(t, c.ctx, c.sqs, queueURL, want) {
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	require.Equal(t, []string{"cli-ch-e1"}, ids(emailQ.URL, 1), "email to the email queue")
	require.Equal(t, []string{"cli-ch-w1"}, ids(hookQ.URL, 1), "webhook to the webhook queue")
	require.Equal(t, []string{"cli-ch-c1"}, ids(c.queues.URL, 1), "chat, without a queue of its own here, to the queue of every channel")

	// One dead letter in each dead-letter queue.
	for id, dlq := range map[string]string{"cli-ch-dl-e": emailQ.DLQURL, "cli-ch-dl-w": hookQ.DLQURL, "cli-ch-dl-s": c.queues.DLQURL} {
		reason, _ := json.Marshal(redrive.Reason{Outcome: "permanent_failure", ErrorClass: "webhook_gone", Attempts: 1,
			FailedAt: time.Now().UTC().Format(time.RFC3339Nano), NotificationID: id, Channel: "webhook", SourceMessageID: "src-" + id})
		_, err := c.sqs.SendMessage(c.ctx, &sqs.SendMessageInput{
			QueueUrl:          aws.String(dlq),
			MessageBody:       aws.String(`{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":{}}}`),
			MessageAttributes: map[string]types.MessageAttributeValue{redrive.AttrReason: {DataType: aws.String("String"), StringValue: aws.String(string(reason))}},
		})
		require.NoError(t, err)
	}
	// LocalStack under load can answer a receive empty while a message it
	// just stored is there (receiveSome): ls is asked again, for at most
	// 30 s, until it has seen each queue's letter.
	listed := func(out string) bool {
		for _, id := range []string{"cli-ch-dl-e", "cli-ch-dl-w", "cli-ch-dl-s"} {
			if !strings.Contains(out, `"`+id+`"`) {
				return false
			}
		}
		return true
	}
	ls := c.herald("", "dlq", "ls", "--json")
	for deadline := time.Now().Add(30 * time.Second); !listed(ls.stdout) && time.Now().Before(deadline); {
		require.Equal(t, 0, ls.code, "%+v", ls)
		ls = c.herald("", "dlq", "ls", "--json")
	}
	require.Equal(t, 0, ls.code, "%+v", ls)
	require.True(t, listed(ls.stdout), "every dead-letter queue is read: %s", ls.stdout)
	rd := c.herald("", "dlq", "redrive", "--all")
	require.Equal(t, 0, rd.code, "%+v", rd)
	require.Contains(t, rd.stdout, "sent 3, skipped 0, failed 0")
	require.Equal(t, []string{"cli-ch-dl-e", "cli-ch-e1"}, ids(emailQ.URL, 2), "back to the queue whose dead-letter queue held it")
	require.Equal(t, []string{"cli-ch-dl-w", "cli-ch-w1"}, ids(hookQ.URL, 2))
	require.Equal(t, []string{"cli-ch-c1", "cli-ch-dl-s"}, ids(c.queues.URL, 2))

	// herald run polls every queue, one local event source mapping each:
	// the email is delivered (to the SES emulator) and the webhook the
	// redrive put back on the email queue is handled there.
	run := c.command("run", "--wait", "1s")
	var runOut, runErr lockedBuffer
	run.Stdout, run.Stderr = &runOut, &runErr
	require.NoError(t, run.Start())
	t.Cleanup(func() {
		_ = run.Process.Kill()
		_ = run.Wait()
		if t.Failed() {
			t.Logf("herald run stdout:\n%s\nstderr:\n%s", runOut.String(), runErr.String())
		}
	})
	waitFor(t, 30*time.Second, "herald run started", func() bool { return strings.Contains(runErr.String(), "Ctrl-C to stop") })
	for _, u := range []string{emailQ.URL, hookQ.URL, c.queues.URL} {
		require.Contains(t, runErr.String(), u, "herald run polls every queue")
	}
	waitFor(t, 45*time.Second, "the email delivered, the webhook redriven to the email queue handled there", func() bool {
		out := runOut.String()
		return regexp.MustCompile(`cli-ch-e1\s+email\s+delivered`).MatchString(out) && regexp.MustCompile(`cli-ch-dl-e\s+webhook`).MatchString(out)
	})
}
