//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
)

// The chaos run's settings: small, so that retries and crashed batches come
// back within seconds.
const (
	chaosMaxReceive      = 4
	chaosVisibility      = 5 * time.Second // the queue's visibility timeout
	chaosFunctionTimeout = 4 * time.Second // each invocation's deadline (< visibility)
	chaosWebhookTimeout  = 400 * time.Millisecond
	chaosRunners         = 3 // concurrent invocations, as the event source mapping's
)

// fate is what the receivers and the producer make of one notification.
type fate int

const (
	fateOK      fate = iota // webhook answered 204
	fateEmail               // email through the SES emulator
	fateFlaky               // 503 on the first 1 or 2 attempts (at random), then 200
	fateLimited             // 429 with Retry-After: 1 on the first 1 or 2 attempts, then 200
	fateSlow                // the first 1 or 2 attempts answered after the webhook timeout, then 200
	fateGone                // 410: permanent
	fateDown                // 503 always: attempts exhausted
	fateExpired             // expires_at passed: dropped
	fateCount
)

func (f fate) String() string {
	return [...]string{"ok", "email", "flaky", "limited", "slow", "gone", "down", "expired"}[f]
}

// fateOf spreads the fates over the ids: half plain webhooks, the rest
// evenly over the faults.
func fateOf(i int) fate {
	if i%2 == 0 {
		return fateOK
	}
	return fate(1 + (i/2)%int(fateCount-1))
}

