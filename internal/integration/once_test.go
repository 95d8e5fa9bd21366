//go:build integration

package integration

import (
	"net/mail"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/localrunner"
	"github.com/heraldhq/herald/notification"
)

// onceSetup is a test's queue pair and two execution environments of the
// deliver function, a and b, sharing the local stack's DynamoDB table
// (moto, behind LocalStack): each its own processor, as two Lambda
// execution environments have, both polling the one queue.
func onceSetup(t *testing.T, respond func(string, int) int) (e *env, b *localrunner.Runner) {
	t.Helper()
	// The provisioned table (storeTable). Not in the tests' environment: a
	// bootstrap started with it would remember the fixed ids of other tests
	// from one run to the next.
	table := storeTable(t)
	var cfg config.Deliver
	var opts app.DeliverOptions
	e = setup(t, options{respond: respond, deliver: func(_ *env, c *config.Deliver, o *app.DeliverOptions) {
		c.StoreTable, c.DeliveredOnceWindow = table, 24*time.Hour
		// Webhooks too: by default only email and chat are delivered once.
		c.DeliveredOnceChannels = notification.Channels
		cfg, opts = *c, *o
	}})
	require.True(t, cfg.DeliveredOnce())
	p, err := app.NewDeliverContext(e.ctx, cfg, e.awsCfg, opts)
	require.NoError(t, err)
	// Invocations of 5 s: a copy held back by another's lease comes back
	// within seconds.
	e.runner.FunctionTimeout = 5 * time.Second
	b = &localrunner.Runner{SQS: e.sqs, QueueURL: e.queues.URL, Handler: p.Handle, WaitTime: time.Second, FunctionTimeout: 5 * time.Second}
	return e, b
}

// requestsFor counts the receiver's requests carrying webhook-id id.
func requestsFor(e *env, id string) int {
	n := 0
	for _, r := range e.receiver.Requests() {
		if r.Header.Get("webhook-id") == id {
			n++
		}
	}
	return n
}

// emailsTo counts the SES emulator's emails to addr.
func emailsTo(t *testing.T, e *env, addr string) int {
	t.Helper()
	emails, err := localenv.SentEmails(e.ctx, os.Getenv("AWS_ENDPOINT_URL_SESV2"))
	require.NoError(t, err)
	n := 0
	for _, m := range emails {
		for _, a := range m.Destination.To {
			if to, err := mail.ParseAddress(a); err == nil && to.Address == addr {
				n++
			}
		}
	}
	return n
}

// TestDeliveredOnceAcrossExecutionEnvironments: SQS hands a delivered
// webhook and a delivered email over again, to another execution
// environment: neither is sent again; each copy is a duplicate.
func TestDeliveredOnceAcrossExecutionEnvironments(t *testing.T) {
	t.Parallel()
	e, b := onceSetup(t, nil)
	hookID, mailID := "once-hook-"+randHex(4), "once-mail-"+randHex(4)
	to := "once." + randHex(4) + "@example.org"
	hook := `{"version":1,"id":"` + hookID + `","channel":"webhook","webhook":{"url":"` + e.receiver.URL() + `/once","event_type":"t","payload":{}}}`
	email := `{"version":1,"id":"` + mailID + `","channel":"email","email":{"to":["` + to + `"],"subject":"once","text":"once"}}`

	e.send(hook, email)
	e.pollUntil(30*time.Second, func() bool {
		return len(e.logs.outcomes(hookID)) > 0 && len(e.logs.outcomes(mailID)) > 0
	})
	require.Equal(t, []string{"delivered"}, e.logs.outcomes(hookID))
	require.Equal(t, []string{"delivered"}, e.logs.outcomes(mailID))

	e.send(hook, email) // handed over again
	deadline := time.Now().Add(30 * time.Second)
	for len(e.logs.outcomes(hookID)) < 2 || len(e.logs.outcomes(mailID)) < 2 {
		require.True(t, time.Now().Before(deadline), "copies not handled: %v", e.logs.all())
		_, err := b.Poll(e.ctx)
		require.NoError(t, err)
	}
	require.Equal(t, []string{"delivered", "duplicate"}, e.logs.outcomes(hookID))
	require.Equal(t, []string{"delivered", "duplicate"}, e.logs.outcomes(mailID))
	require.Equal(t, 1, requestsFor(e, hookID), "the webhook was sent once")
	require.Equal(t, 1, emailsTo(t, e, to), "the email was sent once")
	require.True(t, e.queueEmpty(), "the copies were acknowledged")
}

// TestDeliveredOnceCopiesAtTheSameMoment: two copies polled by two
// execution environments at once, the receiver slow to answer: one send.
func TestDeliveredOnceCopiesAtTheSameMoment(t *testing.T) {
	t.Parallel()
	e, b := onceSetup(t, func(string, int) int { time.Sleep(500 * time.Millisecond); return 200 })
	id := "once-same-" + randHex(4)
	hook := `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + e.receiver.URL() + `/same","event_type":"t","payload":{}}}`
	// One record per invocation: each environment takes one copy.
	e.runner.BatchSize, b.BatchSize = 1, 1
	e.send(hook, hook)
	deadline := time.Now().Add(60 * time.Second)
	for !(strings.Contains(strings.Join(e.logs.outcomes(id), ","), "delivered") && e.queueEmpty()) {
		require.True(t, time.Now().Before(deadline), "not settled: %v", e.logs.all())
		var wg sync.WaitGroup
		for _, r := range []*localrunner.Runner{e.runner, b} {
			wg.Go(func() { _, err := r.Poll(e.ctx); require.NoError(t, err) })
		}
		wg.Wait()
	}
	require.Equal(t, 1, requestsFor(e, id), "outcomes %v", e.logs.outcomes(id))
	t.Logf("outcomes of the two copies: %v", e.logs.outcomes(id))
}
