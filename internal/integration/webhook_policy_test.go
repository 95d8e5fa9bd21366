//go:build integration

package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
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
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

func webhookMessage(id, url string) string {
	return fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":%q,"event_type":"t","payload":{"n":1}}}`, id, url)
}

// TestRetryPolicyThroughTheHandler: a receiver answering 404 or 401 for a
// while (a deploy, a secret rotation) or a redirect gets the notification
// once it recovers; 410 Gone and an operator's stop status dead-letter on
// the first receive.
func TestRetryPolicyThroughTheHandler(t *testing.T) {
	t.Parallel()
	e := setup(t, options{
		maxReceive: 5,
		respond: func(path string, attempt int) int {
			switch {
			case path == "/gone":
				return 410
			case path == "/stop":
				return 418
			case attempt <= 2:
				return map[string]int{"/deploy": 404, "/rotate": 401, "/moved": 301}[path]
			}
			return 204
		},
		deliver: func(_ *env, c *config.Deliver, _ *app.DeliverOptions) { c.WebhookStopStatuses = []int{418} },
	})
	for _, p := range []string{"deploy", "rotate", "moved", "gone", "stop"} {
		e.send(webhookMessage("policy-"+p, e.receiver.URL()+"/"+p))
	}
	e.pollUntil(90*time.Second, func() bool { return e.queueEmpty() })

	for _, p := range []string{"deploy", "rotate", "moved"} {
		require.Equal(t, []string{"retry", "retry", "delivered"}, e.logs.outcomes("policy-"+p), p)
	}
	require.Equal(t, []string{"dead_lettered"}, e.logs.outcomes("policy-gone"))
	require.Equal(t, []string{"dead_lettered"}, e.logs.outcomes("policy-stop"))
	classes := map[string]string{}
	for _, d := range e.deadLetters() {
		r := reasonOf(t, d)
		classes[r.NotificationID] = string(r.ErrorClass)
		require.Equal(t, "permanent_failure", r.Outcome, "not retried")
	}
	require.Equal(t, map[string]string{"policy-gone": "webhook_gone", "policy-stop": "webhook_stop_status"}, classes)
}

// TestEnvelopeTimestampThroughTheHandler: a notification retried twice
// posts the same body three times, its timestamp SQS's SentTimestamp (the
// producer gave no created_at); webhook-timestamp is each attempt's time,
// and the reference libraries verify every attempt with the receiver's
// secret.
func TestEnvelopeTimestampThroughTheHandler(t *testing.T) {
	t.Parallel()
	e := setup(t, options{maxReceive: 5, respond: func(_ string, attempt int) int {
		if attempt <= 2 {
			return 503
		}
		return 204
	}})
	before := time.Now().Add(-time.Second)
	e.send(webhookMessage("stable-1", e.receiver.URL()+"/stable"))
	after := time.Now().Add(time.Second)
	e.pollUntil(60*time.Second, func() bool { return len(e.receiver.Requests()) >= 3 })

	reqs := e.receiver.Requests()
	require.Len(t, reqs, 3)
	secret := derivedSecret(t, testSecret, e.receiver.URL())
	for i, r := range reqs {
		require.Equal(t, string(reqs[0].Body), string(r.Body), "attempt %d posts the same body", i+1)
		require.NoError(t, verifyWithReference(t, secret, map[string]string{
			"webhook-id": r.Header.Get("webhook-id"), "webhook-timestamp": r.Header.Get("webhook-timestamp"), "webhook-signature": r.Header.Get("webhook-signature"),
		}, r.Body))
	}
	first, _ := strconv.ParseInt(reqs[0].Header.Get("webhook-timestamp"), 10, 64)
	last, _ := strconv.ParseInt(reqs[2].Header.Get("webhook-timestamp"), 10, 64)
	require.Greater(t, last, first, "webhook-timestamp is the attempt time (the retries are seconds apart)")
	var env struct{ Timestamp time.Time }
	require.NoError(t, json.Unmarshal(reqs[0].Body, &env))
	require.True(t, env.Timestamp.After(before) && env.Timestamp.Before(after), "the event time is when SQS took the message: %v not in [%v, %v]", env.Timestamp, before, after)
}

