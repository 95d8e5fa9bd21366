package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/logging"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/localrunner"
)

// pollers is how many local event source mappings poll at once: the Lambda
// service starts with five pollers per SQS event source mapping.
const pollers = 5

// e2eRun is one end-to-end measurement.
type e2eRun struct {
	rate     float64 // notifications per second, draining a full queue
	p50, p99 time.Duration
	latN     int
}

// sectionE2E drains M webhook notifications from LocalStack through the
// local runner and herald to a local receiver, then, with the pollers
// still running, sends a paced stream (a tenth of the drain rate) to time enqueue → delivery; the same
// two phases with a handler that does nothing measure the local queue's own
// ceiling (receive + delete).
func sectionE2E(ctx context.Context, o opts, r *results) error {
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	// Cancelling the pollers at the end abandons long polls: not worth a warning.
	awsCfg.Logger = logging.Nop{}
	c := sqs.NewFromConfig(awsCfg)
	rcv := newReceiver(0)
	defer rcv.Close()

	ceiling, err := e2e(ctx, o, c, "ceiling", nil, nil)
	if err != nil {
		return fmt.Errorf("ceiling: %w", err)
	}
	herald, err := e2e(ctx, o, c, "herald", rcv, &awsCfg)
	if err != nil {
		return fmt.Errorf("herald: %w", err)
	}
	// The ceiling again after herald, so that drift of a shared machine
	// falls on both sides; the ceiling is the mean of the two.
	again, err := e2e(ctx, o, c, "ceiling2", nil, nil)
	if err != nil {
		return fmt.Errorf("ceiling: %w", err)
	}
	before := ceiling.rate
	ceiling.rate = (ceiling.rate + again.rate) / 2
	r.e2eRate, r.ceilingRate = herald.rate, ceiling.rate
	share := herald.rate / ceiling.rate
	table(fmt.Sprintf("4. End to end: %d webhooks, LocalStack SQS → local runner (%d pollers, batch 10) → herald → local HTTPS receiver", o.e2eN, pollers),
		[]string{"", "notifications/s", "p50 enqueue→delivery", "p99", "latency sample", "share of ceiling", "goal", "verdict"},
		[][]string{
			{"herald", fmt.Sprintf("%.0f", herald.rate), ms(herald.p50), ms(herald.p99), fmt.Sprint(herald.latN), fmt.Sprintf("%.0f %%", 100*share), "≥ 80 %", verdict(share, 0.8, true)},
			{fmt.Sprintf("queue ceiling (receive + delete, no delivery; mean of %.0f before, %.0f after)", before, again.rate), fmt.Sprintf("%.0f", ceiling.rate), ms(ceiling.p50), ms(ceiling.p99), fmt.Sprint(ceiling.latN), "100 %", "", ""},
		})
	return nil
}

