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
	pace     float64 // notifications per second of the paced stream
}

// sectionE2E drains M webhook notifications from LocalStack through the
// local runner and herald to a local receiver, then, with the pollers
// running, sends a paced stream to time enqueue → delivery; the same two
// phases with a handler that does nothing measure the local queue's own
// ceiling (receive + delete), before and after. herald runs twice, without
// the store's table and with the store on (storeOn), each on its own queue
// and receiver: the two drains one after the other, then one paced stream
// to each in turns at the same pace (a tenth of the slower drain rate).
func sectionE2E(ctx context.Context, o opts, r *results) error {
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	storeName, err := o.sectionStoreTable()
	if err != nil {
		return err
	}
	// Cancelling the pollers at the end abandons long polls: not worth a warning.
	awsCfg.Logger = logging.Nop{}
	c := sqs.NewFromConfig(awsCfg)
	rcvOff, rcvOn := newReceiver(0), newReceiver(0)
	defer rcvOff.Close()
	defer rcvOn.Close()

	ceiling, err := e2eAlone(ctx, o, c, "ceiling")
	if err != nil {
		return fmt.Errorf("ceiling: %w", err)
	}
	off, err := newE2E(ctx, c, "herald", rcvOff, &awsCfg, nil)
	if err != nil {
		return fmt.Errorf("herald: %w", err)
	}
	defer off.close()
	on, err := newE2E(ctx, c, "store", rcvOn, &awsCfg, storeOn.env(storeName))
	if err != nil {
		return fmt.Errorf("herald with the store: %w", err)
	}
	defer on.close()
	for _, q := range []*e2eQueue{off, on} {
		if err := q.drain(ctx, o.e2eN); err != nil {
			return fmt.Errorf("%s: %w", q.name, err)
		}
	}
	if err := paced(ctx, []*e2eQueue{off, on}, min(off.res.rate, on.res.rate)/10, latSample(o)); err != nil {
		return err
	}
	// The ceiling again after herald, so that drift of a shared machine
	// falls on both sides; the ceiling is the mean of the two.
	again, err := e2eAlone(ctx, o, c, "ceiling2")
	if err != nil {
		return fmt.Errorf("ceiling: %w", err)
	}
	before := ceiling.rate
	ceiling.rate = (ceiling.rate + again.rate) / 2
	herald, withStore := off.res, on.res
	r.e2eRate, r.ceilingRate = herald.rate, ceiling.rate
	r.e2eOff, r.e2eOn = herald, withStore
	share := herald.rate / ceiling.rate
	printTable(o.stdout(), fmt.Sprintf("4. End to end: %d webhooks, LocalStack SQS → local runner (%d pollers, batch 10) → herald → local HTTPS receiver; "+
		"herald without the store's table and with the store on (DynamoDB table %s, LocalStack's moto): drains one after the other, "+
		"then paced streams in turns at the same pace, %.0f/s each", o.e2eN, pollers, storeName, withStore.pace),
		[]string{"", "notifications/s", "p50 enqueue→delivery", "p99", "latency sample", "share of ceiling", "goal", "verdict"},
		[][]string{
			{"herald (no table)", fmt.Sprintf("%.0f", herald.rate), ms(herald.p50), ms(herald.p99), fmt.Sprint(herald.latN), fmt.Sprintf("%.0f %%", 100*share), "≥ 80 %", verdict(share, 0.8, true)},
			{"herald + store", fmt.Sprintf("%.0f", withStore.rate), ms(withStore.p50), ms(withStore.p99), fmt.Sprint(withStore.latN), fmt.Sprintf("%.0f %%", 100*withStore.rate/ceiling.rate), "", ""},
			{"  the store adds", fmt.Sprintf("%+.0f", withStore.rate-herald.rate), signedMS(withStore.p50 - herald.p50), signedMS(withStore.p99 - herald.p99), "", "", "", ""},
			{fmt.Sprintf("queue ceiling (receive + delete, no delivery; mean of %.0f before, %.0f after; paced at a tenth of each)", before, again.rate), fmt.Sprintf("%.0f", ceiling.rate), ms(ceiling.p50), ms(ceiling.p99), fmt.Sprint(ceiling.latN), "100 %", "", ""},
		})
	return nil
}

// latSample is how many notifications a paced stream times.
func latSample(o opts) int {
	if o.small.latN > 0 {
		return o.small.latN
	}
	return min(max(o.e2eN/20, 20), 250)
}

// e2eAlone runs both phases on one fresh queue with a handler that only
// notes each record (the ceiling), paced at a tenth of its own drain rate.
func e2eAlone(ctx context.Context, o opts, c *sqs.Client, name string) (e2eRun, error) {
	q, err := newE2E(ctx, c, name, nil, nil, nil)
	if err != nil {
		return e2eRun{}, err
	}
	defer q.close()
	if err := q.drain(ctx, o.e2eN); err != nil {
		return e2eRun{}, err
	}
	if err := paced(ctx, []*e2eQueue{q}, q.res.rate/10, latSample(o)); err != nil {
		return e2eRun{}, err
	}
	return q.res, nil
}

// e2eQueue is a fresh queue with its pollers' handlers: herald's processor
// per poller, or with rcv nil one that only notes each record.
type e2eQueue struct {
	name     string
	c        *sqs.Client
	qs       localenv.Queues
	rcv      *receiver
	handlers []localrunner.Handler
	base     string // the webhooks' receiver
	prefix   string // of the notification ids, new to the store's table

	mu        sync.Mutex
	arrived   map[string]time.Time
	delivered atomic.Int64

	stop func() // stops the pollers
	res  e2eRun
}

