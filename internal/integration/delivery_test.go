//go:build integration

package integration

import (
	"fmt"
	"net/mail"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/localenv"
)

func TestEmailDeliveredAndReadBack(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	to := "jana." + randHex(4) + "@example.org"
	welcome := strings.Replace(sample(t, "email-welcome.json"), "jana@example.org", to, 1)
	templTo := "kenji." + randHex(4) + "@example.jp"
	templ := strings.Replace(sample(t, "email-template.json"), "kenji@example.jp", templTo, 1)
	e.send(welcome, templ)

	e.pollUntil(30*time.Second, func() bool {
		return len(e.logs.outcomes("ntf_01HZY3K6W9Q4T2M8B5C7D1E0FA")) > 0 && len(e.logs.outcomes("ntf_01HZY3P7R8S9T0U1V2W3X4Y5Z6")) > 0
	})
	require.Equal(t, []string{"delivered"}, e.logs.outcomes("ntf_01HZY3K6W9Q4T2M8B5C7D1E0FA"))
	require.Equal(t, []string{"delivered"}, e.logs.outcomes("ntf_01HZY3P7R8S9T0U1V2W3X4Y5Z6"))

	emails, err := localenv.SentEmails(e.ctx, os.Getenv("AWS_ENDPOINT_URL_SESV2"))
	require.NoError(t, err)
	// The emulator stores mailboxes as sent: display names RFC 2047-encoded.
	byTo := map[string]localenv.SentEmail{}
	names := map[string]string{}
	for _, m := range emails {
		for _, a := range m.Destination.To {
			addr, err := mail.ParseAddress(a)
			require.NoError(t, err, "SES got an RFC 5322 mailbox: %q", a)
			byTo[addr.Address], names[addr.Address] = m, addr.Name
		}
	}
	got, ok := byTo[to]
	require.True(t, ok, "the welcome email reached the SES emulator; it holds %+v", emails)
	require.Equal(t, "Jana Nováková", names[to])
	from, err := mail.ParseAddress(got.From)
	require.NoError(t, err)
	require.Equal(t, mail.Address{Name: "Müller & Söhne", Address: "noreply@example.com"}, *from)
	require.Equal(t, "Willkommen bei Müller & Söhne — Ihr Konto ist bereit ✅", got.Subject)
	require.Equal(t, "Hallo Jana,\n\nIhr Konto ist bereit. Viel Spaß!\n", got.Body.Text)
	require.Contains(t, got.Body.HTML, "<strong>bereit</strong>")

	tm, ok := byTo[templTo]
	require.True(t, ok, "the template email reached the SES emulator")
	require.Contains(t, tm.Subject+tm.Body.Text+tm.Body.HTML, "健二", "the stored template was rendered with the data")
}

func TestWebhookSignatureVerifiedByReferenceLibrary(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	body := strings.ReplaceAll(sample(t, "webhook-invoice-paid.json"), "https://hooks.example.test", e.receiver.URL())
	e.send(body)
	e.pollUntil(30*time.Second, func() bool { return len(e.receiver.Requests()) > 0 })

	reqs := e.receiver.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	require.Equal(t, "/acme/billing", r.Path)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	require.Equal(t, "evt_2Yq8mT4vN1xK7pR3sW9zB6cD", r.Header.Get("webhook-id"))
	require.Equal(t, "acme", r.Header.Get("X-Tenant"))
	require.Contains(t, string(r.Body), `"type":"invoice.paid"`)
	h := map[string]string{
		"webhook-id":        r.Header.Get("webhook-id"),
		"webhook-timestamp": r.Header.Get("webhook-timestamp"),
		"webhook-signature": r.Header.Get("webhook-signature"),
	}
	secret := derivedSecret(t, testSecret, e.receiver.URL())
	require.NoError(t, verifyWithReference(t, secret, h, r.Body), "the reference library accepts our signature with the receiver's secret")
	require.Error(t, verifyWithReference(t, testSecret, h, r.Body), "the deployment secret itself is not the receiver's")
	tampered := []byte(strings.Replace(string(r.Body), "125000", "1", 1))
	require.Error(t, verifyWithReference(t, secret, h, tampered), "and rejects a tampered body")
	require.Equal(t, []string{"delivered"}, e.logs.outcomes("evt_2Yq8mT4vN1xK7pR3sW9zB6cD"))
}