// e2e runs both phases against a fresh queue. With rcv nil the handler only
// notes each record (the ceiling).
func e2e(ctx context.Context, o opts, c *sqs.Client, name string, rcv *receiver, awsCfg *aws.Config) (e2eRun, error) {
	var res e2eRun
	qs, err := localenv.CreateQueues(ctx, c, fmt.Sprintf("bench-e2e-%s-%d", name, time.Now().UnixNano()), 13, 120*time.Second)
	if err != nil {
		return res, err
	}
	defer qs.Delete(context.Background(), c)

	var delivered atomic.Int64
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	note := func(id string, at time.Time) {
		mu.Lock()
		if _, dup := arrived[id]; !dup {
			arrived[id] = at
			delivered.Add(1)
		}
		mu.Unlock()
	}
	// Each poller gets its own handler, as each concurrent invocation gets
	// its own execution environment (and connection pool) in Lambda.
	newHandler := func() (localrunner.Handler, error) {
		if rcv == nil {
			return func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				now := time.Now()
				for _, rec := range ev.Records {
					note(idOf(rec.Body), now)
				}
				return events.SQSEventResponse{}, nil
			}, nil
		}
		p, err := deliverer(*awsCfg, rcv, map[string]string{"HERALD_QUEUE_URL": qs.URL, "HERALD_DLQ_URL": qs.DLQURL})
		if err != nil {
			return nil, err
		}
		return p.Handle, nil
	}
	if rcv != nil {
		rcv.mu.Lock()
		rcv.onHit = note
		rcv.mu.Unlock()
	}
	handlers := make([]localrunner.Handler, pollers)
	for i := range handlers {
		if handlers[i], err = newHandler(); err != nil {
			return res, err
		}
	}
	base := "https://127.0.0.1:1"
	if rcv != nil {
		base = rcv.URL()
	}
	body := func(prefix string) func(int) string {
		return func(i int) string { id := fmt.Sprintf("%s-%d", prefix, i); return webhookBody(id, base+"/ok/"+id) }
	}

	// Phase 1: drain a full queue.
	if err := sendBodies(ctx, c, qs.URL, o.e2eN, body("drain")); err != nil {
		return res, err
	}
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	t0 := time.Now()
	for _, handler := range handlers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rn := &localrunner.Runner{SQS: c, QueueURL: qs.URL, Handler: handler, WaitTime: time.Second, FunctionTimeout: 60 * time.Second, Logger: quietLogger()}
			_ = rn.Run(pctx)
		}()
	}
	if err := waitFor(ctx, func() bool { return delivered.Load() >= int64(o.e2eN) }, 10*time.Minute, rcv); err != nil {
		return res, fmt.Errorf("drain: %d of %d delivered: %w", delivered.Load(), o.e2eN, err)
	}
	var last time.Time
	mu.Lock()
	for _, at := range arrived {
		if at.After(last) {
			last = at
		}
	}
	mu.Unlock()
	res.rate = float64(o.e2eN) / last.Sub(t0).Seconds()

	// Phase 2: a paced stream of single SendMessage calls at a tenth of the
	// drain rate (each is one more request LocalStack must serve), pollers
	// still running.
	res.latN = min(max(o.e2eN/20, 20), 250)
	rate := res.rate / 10
	sent := make([]time.Time, res.latN)
	var sendWG sync.WaitGroup
	before := delivered.Load()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	mk := body("lat")
	for i := range res.latN {
		<-tick.C
		sent[i] = time.Now()
		sendWG.Add(1)
		go func(i int) {
			defer sendWG.Done()
			_, _ = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(qs.URL), MessageBody: aws.String(mk(i))})
		}(i)
	}
	tick.Stop()
	sendWG.Wait()
	if err := waitFor(ctx, func() bool { return delivered.Load() >= before+int64(res.latN) }, 2*time.Minute, rcv); err != nil {
		return res, fmt.Errorf("paced: %w", err)
	}
	stop()
	wg.Wait()
	var lat []time.Duration
	mu.Lock()
	for i, s := range sent {
		if at, ok := arrived[fmt.Sprintf("lat-%d", i)]; ok {
			lat = append(lat, at.Sub(s))
		}
	}
	mu.Unlock()
	res.p50, res.p99 = percentile(lat, 0.5), percentile(lat, 0.99)
	return res, nil
}

// idOf pulls the notification id out of a bench body without decoding it.
func idOf(body string) string {
	_, rest, _ := strings.Cut(body, `"id":"`)
	id, _, _ := strings.Cut(rest, `"`)
	return id
}

// waitFor polls done until it holds, limit passes, ctx ends, or rcv (when
// not nil) has refused a signature: then nothing would ever be delivered.
func waitFor(ctx context.Context, done func() bool, limit time.Duration, rcv *receiver) error {
	deadline := time.Now().Add(limit)
	for !done() {
		if rcv != nil {
			if n := rcv.badSig.Load(); n > 0 {
				return fmt.Errorf("the receiver refused %d webhook signature(s)", n)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not done within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}