// TestChaosNothingLost sends HERALD_CHAOS_N notifications (default 300)
// through the local event source mapping with injected faults: transient
// and permanent receiver failures, timeouts, and invocations killed, some
// in the middle of their deliveries and some after them but before the
// acknowledgement. The deliver function remembers deliveries in the local
// stack's DynamoDB table (delivered once). It passes when every notification
// is delivered, dropped or dead-lettered, every duplicate is explained by a
// kill, and a notification delivered twice was in a batch killed in the
// middle of its deliveries: the crash window between a send and its batch's
// confirm (docs/reliability.md); a kill after the deliveries, or a lost
// acknowledgement, leaves every delivery recorded, so its copy is a
// duplicate, not sent.
func TestChaosNothingLost(t *testing.T) {
	t.Parallel()
	n := 300
	if s := os.Getenv("HERALD_CHAOS_N"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err, "HERALD_CHAOS_N")
	}
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Fatal("AWS_ENDPOINT_URL is not set: run the integration tests with `make test`, which starts the local stack")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute+time.Duration(n)*60*time.Millisecond)
	defer cancel()
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	client := sqs.NewFromConfig(awsCfg)
	run := randHex(4)
	queues, err := localenv.CreateQueues(ctx, client, "chaos-"+run, chaosMaxReceive, chaosVisibility)
	require.NoError(t, err)
	t.Cleanup(func() { queues.Delete(context.Background(), client) })

	// The plan: id → fate and failed attempts, and the receivers that act
	// it out. HERALD_CHAOS_SEED repeats a run's plan (kill timing aside).
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("HERALD_CHAOS_SEED"); s != "" {
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "HERALD_CHAOS_SEED")
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	ids := make([]string, n)
	fates := map[string]fate{}
	failures := map[string]int{} // transient failures before success
	for i := range ids {
		ids[i] = fmt.Sprintf("chaos-%s-%05d", run, i)
		fates[ids[i]] = fateOf(i)
		failures[ids[i]] = 1 + rng.IntN(2)
	}
	respond := func(path string, attempt int) localenv.Response {
		id := strings.TrimPrefix(path, "/")
		switch fates[id] {
		case fateFlaky:
			if attempt <= failures[id] {
				return localenv.Response{Status: 503}
			}
		case fateLimited:
			if attempt <= failures[id] {
				return localenv.Response{Status: 429, Header: http.Header{"Retry-After": {"1"}}}
			}
		case fateSlow:
			if attempt <= failures[id] {
				return localenv.Response{Status: 200, Delay: 3 * chaosWebhookTimeout}
			}
		case fateGone:
			return localenv.Response{Status: 410}
		case fateDown:
			return localenv.Response{Status: 503}
		}
		return localenv.Response{Status: 204}
	}
	receivers := make([]*localenv.Receiver, 3)
	for i := range receivers {
		receivers[i] = localenv.NewReceiverWith(respond)
		t.Cleanup(receivers[i].Close)
	}

	logs := &logLines{}
	// The processor's own SQS calls go through sends, which notes each
	// dead-letter SendMessage attempt the SDK retries.
	sends := &sendWatch{next: awsCfg.HTTPClient, retried: map[string]bool{}, tried: map[string]int{}}
	procCfg := awsCfg.Copy()
	procCfg.HTTPClient = sends
	p, err := app.NewDeliver(config.Deliver{
		QueueURL: queues.URL, DeadLetterQueueURL: queues.DLQURL, MaxReceiveCount: chaosMaxReceive,
		BackoffBase: time.Second, BackoffCap: 4 * time.Second, Concurrency: 10,
		EmailDefaultFrom: "noreply@example.com",
		WebhookSecret:    testSecret, WebhookTimeout: chaosWebhookTimeout,
		WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		StoreTable:        storeTable(t), DeliveredOnceWindow: 24 * time.Hour,
	}, procCfg, app.DeliverOptions{WebhookTLS: receivers[0].TLSConfig(), Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	require.NoError(t, err)
	// Every receiver serves the same test certificate, so one TLS config
	// trusts them all.
	require.NoError(t, app.CheckQueues(ctx, config.Deliver{
		QueueURL: queues.URL, DeadLetterQueueURL: queues.DLQURL, MaxReceiveCount: chaosMaxReceive,
		BackoffBase: time.Second, BackoffCap: 4 * time.Second, CheckQueues: true,
	}, awsCfg, 0), "the chaos queues agree with the settings")

	start := time.Now()
	sendAll(t, ctx, client, queues.URL, ids, func(i int) string {
		id := ids[i]
		switch fates[id] {
		case fateEmail:
			return fmt.Sprintf(`{"version":1,"id":%q,"channel":"email","email":{"to":["chaos@example.org"],"subject":"chaos %s","text":"x"}}`, id, id)
		case fateExpired:
			return fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","expires_at":"2026-01-01T00:00:00Z","webhook":{"url":"%s/%s","event_type":"chaos","payload":{}}}`, id, receivers[i%3].URL(), id)
		}
		return fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":"%s/%s","event_type":"chaos","payload":{"i":%d}}}`, id, receivers[i%3].URL(), id, i)
	})
	sentIn := time.Since(start)

	// The killer: every killEvery-th invocation is killed, alternately in the
	// middle of its deliveries (its context cancelled after a random 20–300
	// ms) and after them but before the runner deletes anything. Either way
	// the runner gets no response and stops, as a crashed Lambda instance
	// would; a supervisor starts a new one.
	kills := max(6, n/100)
	invocationsGuess := n / 8
	k := &killer{every: max(2, invocationsGuess/(kills+1)), max: int32(kills), killed: map[string]bool{}, killedMid: map[string]bool{}}
	acks := &ackWatch{API: client, received: map[string]received{}, lost: map[string]string{}}
	runCtx, stopRunners := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range chaosRunners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				rctx, crash := context.WithCancel(runCtx)
				r := &localrunner.Runner{
					SQS: acks, QueueURL: queues.URL, WaitTime: time.Second, FunctionTimeout: chaosFunctionTimeout,
					Handler: k.wrap(p.Handle, crash),
					Logger:  slog.New(slog.DiscardHandler),
				}
				_ = r.Run(rctx)
				crash()
			}
		}()
	}

	// The run ends when the queue holds nothing, visible or in flight, on
	// two checks in a row.
	empty := 0
	for empty < 2 {
		select {
		case <-ctx.Done():
			stopRunners()
			wg.Wait()
			t.Fatalf("the queue did not drain within the time limit: %s", queueCounts(ctx, client, queues.URL))
		case <-time.After(time.Second):
		}
		if queueCounts(ctx, client, queues.URL) == "0/0/0" {
			empty++
		} else {
			empty = 0
		}
	}
	stopRunners()
	wg.Wait()
	drainedIn := time.Since(start)

	// What each notification came to.
	delivered := map[string]int{} // answered 2xx in time, or accepted by SES
	late := map[string]int{}      // the receiver answered after herald's timeout
	for _, rc := range receivers {
		for _, r := range rc.Requests() {
			id := strings.TrimPrefix(r.Path, "/")
			switch {
			case r.Late:
				late[id]++
			case r.Status/100 == 2:
				delivered[id]++
			}
			require.Equal(t, id, r.Header.Get("webhook-id"), "the webhook-id is the notification id")
		}
	}
	emails, err := localenv.SentEmails(ctx, os.Getenv("AWS_ENDPOINT_URL_SESV2"))
	require.NoError(t, err)
	for _, m := range emails {
		if id, ok := strings.CutPrefix(m.Subject, "chaos "); ok && strings.HasPrefix(id, "chaos-"+run+"-") {
			delivered[id]++
		}
	}
	dropped := map[string]bool{}
	for _, l := range logs.all() {
		// Record lines only: a batch's metrics line carries an outcome
		// dimension and no id.
		if id, ok := l["id"].(string); ok && l["outcome"] == "dropped" {
			dropped[id] = true
		}
	}
	dl, err := localenv.ReceiveAll(ctx, client, queues.DLQURL, time.Minute)
	require.NoError(t, err)
	withReason := map[string]int{}
	withoutReason := map[string]int{} // moved by the redrive policy
	for _, d := range dl {
		var body struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(d.Body), &body))
		if raw, ok := d.Attributes[redrive.AttrReason]; ok {
			var r redrive.Reason
			require.NoError(t, json.Unmarshal([]byte(raw), &r))
			require.Equal(t, body.ID, r.NotificationID)
			require.NotEmpty(t, r.ErrorClass)
			if fates[body.ID] == fateGone && r.Outcome == "permanent_failure" {
				require.Equal(t, "webhook_gone", string(r.ErrorClass))
			}
			withReason[body.ID]++
		} else {
			withoutReason[body.ID]++
		}
	}

	var lost, duplicates, unexplained, deliveredTwice, outsideWindow []string
	causes := map[string]int{}
	for _, id := range ids {
		deadLetters := withReason[id] + withoutReason[id]
		if delivered[id] == 0 && !dropped[id] && deadLetters == 0 {
			lost = append(lost, id)
		}
		switch fates[id] {
		case fateGone, fateDown, fateExpired:
			require.Zero(t, delivered[id], "%s (%s) was never to be delivered", id, fates[id])
		}
		if delivered[id] > 1 {
			deliveredTwice = append(deliveredTwice, id)
			if !k.wasKilledMid(id) && !answerCrossedTimeout(logs, id) {
				outsideWindow = append(outsideWindow, fmt.Sprintf("%s: delivered %d times, not in a batch killed mid-delivery; outcomes %v", id, delivered[id], logs.outcomes(id)))
			}
		}
		copies := delivered[id] + deadLetters
		if copies <= 1 {
			continue
		}
		duplicates = append(duplicates, id)
		cause := "kill between delivery and acknowledgement"
		ackLost := acks.lostFor(id)
		switch {
		case !k.wasKilled(id) && deadLetters > 1 && sends.wasRetried(id):
			t.Logf("%s: duplicate dead letter without a kill: the SDK retried a SendMessage that had reached SQS; outcomes %v", id, logs.outcomes(id))
			cause = "no kill; the SDK retried a dead-letter SendMessage that had reached SQS"
		case !k.wasKilled(id) && ackLost != "":
			t.Logf("%s: duplicate without a kill: the acknowledgement %s; outcomes %v", id, ackLost, logs.outcomes(id))
			cause = "no kill; the acknowledgement failed"
			if strings.HasPrefix(ackLost, "came") {
				cause = "no kill; the acknowledgement came past the visibility timeout"
			}
		case !k.wasKilled(id) && delivered[id] > 1 && answerCrossedTimeout(logs, id):
			// The receiver answered 2xx as herald's webhook timeout fired:
			// at least once, as Standard Webhooks receivers expect (they
			// deduplicate on webhook-id). Seen on a machine at load 30.
			t.Logf("%s: delivered again after an answer that crossed herald's webhook timeout; outcomes %v", id, logs.outcomes(id))
			cause = "no kill; the receiver's answer crossed herald's webhook timeout"
		case !k.wasKilled(id) && delivered[id] == 0:
			// No notification reached anyone twice: the dead-letter queue
			// holds a second copy. Seen twice in soak runs on an overloaded
			// LocalStack, cause not established (docs/reliability.md); kept
			// visible in the figures, not a delivery duplicate.
			t.Logf("%s: dead letter stored twice without a kill; outcomes %v", id, logs.outcomes(id))
			cause = "no kill; dead letter stored twice (nothing delivered twice), cause not established"
		case !k.wasKilled(id):
			unexplained = append(unexplained, fmt.Sprintf("%s: delivered %d, dead letters %d+%d; outcomes %v", id, delivered[id], withReason[id], withoutReason[id], logs.outcomes(id)))
			cause = "unexplained"
		case delivered[id] > 1:
			cause += " (delivered again)"
		case deadLetters > 1:
			cause += " (dead-lettered again)"
		default:
			cause += " (delivered, then moved by the redrive policy)"
		}
		causes[cause]++
	}
	var reasonless []string
	for id := range withoutReason {
		if !k.wasKilled(id) && acks.lostFor(id) == "" {
			reasonless = append(reasonless, id)
		}
	}
	sort.Strings(reasonless)

	countOf := func(m map[string]int) (ids, total int) {
		for _, v := range m {
			ids, total = ids+1, total+v
		}
		return
	}
	dIDs, dTotal := countOf(delivered)
	rIDs, rTotal := countOf(withReason)
	nIDs, nTotal := countOf(withoutReason)
	lIDs, lTotal := countOf(late)
	summary := []string{
		fmt.Sprintf("chaos run: N=%d, seed %d, %d runners, maxReceiveCount %d, visibility %s, webhook timeout %s; sent in %s, drained in %s",
			n, seed, chaosRunners, chaosMaxReceive, chaosVisibility, chaosWebhookTimeout, sentIn.Round(time.Millisecond), drainedIn.Round(time.Millisecond)),
		fmt.Sprintf("  sent            %d", n),
		fmt.Sprintf("  delivered       %d ids (%d deliveries)", dIDs, dTotal),
		fmt.Sprintf("  dropped         %d (expired)", len(dropped)),
		fmt.Sprintf("  dead-lettered   %d ids with herald.reason (%d letters), %d ids moved by the redrive policy after a kill (%d letters)", rIDs, rTotal, nIDs, nTotal),
		fmt.Sprintf("  duplicates      %d ids", len(duplicates)),
		fmt.Sprintf("  delivered twice %d ids, each in a batch killed mid-delivery (the crash window between a send and its batch's confirm); duplicates settled unsent: %d", len(deliveredTwice), countOutcome(logs, "duplicate")),
	}
	causeNames := make([]string, 0, len(causes))
	for c := range causes {
		causeNames = append(causeNames, c)
	}
	sort.Strings(causeNames)
	for _, c := range causeNames {
		summary = append(summary, fmt.Sprintf("    %4d  %s", causes[c], c))
	}
	summary = append(summary,
		fmt.Sprintf("  late answers    %d ids (%d requests answered after herald's webhook timeout, then retried: receivers deduplicate by webhook-id)", lIDs, lTotal),
		fmt.Sprintf("  kills           %d invocations killed (%d records in them), of %d invocations", k.count.Load(), len(k.killed), k.invocations.Load()),
		fmt.Sprintf("  lost            %d", len(lost)),
	)
	t.Log("\n" + strings.Join(summary, "\n"))
	if len(lost) > 0 {
		t.Logf("dead-letter queue now (visible/in flight/delayed): %s; main queue: %s", queueCounts(ctx, client, queues.DLQURL), queueCounts(ctx, client, queues.URL))
	}
	for _, id := range lost {
		var lines []string
		for _, l := range logs.all() {
			if l["id"] == id {
				lines = append(lines, fmt.Sprintf("%v@%v(%v %v)", l["outcome"], l["receive_count"], l["error_class"], l["sqs_error"]))
			}
		}
		t.Logf("lost %s: fate %v, killed batch %v, requests %d, log %v", id, fates[id], k.wasKilled(id), late[id]+delivered[id], lines)
	}

	require.Empty(t, lost, "every notification is delivered, dropped or dead-lettered")
	require.Empty(t, unexplained, "duplicates only where a kill fell between delivery and acknowledgement")
	require.Empty(t, outsideWindow, "delivered once but for a kill between a send and its record")
	require.Empty(t, reasonless, "a dead letter without herald.reason only after a kill")
	require.Positive(t, k.count.Load(), "the run killed invocations")
	require.GreaterOrEqual(t, len(sends.tried), rIDs, "sendWatch saw the dead-letter sends")
	require.Positive(t, len(dropped))
	require.Positive(t, rIDs)
}