// newE2E creates the queue and the handlers; env is added to herald's
// settings.
func newE2E(ctx context.Context, c *sqs.Client, name string, rcv *receiver, awsCfg *aws.Config, env map[string]string) (*e2eQueue, error) {
	qs, err := localenv.CreateQueues(ctx, c, fmt.Sprintf("bench-e2e-%s-%d", name, time.Now().UnixNano()), 13, 120*time.Second)
	if err != nil {
		return nil, err
	}
	q := &e2eQueue{name: name, c: c, qs: qs, rcv: rcv, arrived: map[string]time.Time{}, base: "https://127.0.0.1:1", prefix: name + "-" + runTag(8), stop: func() {}}
	// Each poller gets its own handler, as each concurrent invocation gets
	// its own execution environment (and connection pool) in Lambda.
	for range pollers {
		if rcv == nil {
			q.handlers = append(q.handlers, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				now := time.Now()
				for _, rec := range ev.Records {
					q.note(idOf(rec.Body), now)
				}
				return events.SQSEventResponse{}, nil
			})
			continue
		}
		p, err := deliverer(*awsCfg, rcv, withEnv(map[string]string{"HERALD_QUEUE_URL": qs.URL, "HERALD_DLQ_URL": qs.DLQURL}, env))
		if err != nil {
			q.close()
			return nil, err
		}
		q.handlers = append(q.handlers, p.Handle)
	}
	if rcv != nil {
		q.base = rcv.URL()
		rcv.mu.Lock()
		rcv.onHit = q.note
		rcv.mu.Unlock()
	}
	return q, nil
}

func (q *e2eQueue) note(id string, at time.Time) {
	q.mu.Lock()
	if _, dup := q.arrived[id]; !dup {
		q.arrived[id] = at
		q.delivered.Add(1)
	}
	q.mu.Unlock()
}

func (q *e2eQueue) body(kind string) func(int) string {
	return func(i int) string {
		id := fmt.Sprintf("%s-%s-%d", q.prefix, kind, i)
		return webhookBody(id, q.base+"/ok/"+id)
	}
}

// startPollers starts the local event source mapping's pollers.
func (q *e2eQueue) startPollers(ctx context.Context) {
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, handler := range q.handlers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rn := &localrunner.Runner{SQS: q.c, QueueURL: q.qs.URL, Handler: handler, WaitTime: time.Second, FunctionTimeout: 60 * time.Second, Logger: quietLogger()}
			_ = rn.Run(pctx)
		}()
	}
	q.stop = func() { cancel(); wg.Wait(); q.stop = func() {} }
}

// close stops the pollers and deletes the queues.
func (q *e2eQueue) close() {
	q.stop()
	q.qs.Delete(context.Background(), q.c)
}

// drain fills the queue with n notifications, then starts the pollers and
// times until the last is delivered; the pollers stay.
func (q *e2eQueue) drain(ctx context.Context, n int) error {
	if err := sendBodies(ctx, q.c, q.qs.URL, n, q.body("drain")); err != nil {
		return err
	}
	t0 := time.Now()
	q.startPollers(ctx)
	if err := waitFor(ctx, func() bool { return q.delivered.Load() >= int64(n) }, 10*time.Minute, q.rcv); err != nil {
		return fmt.Errorf("drain: %d of %d delivered: %w", q.delivered.Load(), n, err)
	}
	var last time.Time
	q.mu.Lock()
	for _, at := range q.arrived {
		if at.After(last) {
			last = at
		}
	}
	q.mu.Unlock()
	q.res.rate = float64(n) / last.Sub(t0).Seconds()
	return nil
}

// paced sends latN single SendMessage calls to each queue at rate per
// second each (each is one more request LocalStack must serve), the queues
// in turns within each tick, the first one first every other tick, with
// their pollers running; then it waits for them and notes each queue's p50
// and p99 of enqueue → delivery.
func paced(ctx context.Context, qs []*e2eQueue, rate float64, latN int) error {
	sent := make([][]time.Time, len(qs))
	before := make([]int64, len(qs))
	mk := make([]func(int) string, len(qs))
	for j, q := range qs {
		sent[j], before[j], mk[j] = make([]time.Time, latN), q.delivered.Load(), q.body("lat")
	}
	var sendWG sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	for i := range latN {
		select {
		case <-tick.C:
		case <-ctx.Done():
			tick.Stop()
			sendWG.Wait()
			return ctx.Err()
		}
		for t := range qs {
			j := turn(i, t, len(qs))
			sent[j][i] = time.Now()
			sendWG.Add(1)
			go func(q *e2eQueue, body string) {
				defer sendWG.Done()
				_, _ = q.c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.qs.URL), MessageBody: aws.String(body)})
			}(qs[j], mk[j](i))
		}
	}
	tick.Stop()
	sendWG.Wait()
	for j, q := range qs {
		if err := waitFor(ctx, func() bool { return q.delivered.Load() >= before[j]+int64(latN) }, 2*time.Minute, q.rcv); err != nil {
			return fmt.Errorf("%s, paced: %w", q.name, err)
		}
	}
	for j, q := range qs {
		q.stop()
		var lat []time.Duration
		q.mu.Lock()
		for i, s := range sent[j] {
			if at, ok := q.arrived[fmt.Sprintf("%s-lat-%d", q.prefix, i)]; ok {
				lat = append(lat, at.Sub(s))
			}
		}
		q.mu.Unlock()
		q.res.p50, q.res.p99, q.res.latN, q.res.pace = percentile(lat, 0.5), percentile(lat, 0.99), latN, rate
	}
	return nil
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
