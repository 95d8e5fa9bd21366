//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
)

// TestDisableAgainstTheLocalStack: with the local stack's table (moto), an
// origin answering 503 with no success for 2 s (threshold 3, a probe a
// second) is disabled by the deliver function; notifications sent to it
// then are dead-lettered with class destination_disabled and never reach
// it. The disabling puts one destination.disabled event on the test's
// EventBridge bus, which a rule routes to an SQS queue. `herald
// destinations ls` lists it disabled; after `herald destinations enable`
// (and the origin answering 200 again) new notifications are delivered,
// destination.recovered is put on the bus, and `herald dlq redrive --class
// destination_disabled` delivers those dead-lettered meanwhile.
func TestDisableAgainstTheLocalStack(t *testing.T) {
	t.Parallel()
	table := storeTable(t)
	bus, events := eventRoute(t)
	var up atomic.Bool
	e := setup(t, options{respond: func(string, int) int {
		if up.Load() {
			return 200
		}
		return 503
	}, deliver: func(_ *env, c *config.Deliver, _ *app.DeliverOptions) {
		c.StoreTable, c.CircuitThreshold, c.CircuitProbeInterval = table, 3, time.Second
		c.DestinationDisableAfter = 2 * time.Second
		c.EventBus = bus
		c.Concurrency = 1
	}})
	st, err := store.New(dynamodb.NewFromConfig(e.awsCfg), store.Config{Table: table})
	require.NoError(t, err)
	origin, err := webhook.Origin(e.receiver.URL())
	require.NoError(t, err)
	body := func(id string) string {
		return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + e.receiver.URL() + `/secret-path","event_type":"t","payload":{}}}`
	}
	tag := randHex(4)

	// Keep the origin failing until a probe finds it failing for 2 s.
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		h, err := st.Health(e.ctx, origin)
		require.NoError(t, err)
		if h.Disabled() {
			require.Equal(t, store.DisabledByHerald, h.DisabledBy)
			require.Equal(t, string(webhook.ClassHTTP5xx), h.FailureClass)
			break
		}
		require.True(t, time.Now().Before(deadline), "not disabled within 60 s: %+v", h)
		e.send(body(fmt.Sprintf("fail-%s-%d", tag, i)))
		_, err = e.runner.Poll(e.ctx)
		require.NoError(t, err)
	}

	// The event, routed by the bus's rule to the queue.
	// receive takes the events the queue holds, deletes them (a message
	// left in flight comes back after the queue's visibility timeout, and
	// this test can outlast it under load), and keeps one of each herald
	// event (detail.id). One transition, one event; but PutEvents has no
	// idempotency key, so a put whose answer LocalStack cut short and the
	// SDK retried can put it twice (seen in a fresh-clone run), and SQS
	// delivers at least once: the copies carry the same detail, which is
	// what a consumer deduplicates on (docs/alarms.md).
	var got []map[string]any
	copies := map[string]map[string]any{}
	receive := func() {
		out, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(events), WaitTimeSeconds: 1, MaxNumberOfMessages: 10})
		require.NoError(t, err)
		for _, m := range out.Messages {
			var ev map[string]any
			require.NoError(t, json.Unmarshal([]byte(aws.ToString(m.Body)), &ev))
			_, err := e.sqs.DeleteMessage(e.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(events), ReceiptHandle: m.ReceiptHandle})
			require.NoError(t, err)
			detail, _ := ev["detail"].(map[string]any)
			id, _ := detail["id"].(string)
			require.NotEmpty(t, id, "a herald event has detail.id: %v", ev)
			if first, seen := copies[id]; seen {
				require.Equal(t, first["detail"], ev["detail"], "a second event with one id is a copy of the first")
				continue
			}
			copies[id] = ev
			got = append(got, ev)
		}
	}
	require.Eventually(t, func() bool {
		receive()
		return len(got) > 0
	}, 30*time.Second, 100*time.Millisecond)
	require.Equal(t, "herald", got[0]["source"])
	require.Equal(t, "destination.disabled", got[0]["detail-type"])
	detail := got[0]["detail"].(map[string]any)
	require.Equal(t, origin, detail["origin"])
	require.Equal(t, string(webhook.ClassHTTP5xx), detail["last_failure_class"])
	require.Equal(t, "herald", detail["disabled_by"])
	require.NotContains(t, fmt.Sprint(got), "secret-path")

	before := len(e.receiver.Requests())
	var ids []string
	for i := range 3 {
		ids = append(ids, fmt.Sprintf("dis-%s-%d", tag, i))
	}
	e.send(body(ids[0]), body(ids[1]), body(ids[2]))
	disabledLine := func(id string) map[string]any {
		for _, l := range e.logs.all() {
			if l["msg"] == processor.LineNotification && l["id"] == id && l["outcome"] == "dead_lettered" {
				return l
			}
		}
		return nil
	}
	e.pollUntil(60*time.Second, func() bool {
		for _, id := range ids {
			if disabledLine(id) == nil {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		l := disabledLine(id)
		require.Equal(t, string(circuit.ClassDestinationDisabled), l["error_class"], l)
		require.NotContains(t, fmt.Sprint(l), "secret-path")
	}
	require.Len(t, e.receiver.Requests(), before, "a disabled origin gets nothing")

	// The operator's view and action, with the command against the same
	// table (Scan and conditional writes on moto).
	cli := &cliEnv{t: t, ctx: e.ctx, sqs: e.sqs, queues: e.queues, vars: map[string]string{
		"HERALD_STORE_TABLE": table, "HERALD_CIRCUIT_THRESHOLD": "3", "HERALD_EVENT_BUS": bus,
		"HERALD_QUEUE_URL": e.queues.URL, "HERALD_DLQ_URL": e.queues.DLQURL,
	}}
	ls := cli.herald("", "--json", "destinations", "ls")
	require.Zero(t, ls.code, "%+v", ls)
	var listed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(ls.stdout), &listed), ls.stdout)
	state := map[any]any{}
	for _, d := range listed {
		state[d["origin"]] = d["state"]
	}
	require.Equal(t, "disabled", state[origin], ls.stdout)

	up.Store(true)
	en := cli.herald("", "destinations", "enable", e.receiver.URL()+"/secret-path")
	require.Zero(t, en.code, "%+v", en)
	require.Equal(t, origin+" enabled\n", en.stdout)
	h, err := st.Health(e.ctx, origin)
	require.NoError(t, err)
	require.False(t, h.Disabled())
	// The environment's copy of the health lives 5 s; what it holds back
	// meanwhile is dead-lettered as disabled, so let it pass first.
	time.Sleep(6 * time.Second)
	again := fmt.Sprintf("again-%s", tag)
	e.send(body(again))
	e.pollUntil(60*time.Second, func() bool {
		for _, l := range e.logs.all() {
			if l["id"] == again && l["outcome"] == "delivered" {
				return true
			}
		}
		return false
	})
	sent := false
	for _, r := range e.receiver.Requests() {
		sent = sent || (r.Header.Get("webhook-id") == again && r.Status == 200)
	}
	require.True(t, sent, "enabled: sent again")

	// The operator's enable put destination.recovered on the bus.
	require.Eventually(t, func() bool {
		receive()
		return len(got) > 1
	}, 30*time.Second, 100*time.Millisecond)
	require.Len(t, got, 2, "one destination.disabled and one destination.recovered: %v", got)
	require.Equal(t, "destination.recovered", got[1]["detail-type"])

	// The dead letters of the disabled time, redriven, are delivered.
	rd := cli.herald("", "dlq", "redrive", "--class", string(circuit.ClassDestinationDisabled))
	require.Zero(t, rd.code, "%+v", rd)
	e.pollUntil(60*time.Second, func() bool {
		delivered := map[string]bool{}
		for _, l := range e.logs.all() {
			if id, _ := l["id"].(string); l["outcome"] == "delivered" {
				delivered[id] = true
			}
		}
		for _, id := range ids {
			if !delivered[id] {
				return false
			}
		}
		return true
	})
}

// eventRoute creates an EventBridge bus for the test, with a rule that
// sends every event of source herald to a new SQS queue, and returns the
// bus's name and the queue's URL.
func eventRoute(t *testing.T) (bus, queueURL string) {
	t.Helper()
	ctx := context.Background()
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	eb, sq := eventbridge.NewFromConfig(awsCfg), sqs.NewFromConfig(awsCfg)
	name := "it-" + randHex(6)
	_, err = eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(name)})
	require.NoError(t, err)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + "-events")})
	require.NoError(t, err)
	attrs, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	require.NoError(t, err)
	_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventBusName: aws.String(name), EventPattern: aws.String(`{"source":["herald"]}`)})
	require.NoError(t, err)
	_, err = eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name), EventBusName: aws.String(name), Targets: []ebtypes.Target{{
		Id: aws.String("queue"), Arn: aws.String(attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]),
	}}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(name), EventBusName: aws.String(name), Ids: []string{"queue"}})
		_, _ = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(name), EventBusName: aws.String(name)})
		_, _ = eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: aws.String(name)})
		_, _ = sq.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl})
	})
	return name, aws.ToString(q.QueueUrl)
}