// answerCrossedTimeout reports whether herald logged a retry of id for its
// webhook timeout: a receiver may have answered 2xx to that request as the
// timeout fired (its own Late flag then stays false), so a second delivery
// is the at-least-once the timeout implies, not a lost record of a send.
func answerCrossedTimeout(logs *logLines, id string) bool {
	for _, l := range logs.all() {
		if l["id"] == id && l["outcome"] == "retry" && l["error_class"] == string(webhook.ClassTimeout) {
			return true
		}
	}
	return false
}

// ackWatch passes the runner's SQS calls through and notes, by
// notification id, every acknowledgement that failed or came after the
// queue's visibility timeout: the record had come back, so its delivery or
// dead-letter move can happen again without a kill.
type ackWatch struct {
	localrunner.API

	mu       sync.Mutex
	received map[string]received // by receipt handle
	lost     map[string]string   // notification id → why
}

type received struct {
	id string
	at time.Time
}

func (a *ackWatch) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	out, err := a.API.ReceiveMessage(ctx, in, optFns...)
	if err != nil {
		return out, err
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range out.Messages {
		var body struct{ ID string }
		_ = json.Unmarshal([]byte(aws.ToString(m.Body)), &body)
		a.received[aws.ToString(m.ReceiptHandle)] = received{id: body.ID, at: now}
	}
	return out, nil
}

