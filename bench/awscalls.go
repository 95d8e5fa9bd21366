package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/localenv"
)

// opCounter counts AWS API operations (not HTTP attempts) through an SDK
// middleware; install it with aws.Config.APIOptions. n counts by operation
// name; items by operation name, and for a DynamoDB item call the kind of
// item it reads or writes too (itemOp, storeItem).
type opCounter struct {
	mu    sync.Mutex
	n     map[string]int
	items map[string]int
}

func (c *opCounter) install(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("benchOpCounter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			op := awsmiddleware.GetOperationName(ctx)
			key := op
			if kind := storeItem(in.Parameters); kind != "" {
				key = itemOp(readOp(op, in.Parameters), kind)
			}
			c.mu.Lock()
			c.n[op]++
			if c.items == nil {
				c.items = map[string]int{}
			}
			c.items[key]++
			c.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

// eventualGetItem is a GetItem without ConsistentRead, priced at half a
// consistent read's request units (opPrice).
const eventualGetItem = "GetItem(eventual)"

// readOp is op, or eventualGetItem for an eventually consistent GetItem.
func readOp(op string, params any) string {
	if in, ok := params.(*dynamodb.GetItemInput); ok && !aws.ToBool(in.ConsistentRead) {
		return eventualGetItem
	}
	return op
}

func (c *opCounter) reset() map[string]int {
	n, _ := c.take()
	return n
}

// take returns the counts since the last take or reset, by operation and
// by item operation, and starts again from zero.
func (c *opCounter) take() (ops, items map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops, items = c.n, c.items
	if items == nil {
		items = map[string]int{}
	}
	c.n, c.items = map[string]int{}, map[string]int{}
	return ops, items
}

// callCase is one batch of section 3: n records, the first k of them to
// path, on their last receive or not, and what the processor must do
// about them with SQS.
type callCase struct {
	name        string
	n, k        int
	path        string // where the k failing records go
	lastReceive bool
	warm        bool // counted on the environment's second clean batch
	// busy: counted on a new environment's first batch to an origin that
	// another environment delivered to just before (a busy function's new
	// environment: the origin's last success is fresh in the table).
	busy             bool
	wantCMVB, wantDL int
}

// callCases are section 3's batches, the large ones of large records; the
// smoke run (quick) has the batches of 10 only.
func callCases(large int, quick bool) []callCase {
	all := []callCase{
		{"10 delivered", 10, 0, "", false, false, false, 0, 0},
		{"10 delivered, warm (the environment's second batch)", 10, 0, "", false, true, false, 0, 0},
		{"10 delivered, new environment, busy origin (another environment's batch just before)", 10, 0, "", false, false, true, 0, 0},
		{fmt.Sprintf("%d delivered", large), large, 0, "", false, false, false, 0, 0},
		{"10, 3 fail (503), retried", 10, 3, "/fail/", false, false, false, 1, 0},
		// A quarter fail: one visibility change per ten of them.
		{fmt.Sprintf("%d, %d fail (503), retried", large, large/4), large, large / 4, "/fail/", false, false, false, (large/4 + 9) / 10, 0},
		{"10, 3 fail (503) on their last receive", 10, 3, "/fail/", true, false, false, 0, 3},
		{"10, 2 gone (410), permanent", 10, 2, "/gone/", false, false, false, 0, 2},
	}
	var cases []callCase
	for _, c := range all {
		if quick && c.n > 10 {
			continue
		}
		cases = append(cases, c)
	}
	return cases
}

// sectionAWSCalls delivers real SQS messages from LocalStack through the
// processor, whose SDK clients count their operations, and compares the
// count with what the design promises. Each case runs three ways
// (storeModes): with the store on, with delivered-once off and the
// circuit kept, and with no table; each on a fresh processor, as a new
// execution environment (its caches of origin health and key versions
// empty), except the warm case, counted on the environment's second
// batch.
func sectionAWSCalls(ctx context.Context, o opts, r *results) error {
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	storeName, err := o.sectionStoreTable()
	if err != nil {
		return err
	}
	plain := sqs.NewFromConfig(awsCfg)
	const maxReceive = 3
	qs, err := localenv.CreateQueues(ctx, plain, fmt.Sprintf("bench-calls-%d", time.Now().UnixNano()), maxReceive, 60*time.Second)
	if err != nil {
		return err
	}
	defer qs.Delete(context.Background(), plain)
	counter := &opCounter{n: map[string]int{}}
	counted := awsCfg.Copy()
	counted.APIOptions = append(counted.APIOptions, counter.install)
	base := map[string]string{
		"HERALD_QUEUE_URL": qs.URL, "HERALD_DLQ_URL": qs.DLQURL,
		"HERALD_MAX_RECEIVE_COUNT": fmt.Sprint(maxReceive), "HERALD_CONCURRENCY": "10",
	}
	run := fmt.Sprintf("%d", time.Now().UnixNano()) // the store remembers ids across runs
	r.clean10, r.warm10, r.busy10 = map[storeMode]map[string]int{}, map[storeMode]map[string]int{}, map[storeMode]map[string]int{}
	var rows [][]string
	failed := false
	for ci, c := range callCases(o.largeBatch(), o.quick) {
		for mi, m := range storeModes {
			// A receiver of its own, a new origin: the circuit's health of
			// one origin, kept in the table, would carry one case's
			// failures into the next.
			rcv := newReceiver(0)
			defer rcv.Close()
			p, err := deliverer(counted, rcv, withEnv(base, m.env(storeName)))
			if err != nil {
				return err
			}
			body := func(batch string) func(int) string {
				return func(i int) string {
					path := "/ok/"
					if spreadFailure(i, c.n, c.k) && batch == "" {
						path = c.path
					}
					id := fmt.Sprintf("calls%s-%d-%d%s-%d", run, ci, mi, batch, i)
					return webhookBody(id, rcv.URL()+path+id)
				}
			}
			// The clean batch before the counted one: this environment's
			// (warm) or another's to the same origin (busy).
			before, tag := p, "w"
			if c.busy {
				if before, err = deliverer(counted, rcv, withEnv(base, m.env(storeName))); err != nil {
					return err
				}
				tag = "b"
			}
			if c.warm || c.busy {
				ev, err := receiveEvent(ctx, plain, qs, c.n, body(tag))
				if err != nil {
					return err
				}
				if _, err := before.Handle(ctx, ev); err != nil {
					return err
				}
				purge(ctx, plain, qs.URL, ev)
			}
			ev, err := receiveEvent(ctx, plain, qs, c.n, body(""))
			if err != nil {
				return err
			}
			if c.lastReceive {
				for i := range ev.Records {
					ev.Records[i].Attributes["ApproximateReceiveCount"] = fmt.Sprint(maxReceive)
				}
			}
			counter.take()
			resp, err := p.Handle(ctx, ev)
			if err != nil {
				return err
			}
			got, items := counter.take()
			if c.n == 10 && c.k == 0 {
				switch {
				case c.warm:
					r.warm10[m] = items
				case c.busy:
					r.busy10[m] = items
				default:
					r.clean10[m] = items
					if m == storeOn {
						r.clean10Ops = got
					}
				}
			}
			ok := callsAsDesigned(c, m, got, items, len(resp.BatchItemFailures))
			failed = failed || !ok
			v := "met"
			if !ok {
				v = "MISSED"
			}
			sqsCalls, _ := split(got)
			name, want := c.name, fmt.Sprintf("%d CMVB + %d DLQ send", c.wantCMVB, c.wantDL)
			if mi > 0 {
				name, want = "", ""
			}
			rows = append(rows, []string{name, m.String(), want,
				fmt.Sprintf("%d (%s)", total(sqsCalls), describe(sqsCalls)),
				describeItems(items), fmt.Sprint(len(resp.BatchItemFailures)), v})
			// Leave the queue empty for the next case.
			purge(ctx, plain, qs.URL, ev)
		}
	}
	printTable(o.stdout(), "3. AWS calls made by the processor per batch (SDK middleware count, LocalStack SQS, the DynamoDB table "+storeName+
		"); each case three ways, each on a new environment but the warm case; the event source mapping's receive/delete are not the processor's",
		[]string{"batch", "store", "expected SQS (ceil(k/10) CMVB + dead-letter moves)", "counted SQS", "counted DynamoDB (by item: delivery, health, keys)", "batchItemFailures", "verdict"}, rows)
	if failed {
		return fmt.Errorf("a batch's calls are not as designed (MISSED above)")
	}
	return nil
}

// spreadFailure reports whether record i of n is one of the k that fail,
// spread evenly through the batch (records 3, 6 and 9 of 10): never ten
// failures to one origin in a row, which would open its circuit
// (circuit.DefaultThreshold) and hold the rest back.
func spreadFailure(i, n, k int) bool {
	return (i+1)*k/n > i*k/n
}

// callsAsDesigned checks one batch's counted calls: its SQS calls are the
// case's visibility changes and dead-letter sends whatever the store,
// records failed are those to retry, and its DynamoDB calls are the mode's:
// none without a table, none on delivery items with delivered-once off,
// and with the store on one lease per record, and for a clean batch one
// delivered write per record too.
func callsAsDesigned(c callCase, m storeMode, ops, items map[string]int, failures int) bool {
	wantFailures := c.k
	if c.lastReceive || c.path == "/gone/" {
		wantFailures = 0
	}
	sqsCalls, others := split(ops)
	ok := ops["ChangeMessageVisibilityBatch"] == c.wantCMVB && ops["SendMessage"] == c.wantDL &&
		failures == wantFailures && total(sqsCalls) == c.wantCMVB+c.wantDL
	kinds := byKind(items)
	switch m {
	case noTable:
		ok = ok && total(others) == 0
	case onceOff:
		ok = ok && total(kinds["delivery"]) == 0
	case storeOn:
		// A claim per record; a clean batch's deliveries confirmed with one
		// write.
		puts := kinds["delivery"]["PutItem"]
		ok = ok && puts >= c.n && (c.k > 0 || puts == c.n && kinds["delivery_batch"]["PutItem"] == 1)
	}
	return ok
}

// describeItems is counted calls keyed by itemOp, by operation with its
// item kinds, sorted: "GetItem×2 (health 1, keys 1), PutItem×21 (delivery
// 20, health 1)"; SQS operations left out; "none" without any.
func describeItems(items map[string]int) string {
	perOp := map[string]map[string]int{}
	for k, n := range items {
		op, kind := splitItemOp(k)
		if kind == "" {
			continue
		}
		if perOp[op] == nil {
			perOp[op] = map[string]int{}
		}
		perOp[op][kind] += n
	}
	if len(perOp) == 0 {
		return "none"
	}
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(perOp)) {
		var kinds []string
		for _, kind := range slices.Sorted(maps.Keys(perOp[op])) {
			kinds = append(kinds, fmt.Sprintf("%s %d", kind, perOp[op][kind]))
		}
		parts = append(parts, fmt.Sprintf("%s×%d (%s)", op, total(perOp[op]), strings.Join(kinds, ", ")))
	}
	return strings.Join(parts, ", ")
}

// split parts counted operations into SQS's and the others (the store's).
func split(m map[string]int) (sqsOps, other map[string]int) {
	sqsOps, other = map[string]int{}, map[string]int{}
	for op, n := range m {
		if _, service, ok := opPrice(op); ok && service == "sqs" {
			sqsOps[op] = n
		} else {
			other[op] = n
		}
	}
	return sqsOps, other
}

func orNone(s string) string {
	if s == "" {
		return "none: the local stack names no HERALD_STORE_TABLE"
	}
	return s
}

func total(m map[string]int) int {
	t := 0
	for _, v := range m {
		t += v
	}
	return t
}

func describe(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s×%d", k, v))
	}
	return strings.Join(parts, ", ")
}

