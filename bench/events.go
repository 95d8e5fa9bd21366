package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/notification"
)

// eventSizes are the section's tenants, in endpoints: one event to each.
func (o opts) eventSizes() []int {
	switch {
	case o.small.events > 0:
		return []int{1, o.small.events}
	case o.quick:
		return []int{1, 100}
	}
	return []int{1, 100, 1000}
}

// envFileValue is the value of name in the local stack's env file
// (localenv.EnvFile), "" when it has none.
func envFileValue(name string) string {
	b, err := os.ReadFile(localenv.EnvFile)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimPrefix(strings.TrimSpace(l), "export "), name+"="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// eventRow is one tenant's fan-out: n endpoints, the time one Send took
// to enqueue every delivery, and the AWS operations it made.
type eventRow struct {
	n       int
	elapsed time.Duration
	ops     map[string]int
}

// sectionEvents fans one event out to a tenant of 1, 100 and 1,000
// webhook endpoints (a tenant of its own each, created first through the
// endpoint store: moto's DynamoDB with the tenant index, LocalStack's KMS)
// with package fanout as the fan-out function wires it, on queues of its
// own, and prints per event the time to enqueue every delivery, the
// DynamoDB reads and writes and SQS requests it made (counted by an SDK
// middleware, the endpoints' creation not counted), and what the fan-out
// costs per million deliveries: its SQS requests and DynamoDB request units
// at on-demand prices, each Query and GetItem priced as one read unit, and
// its Lambda duration at 128 MB arm64 as measured here.
func sectionEvents(ctx context.Context, o opts, r *results) error {
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	table := o.small.storeTable
	if table == "" {
		if table, err = needStoreTable(); err != nil {
			return err
		}
	}
	keyID := o.small.endpointKey
	if keyID == "" {
		if keyID = envFileValue("HERALD_ENDPOINT_KEY_ID"); keyID == "" {
			return fmt.Errorf("the local stack's env file (%s) names no HERALD_ENDPOINT_KEY_ID: the section needs the endpoint key it provisions", localenv.EnvFile)
		}
	}
	plain := sqs.NewFromConfig(awsCfg)
	counter := &opCounter{n: map[string]int{}}
	counted := awsCfg.Copy()
	counted.APIOptions = append(counted.APIOptions, counter.install)
	kmsc := kms.NewFromConfig(awsCfg)
	writer, err := endpoint.NewTable(endpoint.TableConfig{Table: table, KeyID: keyID, DB: dynamodb.NewFromConfig(awsCfg), KMS: kmsc})
	if err != nil {
		return err
	}
	reader, err := endpoint.NewTable(endpoint.TableConfig{Table: table, KeyID: keyID, DB: dynamodb.NewFromConfig(counted), KMS: kmsc})
	if err != nil {
		return err
	}
	tag := runTag(8)
	queues := map[string]localenv.Queues{}
	for _, ch := range []string{"webhook", "chat", "event"} {
		if queues[ch], err = localenv.CreateQueues(ctx, plain, "bench-events-"+tag+"-"+ch, 5, 60*time.Second); err != nil {
			return err
		}
		defer func(q localenv.Queues) {
			for _, u := range []string{q.URL, q.DLQURL} {
				_, _ = plain.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
			}
		}(queues[ch])
	}
	f, err := fanout.New(fanout.Config{
		Subscribers: reader, Endpoints: reader,
		DB: dynamodb.NewFromConfig(counted), Table: table,
		SQS:             sqs.NewFromConfig(counted),
		WebhookQueueURL: queues["webhook"].URL, ChatQueueURL: queues["chat"].URL, EventQueueURL: queues["event"].URL,
		Logger: quietLogger(),
	})
	if err != nil {
		return err
	}

	// One untimed event first, to a tenant of its own: the timed rows do
	// not pay the SDK clients' first calls (their endpoint rules, signing
	// keys and connections), which a warm fan-out function has paid.
	warm := "bench-" + tag + "-warm"
	if err := createEndpoints(ctx, writer, warm, 1); err != nil {
		return err
	}
	wm, err := benchEvent(tag+"_warm", warm)
	if err != nil {
		return err
	}
	if err := f.Send(ctx, wm); err != nil {
		return fmt.Errorf("the warm-up fan-out: %w", err)
	}
	var rows []eventRow
	enqueued := 1
	for _, n := range o.eventSizes() {
		tenant := "bench-" + tag + "-" + strconv.Itoa(n)
		if err := createEndpoints(ctx, writer, tenant, n); err != nil {
			return err
		}
		m, err := benchEvent(tag+"_"+strconv.Itoa(n), tenant)
		if err != nil {
			return err
		}
		counter.reset()
		sendCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		start := time.Now()
		err = f.Send(sendCtx, m)
		elapsed := time.Since(start)
		cancel()
		if err != nil {
			return fmt.Errorf("fan out to %d endpoints: %w", n, err)
		}
		ops, _ := counter.take()
		enqueued += n
		rows = append(rows, eventRow{n: n, elapsed: elapsed, ops: ops})
	}
	if got, err := queueDepth(ctx, plain, queues["webhook"].URL); err != nil {
		return err
	} else if got != enqueued {
		return fmt.Errorf("the webhook queue holds %d deliveries, want %d: one per endpoint", got, enqueued)
	}
	printEventRows(o, rows)
	r.eventRows = rows
	return nil
}

// benchEvent is the section's event evt_bench_<suffix>, invoice.paid of
// tenant.
func benchEvent(suffix, tenant string) (*notification.Message, error) {
	return notification.Parse([]byte(`{"version":1,"id":"evt_bench_` + suffix + `","channel":"event","event":{"tenant":"` + tenant + `","type":"invoice.paid","payload":{"invoice":"in_42","amount":4200}}}`))
}

// createEndpoints registers n webhook endpoints of tenant, 8 at a time.
func createEndpoints(ctx context.Context, t *endpoint.Table, tenant string, n int) error {
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range work {
				if _, err := t.Create(ctx, endpoint.Endpoint{Tenant: tenant, Kind: endpoint.KindWebhook, URL: "https://hooks.example.com/bench"}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs // nil when none failed
}

// queueDepth is the queue's ApproximateNumberOfMessages.
func queueDepth(ctx context.Context, c *sqs.Client, url string) (int, error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
}

// eventCostPerMillion is what the fan-out of rows' event costs per million
// deliveries: its SQS and DynamoDB calls (opPrice) and its Lambda duration
// at 128 MB on arm64.
func eventCostPerMillion(row eventRow) (calls, lambda float64) {
	for op, n := range row.ops {
		if price, _, ok := opPrice(op); ok {
			calls += float64(n) * price
		}
	}
	lambda = row.elapsed.Seconds() * 0.125 * lambdaPerGBSecondARM
	per := 1e6 / float64(row.n)
	return calls * per, lambda * per
}

func printEventRows(o opts, rows []eventRow) {
	var out [][]string
	for _, row := range rows {
		calls, lambda := eventCostPerMillion(row)
		out = append(out, []string{
			strconv.Itoa(row.n),
			ms(row.elapsed),
			fmt.Sprintf("%.2f ms", float64(row.elapsed.Microseconds())/1000/float64(row.n)),
			strconv.Itoa(row.ops["Query"]),
			strconv.Itoa(row.ops["GetItem"]),
			strconv.Itoa(row.ops["PutItem"]),
			strconv.Itoa(row.ops["SendMessageBatch"] + row.ops["SendMessage"]),
			fmt.Sprintf("$%.2f", calls),
			fmt.Sprintf("$%.3f", lambda),
			describe(otherOps(row.ops)),
		})
	}
	printTable(o.out, fmt.Sprintf("Events: one event fanned out to a tenant's webhook endpoints (package fanout on the local stack: moto's DynamoDB, LocalStack's SQS; after one untimed event to a tenant of its own; %s prices, each Query and GetItem priced as one read unit)", region),
		[]string{"endpoints", "time to enqueue all", "per delivery", "Query", "GetItem", "PutItem", "SQS sends", "SQS + DynamoDB per million deliveries", "Lambda (128 MB) per million", "other calls"}, out)
}

// otherOps are the operations printEventRows has no column for.
func otherOps(ops map[string]int) map[string]int {
	out := map[string]int{}
	for op, n := range ops {
		if !slices.Contains([]string{"Query", "GetItem", "PutItem", "SendMessageBatch", "SendMessage"}, op) {
			out[op] = n
		}
	}
	return out
}