func (a *ackWatch) DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	out, err := a.API.DeleteMessageBatch(ctx, in, optFns...)
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	failed := map[string]bool{}
	if out != nil {
		for _, f := range out.Failed {
			failed[aws.ToString(f.Id)] = true
		}
	}
	for _, e := range in.Entries {
		r := a.received[aws.ToString(e.ReceiptHandle)]
		switch {
		case err != nil || failed[aws.ToString(e.Id)]:
			a.lost[r.id] = "failed"
		case now.Sub(r.at) >= chaosVisibility:
			a.lost[r.id] = fmt.Sprintf("came %s after the receive, past the visibility timeout", now.Sub(r.at).Round(100*time.Millisecond))
		}
	}
	return out, err
}

func (a *ackWatch) lostFor(id string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lost[id]
}

// sendWatch is the processor's HTTP client: it notes, by notification id,
// a SendMessage tried again after an attempt that failed (an error or a
// 5xx answer). SQS may have kept the first one: a standard queue has no
// deduplication, so the dead-letter queue then holds two copies.
type sendWatch struct {
	next aws.HTTPClient

	mu      sync.Mutex
	tried   map[string]int
	retried map[string]bool
}

func (w *sendWatch) Do(req *http.Request) (*http.Response, error) {
	id := ""
	if req.Header.Get("X-Amz-Target") == "AmazonSQS.SendMessage" && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		var in struct{ MessageBody string }
		_ = json.Unmarshal(b, &in)
		var n struct{ ID string }
		_ = json.Unmarshal([]byte(in.MessageBody), &n)
		id = n.ID
	}
	resp, err := w.next.Do(req)
	if id != "" {
		w.mu.Lock()
		w.tried[id]++
		if err != nil || resp.StatusCode >= 500 {
			w.retried[id] = true // the next attempt, if any, is a retry
		}
		w.mu.Unlock()
	}
	return resp, err
}