// TestSecretScopesThroughTheHandler: with HERALD_WEBHOOK_SECRET_SCOPE=shared
// the receiver installs the deployment secret itself; with the default a
// receiver at another origin cannot verify with this one's key.
func TestSecretScopesThroughTheHandler(t *testing.T) {
	t.Parallel()
	e := setup(t, options{deliver: func(_ *env, c *config.Deliver, _ *app.DeliverOptions) { c.WebhookSecretScope = webhook.ScopeShared }})
	e.send(webhookMessage("shared-1", e.receiver.URL()+"/shared"))
	e.pollUntil(30*time.Second, func() bool { return len(e.receiver.Requests()) > 0 })
	r := e.receiver.Requests()[0]
	h := map[string]string{"webhook-id": r.Header.Get("webhook-id"), "webhook-timestamp": r.Header.Get("webhook-timestamp"), "webhook-signature": r.Header.Get("webhook-signature")}
	require.NoError(t, verifyWithReference(t, testSecret, h, r.Body))
	require.Error(t, verifyWithReference(t, derivedSecret(t, testSecret, e.receiver.URL()), h, r.Body))

	d := setup(t, options{})
	other := d.receiver.URL() // another port: another origin
	d.send(webhookMessage("scoped-1", d.receiver.URL()+"/scoped"))
	d.pollUntil(30*time.Second, func() bool { return len(d.receiver.Requests()) > 0 })
	r = d.receiver.Requests()[0]
	h = map[string]string{"webhook-id": r.Header.Get("webhook-id"), "webhook-timestamp": r.Header.Get("webhook-timestamp"), "webhook-signature": r.Header.Get("webhook-signature")}
	require.NoError(t, verifyWithReference(t, derivedSecret(t, testSecret, other), h, r.Body))
	require.Error(t, verifyWithReference(t, derivedSecret(t, testSecret, e.receiver.URL()), h, r.Body), "another receiver's key does not verify")
}

// TestDuplicateIDsInOneBatchThroughTheHandler: a producer's retry landing
// in the same batch is one delivery, even while the first is retried.
func TestDuplicateIDsInOneBatchThroughTheHandler(t *testing.T) {
	t.Parallel()
	e := setup(t, options{maxReceive: 5, respond: func(path string, attempt int) int {
		if path == "/flaky" && attempt == 1 {
			return 503
		}
		return 204
	}})
	e.send(webhookMessage("dup-ok", e.receiver.URL()+"/ok"), webhookMessage("dup-ok", e.receiver.URL()+"/ok"),
		webhookMessage("dup-flaky", e.receiver.URL()+"/flaky"), webhookMessage("dup-flaky", e.receiver.URL()+"/flaky"))
	// One poll takes all four (LocalStack returns every visible message, up
	// to 10): the copies are in the batch of their first.
	n, err := e.runner.Poll(e.ctx)
	require.NoError(t, err)
	require.Equal(t, 4, n, "the four messages came in one batch")
	e.pollUntil(60*time.Second, e.queueEmpty)

	require.ElementsMatch(t, []string{"delivered", "duplicate"}, e.logs.outcomes("dup-ok"))
	require.ElementsMatch(t, []string{"retry", "duplicate", "delivered"}, e.logs.outcomes("dup-flaky"))
	paths := map[string]int{}
	for _, r := range e.receiver.Requests() {
		paths[r.Path]++
	}
	require.Equal(t, map[string]int{"/ok": 1, "/flaky": 2}, paths, "one delivery each (and the one retry)")
	require.Empty(t, e.deadLetters())
}