func TestWebhookFailingTwiceDeliveredOnThirdReceive(t *testing.T) {
	t.Parallel()
	e := setup(t, options{maxReceive: 5, respond: func(_ string, attempt int) int {
		if attempt <= 2 {
			return 503
		}
		return 204
	}})
	e.send(fmt.Sprintf(`{"version":1,"id":"flaky-1","channel":"webhook","webhook":{"url":"%s/flaky","event_type":"t","payload":{}}}`, e.receiver.URL()))
	e.pollUntil(60*time.Second, func() bool { return len(e.receiver.Requests()) >= 3 })

	reqs := e.receiver.Requests()
	require.Len(t, reqs, 3)
	require.Equal(t, []string{"retry", "retry", "delivered"}, e.logs.outcomes("flaky-1"))
	var lines []map[string]any
	for _, l := range e.logs.all() {
		if l["id"] == "flaky-1" {
			lines = append(lines, l)
		}
	}
	for i, l := range lines[:2] {
		require.Equal(t, "webhook_http_5xx", l["error_class"])
		// Base 1 s: the delay after receive n is 2^(n−1) s, less up to 20 %
		// jitter, rounded up to whole seconds.
		n := int(l["receive_count"].(float64))
		delay := time.Duration(l["delay_seconds"].(float64)) * time.Second
		schedule := time.Second << (n - 1)
		require.LessOrEqual(t, delay, schedule)
		require.GreaterOrEqual(t, delay, schedule*8/10)

		gap := reqs[i+1].At.Sub(reqs[i].At)
		require.GreaterOrEqual(t, gap, delay, "no attempt before herald's delay")
		// The queue's own visibility timeout is 30 s: an attempt well before
		// it proves herald's visibility change decided the time. A receive
		// whose answer was lost in transit (the receive count then skips one)
		// hides the message for those 30 s, as SQS does; then only the lower
		// bound applies.
		if next := int(lines[i+1]["receive_count"].(float64)); next == n+1 {
			require.Less(t, gap, 10*time.Second, "attempt %d came after the queue's timeout, not herald's delay", i+2)
		} else {
			t.Logf("receive %d was lost in transit (receive count %d → %d); upper bound not checked", n+1, n, next)
		}
	}
	require.True(t, e.queueEmpty())
	require.Empty(t, e.deadLetters())
}

func TestWebhookAlwaysFailingDeadLetteredAfterMaxReceiveCount(t *testing.T) {
	t.Parallel()
	e := setup(t, options{maxReceive: 3, respond: func(string, int) int { return 500 }})
	body := fmt.Sprintf(`{"version":1,"id":"down-1","channel":"webhook","webhook":{"url":"%s/down","event_type":"t","payload":{"k":"v"}}}`, e.receiver.URL())
	e.send(body)
	e.pollUntil(60*time.Second, func() bool {
		o := e.logs.outcomes("down-1")
		return len(o) > 0 && o[len(o)-1] == "dead_lettered"
	})
	require.Equal(t, []string{"retry", "retry", "dead_lettered"}, e.logs.outcomes("down-1"))
	require.Len(t, e.receiver.Requests(), 3, "one attempt per receive")

	dl := e.deadLetters()
	require.Len(t, dl, 1)
	require.Equal(t, body, dl[0].Body, "the original body")
	r := reasonOf(t, dl[0])
	require.Equal(t, "attempts_exhausted", r.Outcome)
	require.Equal(t, delivery.Class("webhook_http_5xx"), r.ErrorClass)
	require.Equal(t, 3, r.Attempts)
	require.Equal(t, "down-1", r.NotificationID)
	require.Contains(t, r.Error, "500")
	require.NotContains(t, r.Error, "/down", "no URL path in the reason")
	require.Equal(t, e.queues.ARN, r.SourceQueueARN)
	require.NotZero(t, r.OriginalSentTimestamp)
	require.True(t, e.queueEmpty())
}