func (w *sendWatch) wasRetried(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.retried[id] && w.tried[id] > 1
}

// killer wraps the handler and kills every every-th invocation, up to max.
type killer struct {
	every       int
	max         int32
	invocations atomic.Int32
	count       atomic.Int32

	mu        sync.Mutex
	killed    map[string]bool // notification ids in a killed batch
	killedMid map[string]bool // those in a batch killed in the middle of its deliveries
}

func (k *killer) wrap(h localrunner.Handler, crash context.CancelFunc) localrunner.Handler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		inv := int(k.invocations.Add(1))
		if inv%k.every != 0 || k.count.Load() >= k.max {
			return h(ctx, ev)
		}
		nth := k.count.Add(1)
		k.mu.Lock()
		for _, r := range ev.Records {
			var body struct{ ID string }
			_ = json.Unmarshal([]byte(r.Body), &body)
			k.killed[body.ID] = true
			if nth%2 == 1 {
				k.killedMid[body.ID] = true
			}
		}
		k.mu.Unlock()
		if nth%2 == 1 {
			// Mid-batch: the deliveries in flight are cut off.
			hctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(time.Duration(20+rand.IntN(280))*time.Millisecond, cancel)
			_, _ = h(hctx, ev)
			cancel()
		} else {
			// After the deliveries, before the acknowledgement.
			_, _ = h(ctx, ev)
		}
		crash()
		return events.SQSEventResponse{}, errors.New("killed")
	}
}

