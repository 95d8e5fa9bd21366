package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/localenv"
)

// opCounter counts AWS API operations (not HTTP attempts) through an SDK
// middleware; install it with aws.Config.APIOptions.
type opCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *opCounter) install(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("benchOpCounter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.n[awsmiddleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

func (c *opCounter) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// sectionAWSCalls delivers real SQS messages from LocalStack through the
// processor, whose SDK clients count their operations, and compares the
// count with what the design promises.
func sectionAWSCalls(ctx context.Context, o opts, r *results) error {
	awsCfg, err := app.AWSConfig(ctx)
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
	rcv := newReceiver(0)
	defer rcv.Close()

	counter := &opCounter{n: map[string]int{}}
	counted := awsCfg.Copy()
	counted.APIOptions = append(counted.APIOptions, counter.install)
	// The deployed default: the store's table (delivered-once), the one
	// the local stack provisions.
	storeName := storeTable()
	p, err := deliverer(counted, rcv, map[string]string{
		"HERALD_QUEUE_URL": qs.URL, "HERALD_DLQ_URL": qs.DLQURL,
		"HERALD_MAX_RECEIVE_COUNT": fmt.Sprint(maxReceive), "HERALD_CONCURRENCY": "10",
		"HERALD_STORE_TABLE": storeName,
	})
	if err != nil {
		return err
	}
	run := time.Now().UnixNano()
	cases := []struct {
		name             string
		n, k             int
		path             string // where the k failing records go
		lastReceive      bool
		wantCMVB, wantDL int
	}{
		{"10 delivered", 10, 0, "", false, 0, 0},
		{"100 delivered", 100, 0, "", false, 0, 0},
		{"10, 3 fail (503), retried", 10, 3, "/fail/", false, 1, 0},
		{"100, 25 fail (503), retried", 100, 25, "/fail/", false, 3, 0},
		{"10, 3 fail (503) on their last receive", 10, 3, "/fail/", true, 0, 3},
		{"10, 2 gone (410), permanent", 10, 2, "/gone/", false, 0, 2},
	}
	var rows [][]string
	for ci, c := range cases {
		ev, err := receiveEvent(ctx, plain, qs, c.n, func(i int) string {
			path := "/ok/"
			if i < c.k {
				path = c.path
			}
			id := fmt.Sprintf("calls%d-%d-%d", run, ci, i) // the store remembers ids across runs
			return webhookBody(id, rcv.URL()+path+id)
		})
		if err != nil {
			return err
		}
		if c.lastReceive {
			for i := range ev.Records {
				ev.Records[i].Attributes["ApproximateReceiveCount"] = fmt.Sprint(maxReceive)
			}
		}
		counter.reset()
		resp, err := p.Handle(ctx, ev)
		if err != nil {
			return err
		}
		got := counter.reset()
		if c.n == 10 && c.k == 0 {
			r.clean10Ops = got
		}
		wantFailures := c.k
		if c.lastReceive || c.path == "/gone/" {
			wantFailures = 0
		}
		sqsCalls, storeCalls := split(got)
		ok := got["ChangeMessageVisibilityBatch"] == c.wantCMVB && got["SendMessage"] == c.wantDL &&
			len(resp.BatchItemFailures) == wantFailures && total(sqsCalls) == c.wantCMVB+c.wantDL
		v := "met"
		if !ok {
			v = "MISSED"
		}
		rows = append(rows, []string{c.name,
			fmt.Sprintf("%d CMVB + %d DLQ send", c.wantCMVB, c.wantDL),
			fmt.Sprintf("%d (%s)", total(sqsCalls), describe(sqsCalls)),
			describe(storeCalls),
			fmt.Sprint(len(resp.BatchItemFailures)), v})
		// Leave the queue empty for the next case.
		purge(ctx, plain, qs.URL, ev)
	}
	table("3. AWS calls made by the processor per batch (SDK middleware count, LocalStack SQS); the event source mapping's receive/delete are not the processor's",
		[]string{"batch", "expected (ceil(k/10) CMVB + dead-letter moves)", "counted SQS", "store (DynamoDB table " + orNone(storeName) + ")", "batchItemFailures", "verdict"}, rows)
	return nil
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

// storeTable is HERALD_STORE_TABLE of the local stack's env file
// (localenv.EnvFile), or "" when it names none.
func storeTable() string {
	b, err := os.ReadFile(localenv.EnvFile)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimPrefix(strings.TrimSpace(l), "export "), "HERALD_STORE_TABLE="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
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
	for tries := 0; len(ev.Records) < n && tries < 100; tries++ {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(qs.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 120,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			return ev, fmt.Errorf("receive: %w", err)
		}
		for _, m := range out.Messages {
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
				var entries []types.SendMessageBatchRequestEntry
				for i := start; i < min(start+10, n); i++ {
					entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String(body(i))})
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
	for s := 0; s < len(ev.Records); s += 10 {
		var entries []types.DeleteMessageBatchRequestEntry
		for i := s; i < min(s+10, len(ev.Records)); i++ {
			entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: aws.String(ev.Records[i].ReceiptHandle)})
		}
		_, _ = c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
	}
}