func TestPoisonSamplesDeadLetteredOnFirstReceive(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	files := map[string]string{ // sample → what its reason must name
		"poison-not-json.json":        "invalid JSON",
		"poison-wrong-types.json":     "email.to",
		"poison-unknown-channel.json": "channel",
		"poison-missing-id.json":      "id",
		"poison-future-version.json":  "version",
	}
	bodies := map[string]string{}
	for f := range files {
		b := strings.ReplaceAll(sample(t, f), "https://hooks.example.test", e.receiver.URL())
		bodies[b] = f
		e.send(b)
	}
	e.pollUntil(30*time.Second, func() bool { return len(e.logs.all()) >= len(files) })

	require.Empty(t, e.receiver.Requests(), "no delivery attempt for a poison message")
	dl := e.deadLetters()
	require.Len(t, dl, len(files))
	for _, d := range dl {
		f, ok := bodies[d.Body]
		require.True(t, ok, "dead letter keeps the original body: %q", d.Body)
		r := reasonOf(t, d)
		require.Equal(t, delivery.ClassInvalidMessage, r.ErrorClass, f)
		require.Equal(t, "permanent_failure", r.Outcome, f)
		require.Equal(t, 1, r.Attempts, "%s dead-lettered on its first receive", f)
		require.Contains(t, r.Error, files[f], f)
		if f == "poison-wrong-types.json" {
			require.Equal(t, "poison-types", r.NotificationID, "an invalid message is still named by its id")
		}
	}
	require.True(t, e.queueEmpty())
}

func TestExpiredWebhookDroppedWithoutRequest(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	e.send(strings.ReplaceAll(sample(t, "webhook-expired.json"), "https://hooks.example.test", e.receiver.URL()))
	e.pollUntil(30*time.Second, func() bool { return len(e.logs.outcomes("evt_stale_0001")) > 0 })
	require.Equal(t, []string{"dropped"}, e.logs.outcomes("evt_stale_0001"))
	require.Empty(t, e.receiver.Requests())
	require.Empty(t, e.deadLetters())
	require.True(t, e.queueEmpty())
}

// TestBlockedWebhookDestinationsDeadLetteredOnFirstReceive: with only the
// receiver's 127.0.0.1 allowed, webhooks to the instance metadata endpoint
// and other private addresses fail permanently, without a request, and
// their reason names the address but not the URL's path or query.
func TestBlockedWebhookDestinationsDeadLetteredOnFirstReceive(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	port := e.receiver.URL()[strings.LastIndex(e.receiver.URL(), ":")+1:]
	urls := map[string]string{ // notification id → URL
		"imds":     "https://169.254.169.254/latest/meta-data/iam/security-credentials/?token=SECRET",
		"loop6":    "https://[::1]:" + port + "/hook?token=SECRET",
		"loop-2":   "https://127.0.0.2:" + port + "/hook?token=SECRET",
		"private":  "https://10.0.0.1/hook?token=SECRET",
		"imds-v6":  "https://[fd00:ec2::254]/latest/meta-data/?token=SECRET",
		"imds-dec": "https://2852039166/latest/meta-data/?token=SECRET",
	}
	for id, u := range urls {
		e.send(fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":%q,"event_type":"t","payload":{}}}`, "blocked-"+id, u))
	}
	e.pollUntil(30*time.Second, func() bool { return len(e.logs.all()) >= len(urls) })

	require.Empty(t, e.receiver.Requests(), "no request reaches a blocked destination")
	dl := e.deadLetters()
	require.Len(t, dl, len(urls))
	for _, d := range dl {
		r := reasonOf(t, d)
		require.Equal(t, "permanent_failure", r.Outcome, r.NotificationID)
		require.Equal(t, delivery.Class("webhook_blocked_destination"), r.ErrorClass, r.NotificationID)
		require.Equal(t, 1, r.Attempts, r.NotificationID)
		require.Contains(t, r.Error, "blocked destination", r.NotificationID)
		require.NotContains(t, r.Error, "SECRET", r.NotificationID)
		require.NotContains(t, r.Error, "meta-data", r.NotificationID)
		require.NotContains(t, r.Error, "/hook", r.NotificationID)
	}
	require.True(t, e.queueEmpty())
}

// TestEmailMissingTemplateDeadLetteredAsTemplateNotFound: an email naming a
// template the SES v2 emulator does not hold is dead-lettered on its first
// receive as ses_template_not_found (docs/operations.md says how to create
// one locally).
func TestEmailMissingTemplateDeadLetteredAsTemplateNotFound(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	body := strings.Replace(sample(t, "email-template.json"), `"password-reset"`, `"no-such-template-`+randHex(4)+`"`, 1)
	e.send(body)
	e.pollUntil(30*time.Second, func() bool { return len(e.logs.outcomes("ntf_01HZY3P7R8S9T0U1V2W3X4Y5Z6")) > 0 })
	dl := e.deadLetters()
	require.Len(t, dl, 1)
	r := reasonOf(t, dl[0])
	require.Equal(t, email.ClassTemplateNotFound, r.ErrorClass, r.Error)
	require.Equal(t, 1, r.Attempts)
}