// TestBlankMessageIDThroughTheHandler: the deliver function as wired for
// Lambda, given records without a message id, never names them in the
// response, delivers them, and fails the invocation when one of them is to
// come back: the mapping would delete it otherwise.
func TestBlankMessageIDThroughTheHandler(t *testing.T) {
	t.Parallel()
	e := setup(t, options{respond: func(path string, _ int) int {
		if path == "/down" {
			return 503
		}
		return 200
	}})
	// A real receipt handle, so that the retried record's visibility change works.
	ids := e.send(webhookMessage("blank-other", e.receiver.URL()+"/down"))
	out := receiveSome(t, e.ctx, e.sqs, &sqs.ReceiveMessageInput{QueueUrl: aws.String(e.queues.URL), WaitTimeSeconds: 2, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	require.Len(t, out.Messages, 1)
	known := events.SQSMessage{MessageId: ids[0], ReceiptHandle: aws.ToString(out.Messages[0].ReceiptHandle), Body: aws.ToString(out.Messages[0].Body), EventSourceARN: e.queues.ARN, Attributes: out.Messages[0].Attributes}
	blank := func(id, notification, path string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, ReceiptHandle: "rh-" + notification, Body: webhookMessage(notification, e.receiver.URL()+path), EventSourceARN: e.queues.ARN, Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
	}

	resp, err := e.runner.Handler(e.ctx, events.SQSEvent{Records: []events.SQSMessage{
		blank("", "blank-1", "/blank"), blank(" ", "blank-2", "/blank"), known,
	}}) // the processor as the Lambda wires it
	require.NoError(t, err)
	require.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: ids[0]}}, resp.BatchItemFailures, "only the known id, retried")
	paths := map[string]int{}
	for _, r := range e.receiver.Requests() {
		paths[r.Path]++
	}
	require.Equal(t, 2, paths["/blank"], "both delivered")

	_, err = e.runner.Handler(e.ctx, events.SQSEvent{Records: []events.SQSMessage{blank("", "blank-3", "/down")}})
	require.ErrorContains(t, err, "no SQS message id", "retried: the invocation fails, the batch comes back")
	require.Empty(t, e.deadLetters())
}

// TestSpecialUseNamesThroughTheHandler: webhooks to special-use names are
// dead-lettered on the first receive as webhook_blocked_destination
// without a connection, although the receiver's address is allowed.
func TestSpecialUseNamesThroughTheHandler(t *testing.T) {
	t.Parallel()
	e := setup(t, options{maxReceive: 5})
	port := e.receiver.URL()[strings.LastIndex(e.receiver.URL(), ":")+1:]
	hosts := []string{"localhost", "LOCALHOST.", "api.localhost", "printer.local", "x.onion", "nas.home.arpa", "herald.invalid", "svc.test", "metadata.google.internal", "intranet"}
	for i, h := range hosts {
		e.send(webhookMessage(fmt.Sprintf("special-%d", i), "https://"+h+":"+port+"/hook"))
	}
	e.pollUntil(60*time.Second, e.queueEmpty)
	require.Empty(t, e.receiver.Requests(), "no connection reached the receiver")
	dl := e.deadLetters()
	require.Len(t, dl, len(hosts))
	for _, d := range dl {
		r := reasonOf(t, d)
		require.Equal(t, "webhook_blocked_destination", string(r.ErrorClass), r.Error)
		require.Equal(t, "permanent_failure", r.Outcome, "judged permanent on the first attempt")
	}
}

// TestEchoedCredentialsThroughTheHandler: a receiver echoing the request
// (userinfo as Basic authorization, producer headers, signature) in raw,
// base64, URL-encoded and JSON forms gets none of it into the logs or the
// dead letter's reason.
func TestEchoedCredentialsThroughTheHandler(t *testing.T) {
	t.Parallel()
	const (
		pass   = "p4ss-w0rd-XYZ"
		apiKey = "sk_live_INTEGRATION_42"
	)
	encs := map[string]func(string) string{
		"raw":    func(s string) string { return s },
		"base64": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"url":    url.QueryEscape,
		"json":   func(s string) string { b, _ := json.Marshal(s); return string(b) },
	}
	sigs := make(chan string, 64) // 4 messages × 3 attempts
	echo := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		sigs <- r.Header.Get("Webhook-Signature")
		dump := "auth=" + r.Header.Get("Authorization") + " key=" + r.Header.Get("X-Api-Key") + " sig=" + r.Header.Get("Webhook-Signature")
		w.WriteHeader(400)
		io.WriteString(w, encs[strings.TrimPrefix(r.URL.Path, "/")](dump))
	}))
	t.Cleanup(echo.Close)
	e := setup(t, options{}) // 400 is retried: dead-lettered as attempts_exhausted on receive 3
	for name := range encs {
		u := strings.Replace(echo.URL, "https://", "https://hook:"+pass+"@", 1) + "/" + name
		e.send(fmt.Sprintf(`{"version":1,"id":"echo-%s","channel":"webhook","webhook":{"url":%q,"event_type":"t","payload":{},"headers":{"X-Api-Key":%q}}}`, name, u, apiKey))
	}
	e.pollUntil(60*time.Second, e.queueEmpty)
	dl := e.deadLetters()
	require.Len(t, dl, len(encs))

	secrets := []string{pass, apiKey, base64.StdEncoding.EncodeToString([]byte("hook:" + pass))}
	close(sigs)
	for s := range sigs {
		_, b64, _ := strings.Cut(s, ",")
		secrets = append(secrets, b64)
	}
	var texts []string
	for _, d := range dl {
		r := reasonOf(t, d)
		require.Equal(t, "webhook_http_4xx", string(r.ErrorClass))
		require.Contains(t, r.Error, "HTTP 400")
		texts = append(texts, d.Attributes[redrive.AttrReason])
	}
	for _, l := range e.logs.all() {
		b, _ := json.Marshal(l)
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		for _, s := range secrets {
			for name, enc := range encs {
				require.NotContains(t, text, strings.Trim(enc(s), `"`), "%s form of a credential", name)
			}
		}
	}
}