// receiveEvent sends n messages (body(i)) to qs, receives them back and
// builds the SQS event the event source mapping would hand over, with real
// receipt handles.
func receiveEvent(ctx context.Context, c *sqs.Client, qs localenv.Queues, n int, body func(int) string) (events.SQSEvent, error) {
	if err := sendBodies(ctx, c, qs.URL, n, body); err != nil {
		return events.SQSEvent{}, err
	}
	var ev events.SQSEvent
	seen := map[string]bool{}
	// A receive may answer fewer than ten messages (LocalStack on a busy
	// machine often does): receive until all n are in or a minute passes.
	for deadline := time.Now().Add(time.Minute); len(ev.Records) < n && time.Now().Before(deadline); {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(qs.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 120,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			return ev, fmt.Errorf("receive: %w", err)
		}
		for _, m := range out.Messages {
			if seen[aws.ToString(m.MessageId)] {
				continue
			}
			seen[aws.ToString(m.MessageId)] = true
			ev.Records = append(ev.Records, events.SQSMessage{
				MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs",
				EventSourceARN: qs.ARN, AWSRegion: "us-east-1",
			})
		}
	}
	if len(ev.Records) != n {
		return ev, fmt.Errorf("received %d of %d messages", len(ev.Records), n)
	}
	return ev, nil
}

// sendBodies puts n bodies on queueURL, ten per SendMessageBatch, from a few
// goroutines.
func sendBodies(ctx context.Context, c *sqs.Client, queueURL string, n int, body func(int) string) error {
	const workers = 8
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range batches {
				entries := make([]types.SendMessageBatchRequestEntry, min(10, n-start))
				for i := range entries {
					id := start + i
					entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(id)), MessageBody: aws.String(body(id))}
				}
				out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
				if err == nil && len(out.Failed) > 0 {
					err = fmt.Errorf("%d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
				}
				if err != nil {
					errs <- fmt.Errorf("send: %w", err)
					cancel() // stops the feeder
					return
				}
			}
		}()
	}
	go func() {
		defer close(batches)
		for s := 0; s < n; s += 10 {
			select {
			case batches <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	return <-errs
}

// purge deletes the event's messages, whatever the handler said.
func purge(ctx context.Context, c *sqs.Client, queueURL string, ev events.SQSEvent) {
	for batch := range slices.Chunk(ev.Records, 10) {
		entries := make([]types.DeleteMessageBatchRequestEntry, len(batch))
		for i, rec := range batch {
			entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: aws.String(rec.ReceiptHandle)}
		}
		_, _ = c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
	}
}