func (k *killer) wasKilledMid(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.killedMid[id]
}

// storeTable is the local stack's DynamoDB table, named by the env file
// of the stack the tests run against.
func storeTable(t *testing.T) string {
	t.Helper()
	table := readEnvFile(t, filepath.Join(repoRoot, localenv.EnvFile))["HERALD_STORE_TABLE"]
	require.NotEmpty(t, table, "%s names no HERALD_STORE_TABLE (localstack/init/ready.d/provision.py)", localenv.EnvFile)
	return table
}

// countOutcome counts the record lines of outcome o.
func countOutcome(logs *logLines, o string) int {
	n := 0
	for _, l := range logs.all() {
		if l["msg"] == processor.LineNotification && l["outcome"] == o {
			n++
		}
	}
	return n
}

func (k *killer) wasKilled(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.killed[id]
}

// sendAll puts the bodies on the queue, ten per SendMessageBatch call, four
// calls at a time.
func sendAll(t *testing.T, ctx context.Context, c *sqs.Client, queueURL string, ids []string, body func(i int) string) {
	t.Helper()
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	var failed atomic.Int32
	for start := 0; start < len(ids); start += 10 {
		wg.Add(1)
		sem <- struct{}{}
		go func(start int) {
			defer func() { <-sem; wg.Done() }()
			var entries []types.SendMessageBatchRequestEntry
			for i := start; i < min(start+10, len(ids)); i++ {
				entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(body(i))})
			}
			out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
			if err != nil || len(out.Failed) > 0 {
				failed.Add(1)
			}
		}(start)
	}
	wg.Wait()
	require.Zero(t, failed.Load(), "every send succeeded")
}

// queueCounts returns visible/in flight/delayed.
func queueCounts(ctx context.Context, c *sqs.Client, queueURL string) string {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		},
	})
	if err != nil {
		return "error: " + err.Error()
	}
	a := out.Attributes
	return a["ApproximateNumberOfMessages"] + "/" + a["ApproximateNumberOfMessagesNotVisible"] + "/" + a["ApproximateNumberOfMessagesDelayed"]
}