// TestNearMaxSizeMessagesThroughTheHandler: on queues of 1 MiB, a message
// of notification.MaxMessageBytes (body and attributes) that the receiver
// refuses for good is dead-lettered whole with its reason on the first
// receive, sent once; one 500 bytes below 1 MiB is dead-lettered
// unattempted, its body whole, its reason shortened after LocalStack
// refused the dead letter with the whole one. Neither stays in the queue.
func TestNearMaxSizeMessagesThroughTheHandler(t *testing.T) {
	t.Parallel()
	e := setup(t, options{maxReceive: 5, respond: func(string, int) int { return 410 }})
	payload := `{"pad":"` + strings.Repeat("p", notification.MaxBodyBytes-len(`{"pad":""}`)) + `"}`
	body := fmt.Sprintf(`{"version":1,"id":"big-1","channel":"webhook","webhook":{"url":%q,"event_type":"t","payload":%s}}`, e.receiver.URL()+"/big", payload)
	attrName, attrType := "pad", "String"
	fill := strings.Repeat("a", notification.MaxMessageBytes-len(body)-len(attrName)-len(attrType))
	_, err := e.sqs.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(e.queues.URL), MessageBody: aws.String(body),
		MessageAttributes: map[string]types.MessageAttributeValue{attrName: {DataType: aws.String(attrType), StringValue: aws.String(fill)}}})
	require.NoError(t, err, "a message of exactly MaxMessageBytes")
	tooBig := strings.Replace(body, `"big-1"`, `"big-2"`, 1) + strings.Repeat(" ", notification.SQSMaxMessageBytes-500-len(body))
	e.send(tooBig)

	e.pollUntil(60*time.Second, e.queueEmpty)
	require.Len(t, e.receiver.Requests(), 1, "the refused one was sent once, the oversized one never")
	got := map[string]redrive.Reason{}
	bodies := map[string]int{}
	for _, d := range e.deadLetters() {
		r := reasonOf(t, d)
		got[r.NotificationID], bodies[r.NotificationID] = r, len(d.Body)
		require.Equal(t, "permanent_failure", r.Outcome, "dead-lettered on the receive it failed, not retried")
	}
	require.Equal(t, "webhook_gone", string(got["big-1"].ErrorClass))
	require.Equal(t, len(body), bodies["big-1"], "kept whole")
	require.Equal(t, string(processor.ClassMessageTooLarge), string(got["big-2"].ErrorClass))
	require.Equal(t, len(tooBig), bodies["big-2"], "kept whole")
	require.Contains(t, got["big-2"].Error, "reason shortened")
}

