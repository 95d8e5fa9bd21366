//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// TestFanoutOnTheLocalStack: an event sent with the producer to the event
// queue (LocalStack SQS) is fanned out by the fan-out function's processor
// over the real endpoint store (moto DynamoDB with the tenant index,
// LocalStack KMS): one delivery per enabled endpoint of the tenant whose
// filter matches, on its channel's queue, none to another tenant's, a
// disabled or a non-matching endpoint; the same event handed over again
// creates nothing more; an event of a tenant without endpoints is settled.
func TestFanoutOnTheLocalStack(t *testing.T) {
	s := newEndpointStore(t)
	ctx := s.ctx
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	sqsc := sqs.NewFromConfig(awsCfg)
	name := "it-fanout-" + randHex(4)
	qs := map[string]localenv.Queues{}
	for _, ch := range []string{"webhook", "chat", "event"} {
		qs[ch], err = localenv.CreateQueues(ctx, sqsc, name+"-"+ch, 3, 30*time.Second)
		require.NoError(t, err)
	}

	tenant := "acme-" + randHex(3)
	create := func(tenant string, kind endpoint.Kind, url string, filter []string) string {
		e, err := s.t.Create(ctx, endpoint.Endpoint{Tenant: tenant, Kind: kind, URL: url, EventTypes: filter})
		require.NoError(t, err)
		return e.ID
	}
	var want []string
	for range 23 {
		want = append(want, create(tenant, endpoint.KindWebhook, "https://hooks.example.com/h", []string{"invoice.*"}))
	}
	want = append(want, create(tenant, endpoint.KindSlack, "https://hooks.slack.com/services/T000/B000/XXXX", nil))
	create(tenant, endpoint.KindWebhook, "https://hooks.example.com/h", []string{"customer.created"})
	create("globex-"+randHex(3), endpoint.KindWebhook, "https://hooks.example.com/h", nil)
	off := create(tenant, endpoint.KindWebhook, "https://hooks.example.com/h", nil)
	_, err = s.t.SetDisabled(ctx, off, &endpoint.Disabled{Reason: "maintenance", By: "operator"})
	require.NoError(t, err)

	var logs bytes.Buffer
	p, err := app.NewFanout(config.Fanout{
		EventQueue:      redrive.Queue{Channel: notification.ChannelEvent, URL: qs["event"].URL, DeadLetterURL: qs["event"].DLQURL},
		WebhookQueueURL: qs["webhook"].URL, ChatQueueURL: qs["chat"].URL,
		StoreTable: s.table, MaxReceiveCount: 3, BackoffBase: time.Second, BackoffCap: time.Minute,
		Concurrency: 10, Window: time.Hour,
	}, awsCfg, app.LoggerTo(&logs, 0))
	require.NoError(t, err)

	send := producer.Client{SQS: sqsc, Queues: map[notification.Channel]string{notification.ChannelEvent: qs["event"].URL}}
	fanOut := func(body string) {
		t.Helper()
		_, err := send.SendBodies(ctx, [][]byte{[]byte(body)})
		require.NoError(t, err)
		out, err := sqsc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(qs["event"].URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 5,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		require.NoError(t, err)
		require.Len(t, out.Messages, 1)
		m := out.Messages[0]
		ev := events.SQSEvent{Records: []events.SQSMessage{{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
			Attributes: m.Attributes, EventSourceARN: qs["event"].ARN,
		}}}
		hctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		resp, err := p.Handle(hctx, ev)
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures, "%s", logs.String())
	}
	event := `{"version":1,"id":"evt_` + randHex(6) + `","channel":"event","event":{"tenant":"` + tenant + `","type":"invoice.paid","payload":{"invoice":"in_42"}}}`
	fanOut(event)
	fanOut(event) // handed over again: nothing more

	got := map[string]int{}
	for _, ch := range []string{"webhook", "chat"} {
		for _, body := range drain(ctx, t, sqsc, qs[ch].URL) {
			d, err := notification.Parse([]byte(body))
			require.NoError(t, err)
			require.Equal(t, tenant, d.Tenant)
			got[d.ID]++
		}
	}
	require.Len(t, got, len(want), "one delivery per subscribed endpoint: %v", got)
	var evt struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(event), &evt))
	for _, id := range want {
		require.Equal(t, 1, got[endpoint.DeliveryID(evt.ID, id)], "endpoint %s", id)
	}

	fanOut(`{"version":1,"id":"evt_` + randHex(6) + `","channel":"event","event":{"tenant":"nobody-` + randHex(3) + `","type":"invoice.paid","payload":{}}}`)
	require.Contains(t, logs.String(), `"fanout":"no_subscribers"`)
	require.Equal(t, 3, strings.Count(logs.String(), `"msg":"fanout"`), "one fanout line per event handed over: %s", logs.String())
}

// drain receives every message of queueURL (until a receive of 5 s finds
// none) and returns their bodies.
func drain(ctx context.Context, t *testing.T, c *sqs.Client, queueURL string) []string {
	t.Helper()
	var bodies []string
	for {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 60})
		require.NoError(t, err)
		if len(out.Messages) == 0 {
			return bodies
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
		}
	}
}
