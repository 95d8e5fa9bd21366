package producer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

func emailBody(id string) []byte {
	return fmt.Appendf(nil, `{"version":1,"id":%q,"channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"t"}}`, id)
}

// TestSendsEachNotificationToItsChannelsQueue: email to the email queue,
// webhooks to the webhook queue, each queue's in input order, results in
// input order; a channel without a queue of its own goes to QueueURL.
func TestSendsEachNotificationToItsChannelsQueue(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	emailQ, hookQ := wire.srv.URL+"/000000000000/h-email", wire.srv.URL+"/000000000000/h-webhook"
	p := &producer.Client{SQS: c, Queues: map[notification.Channel]string{notification.ChannelEmail: emailQ, notification.ChannelWebhook: hookQ}}
	res, err := p.SendBodies(context.Background(), [][]byte{body("w-1", 1), emailBody("e-1"), body("w-2", 1), emailBody("e-2")})
	require.NoError(t, err)
	require.Equal(t, []string{"w-1", "e-1", "w-2", "e-2"}, []string{res[0].ID, res[1].ID, res[2].ID, res[3].ID})
	require.Equal(t, []string{hookQ, emailQ}, wire.queues, "one batch per queue, in order of first use")
	batches := wire.sent()
	require.Contains(t, batches[0][0].MessageBody, `"w-1"`)
	require.Contains(t, batches[0][1].MessageBody, `"w-2"`)
	require.Contains(t, batches[1][0].MessageBody, `"e-1"`)
	require.Contains(t, batches[1][1].MessageBody, `"e-2"`)

	wire2, c2 := newSQSWire()
	t.Cleanup(wire2.Close)
	shared := wire2.srv.URL + "/000000000000/h-notifications"
	p = &producer.Client{SQS: c2, QueueURL: shared, Queues: map[notification.Channel]string{notification.ChannelEmail: emailQ}}
	_, err = p.SendBodies(context.Background(), [][]byte{body("w-1", 1), emailBody("e-1")})
	require.NoError(t, err)
	require.Equal(t, []string{shared, emailQ}, wire2.queues, "the webhook, without a queue of its own, to the queue of every channel")
}

// TestSendsEventsToTheEventQueue: an event goes to the event queue, a
// webhook beside it to the webhook queue; an invalid event sends nothing.
func TestSendsEventsToTheEventQueue(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	eventQ, hookQ := wire.srv.URL+"/000000000000/h-event", wire.srv.URL+"/000000000000/h-webhook"
	p := &producer.Client{SQS: c, Queues: map[notification.Channel]string{notification.ChannelEvent: eventQ, notification.ChannelWebhook: hookQ}}
	event := []byte(`{"version":1,"id":"evt_1","channel":"event","event":{"tenant":"acme","type":"invoice.paid","payload":{"n":1}}}`)
	res, err := p.SendBodies(context.Background(), [][]byte{event, body("w-1", 1)})
	require.NoError(t, err)
	require.Equal(t, "evt_1", res[0].ID)
	require.Equal(t, []string{eventQ, hookQ}, wire.queues)
	require.JSONEq(t, string(event), wire.sent()[0][0].MessageBody)

	_, err = p.SendBodies(context.Background(), [][]byte{[]byte(`{"version":1,"id":"evt_2","channel":"event","event":{"tenant":"acme","type":"invoice:paid","payload":{}}}`)})
	require.ErrorContains(t, err, "event.type")
	require.Len(t, wire.sent(), 2, "nothing more sent")

	_, err = (&producer.Client{SQS: c, Queues: map[notification.Channel]string{notification.ChannelWebhook: hookQ}}).SendBodies(context.Background(), [][]byte{event})
	require.ErrorContains(t, err, "no queue for channel event: give its queue's URL (stack output EventQueueUrl, variable HERALD_EVENT_QUEUE_URL)")
}

// TestNoQueueForAChannelSendsNothing: a channel with no queue at all is a
// misconfiguration named before anything is sent.
func TestNoQueueForAChannelSendsNothing(t *testing.T) {
	t.Parallel()
	wire, c := newSQSWire()
	t.Cleanup(wire.Close)
	p := &producer.Client{SQS: c, Queues: map[notification.Channel]string{notification.ChannelEmail: wire.srv.URL + "/000000000000/h-email"}}
	_, err := p.SendBodies(context.Background(), [][]byte{emailBody("e-1"), body("w-1", 1)})
	require.ErrorContains(t, err, "no queue for channel webhook: give its queue's URL (stack output WebhookQueueUrl, variable HERALD_WEBHOOK_QUEUE_URL)")
	require.Empty(t, wire.sent(), "nothing sent")

	_, err = (&producer.Client{SQS: c}).SendBodies(context.Background(), [][]byte{emailBody("e-1")})
	require.ErrorContains(t, err, "Queues or QueueURL are required")

	// One FIFO channel queue without GroupID: nothing sent, the standard one neither.
	p = &producer.Client{SQS: c, Queues: map[notification.Channel]string{
		notification.ChannelEmail:   wire.srv.URL + "/000000000000/h-email",
		notification.ChannelWebhook: wire.srv.URL + "/000000000000/h-webhook.fifo",
	}}
	_, err = p.SendBodies(context.Background(), [][]byte{emailBody("e-1"), body("w-1", 1)})
	require.ErrorContains(t, err, "h-webhook.fifo is a FIFO queue: a GroupID or GroupBy is required")
	require.Empty(t, wire.sent())
}

func TestQueueNames(t *testing.T) {
	t.Parallel()
	for ch, want := range map[notification.Channel][4]string{
		notification.ChannelEmail:   {"EmailQueueUrl", "EmailDeadLetterQueueUrl", "HERALD_EMAIL_QUEUE_URL", "HERALD_EMAIL_DLQ_URL"},
		notification.ChannelWebhook: {"WebhookQueueUrl", "WebhookDeadLetterQueueUrl", "HERALD_WEBHOOK_QUEUE_URL", "HERALD_WEBHOOK_DLQ_URL"},
		notification.ChannelChat:    {"ChatQueueUrl", "ChatDeadLetterQueueUrl", "HERALD_CHAT_QUEUE_URL", "HERALD_CHAT_DLQ_URL"},
		notification.ChannelEvent:   {"EventQueueUrl", "EventDeadLetterQueueUrl", "HERALD_EVENT_QUEUE_URL", "HERALD_EVENT_DLQ_URL"},
	} {
		require.Equal(t, want, [4]string{producer.QueueOutput(ch), producer.DeadLetterQueueOutput(ch), producer.QueueURLEnv(ch), producer.DeadLetterQueueURLEnv(ch)})
	}
	require.True(t, strings.HasSuffix(producer.QueueOutput(""), "QueueUrl"))
}