// TestVisibilityCheckWithBatchingWindow: the cold-start check reads the
// real queues: visibility 30 s passes 6 × 5 s, fails 6 × 5 s + a 1 s
// batching window; a dead-letter queue smaller than the queue fails, one of
// the same size passes.
func TestVisibilityCheckWithBatchingWindow(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	cfg := config.Deliver{QueueURL: e.queues.URL, DeadLetterQueueURL: e.queues.DLQURL, MaxReceiveCount: 3,
		BackoffBase: time.Second, BackoffCap: 30 * time.Second, CheckQueues: true}
	require.NoError(t, app.CheckQueues(e.ctx, cfg, e.awsCfg, 5*time.Second))
	cfg.BatchingWindow = time.Second
	require.ErrorContains(t, app.CheckQueues(e.ctx, cfg, e.awsCfg, 5*time.Second), "plus the batching window 1s")
	cfg.BatchingWindow = 0

	_, err := e.sqs.SetQueueAttributes(e.ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(e.queues.DLQURL), Attributes: map[string]string{"MaximumMessageSize": "262144"}})
	require.NoError(t, err)
	require.ErrorContains(t, app.CheckQueues(context.Background(), cfg, e.awsCfg, 0), "dead-letter queue MaximumMessageSize 262144")
	_, err = e.sqs.SetQueueAttributes(e.ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(e.queues.URL), Attributes: map[string]string{"MaximumMessageSize": "262144"}})
	require.NoError(t, err)
	require.NoError(t, app.CheckQueues(context.Background(), cfg, e.awsCfg, 0), "equal sizes")

	// Two queues created with SQS's default MaximumMessageSize (the
	// dead-letter queue keeping messages longer, as herald needs).
	name := "herald-defaults-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	dlq, err := e.sqs.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + "-dlq"), Attributes: map[string]string{"MessageRetentionPeriod": "1209600"}})
	require.NoError(t, err)
	dlqAttrs, err := e.sqs.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: dlq.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	require.NoError(t, err)
	q, err := e.sqs.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"3"}`, dlqAttrs.Attributes["QueueArn"]),
	}})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = e.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl})
		_, _ = e.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: dlq.QueueUrl})
	})
	cfg.QueueURL, cfg.DeadLetterQueueURL = aws.ToString(q.QueueUrl), aws.ToString(dlq.QueueUrl)
	require.NoError(t, app.CheckQueues(context.Background(), cfg, e.awsCfg, 0), "queues of SQS's default size")
}

// TestFIFODuplicateSentDuringARetry: on LocalStack FIFO queues, a
// producer's copy of a notification (its own retry, another deduplication
// id) sent while the first is failing waits behind it in its group and is
// recognized as a duplicate: one delivery.
func TestFIFODuplicateSentDuringARetry(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	client := sqs.NewFromConfig(awsCfg)
	queues, err := localenv.CreateFIFOQueues(ctx, client, "it-fifo-dup-"+randHex(4), 4, 30*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { queues.Delete(context.Background(), client) })
	receiver := localenv.NewReceiver(func(_ string, attempt int) int {
		if attempt == 1 {
			return 503
		}
		return 204
	})
	t.Cleanup(receiver.Close)
	logs := &logLines{}
	p, err := app.NewDeliver(config.Deliver{
		QueueURL: queues.URL, DeadLetterQueueURL: queues.DLQURL, MaxReceiveCount: 4,
		BackoffBase: time.Second, BackoffCap: 4 * time.Second, Concurrency: 10,
		WebhookSecret: testSecret, WebhookTimeout: 5 * time.Second,
		WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}, awsCfg, app.DeliverOptions{WebhookTLS: receiver.TLSConfig(), Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	require.NoError(t, err)
	runner := &localrunner.Runner{SQS: client, QueueURL: queues.URL, Handler: p.Handle, WaitTime: time.Second, FunctionTimeout: 20 * time.Second}
	send := func(dedup string) {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: aws.String(queues.URL), MessageBody: aws.String(webhookMessage("fifo-dup", receiver.URL()+"/fifo")),
			MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(dedup),
		})
		require.NoError(t, err)
	}

	send("first")
	n, err := runner.Poll(ctx) // the first attempt fails: retried in 1 s
	require.NoError(t, err)
	require.Equal(t, 1, n)
	send("producer-retry") // the copy, while the first waits for its retry
	deadline := time.Now().Add(60 * time.Second)
	for o := logs.outcomes("fifo-dup"); len(o) < 3; o = logs.outcomes("fifo-dup") {
		require.True(t, time.Now().Before(deadline), "outcomes so far: %v", o)
		_, err := runner.Poll(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, []string{"retry", "delivered", "duplicate"}, logs.outcomes("fifo-dup"))
	require.Len(t, receiver.Requests(), 2, "the failed attempt and one delivery")
}
