package producer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// Send one email notification. The SQS client here talks to a local test
// server; in a service it is sqs.NewFromConfig of the SDK's default config.
func ExampleClient_Send() {
	wire, sqsClient := newSQSWire()
	defer wire.Close()

	c := &producer.Client{SQS: sqsClient, QueueURL: wire.srv.URL + "/000000000000/herald-notifications"}
	results, err := c.Send(context.Background(), &notification.Message{
		Version: notification.Version,
		ID:      "welcome-42",
		Channel: notification.ChannelEmail,
		Email: &notification.Email{
			From: "Acme <noreply@example.com>", To: []string{"jana@example.org"},
			Subject: "Welcome", Text: "Hello Jana",
		},
	})
	if err != nil {
		fmt.Println("not sent:", err)
		return
	}
	for _, r := range results {
		fmt.Println(r.ID, "sent as", r.MessageID)
	}
	// Output: welcome-42 sent as msg-1
}

// Post to a Slack channel, with a fallback text and Block Kit blocks; a
// Discord or Teams message differs in Service and its rich form (Embeds,
// Card). A text over the service's limit is refused before anything is sent.
func ExampleClient_Send_chat() {
	wire, sqsClient := newSQSWire()
	defer wire.Close()

	c := &producer.Client{SQS: sqsClient, QueueURL: wire.srv.URL + "/000000000000/herald-notifications"}
	msg := &notification.Message{
		Version: notification.Version,
		ID:      "deploy-1042",
		Channel: notification.ChannelChat,
		Chat: &notification.Chat{
			Service: notification.ChatSlack,
			URL:     "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
			Text:    "Deploy 1042 finished",
			Blocks:  json.RawMessage(`[{"type":"section","text":{"type":"mrkdwn","text":"*Deploy 1042* finished"}}]`),
		},
	}
	results, err := c.Send(context.Background(), msg)
	fmt.Println(results[0].ID, "sent as", results[0].MessageID, err)

	msg.ID, msg.Chat.Service, msg.Chat.Blocks = "deploy-1043", notification.ChatDiscord, nil
	msg.Chat.Text = strings.Repeat("x", notification.MaxDiscordContentChars+1)
	_, err = c.Send(context.Background(), msg)
	var invalid *producer.InvalidError
	if errors.As(err, &invalid) {
		fmt.Println(invalid.Items[0].Err)
	}
	fmt.Println("batches sent:", len(wire.sent()))
	// Output:
	// deploy-1042 sent as msg-1 <nil>
	// invalid message: chat.text: 2001 characters; discord allows at most 2000
	// batches sent: 1
}

// An invalid notification is reported with its field path, and nothing is
// sent, not even the valid ones beside it.
func ExampleClient_SendBodies_invalid() {
	wire, sqsClient := newSQSWire()
	defer wire.Close()

	c := &producer.Client{SQS: sqsClient, QueueURL: wire.srv.URL + "/000000000000/herald-notifications"}
	_, err := c.SendBodies(context.Background(), [][]byte{
		[]byte(`{"version":1,"id":"ok-1","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a.b","payload":{}}}`),
		[]byte(`{"version":1,"id":"bad-1","channel":"webhook","webhook":{"url":"https://hooks.example.com/a","event_type":"a b","payload":{}}}`),
	})
	var invalid *producer.InvalidError
	if errors.As(err, &invalid) {
		for _, it := range invalid.Items {
			var ne *notification.InvalidError
			if errors.As(it.Err, &ne) {
				fmt.Printf("%s: %s\n", it.ID, ne.Problems[0])
			}
		}
	}
	fmt.Println("batches sent:", len(wire.sent()))
	// Output:
	// bad-1: webhook.event_type: must be 1–128 characters of A-Z a-z 0-9 . _ : -
	// batches sent: 0
}

// Many notifications go out 10 to a SendMessageBatch call.
func ExampleClient_SendBodies() {
	wire, sqsClient := newSQSWire()
	defer wire.Close()

	var bodies [][]byte
	for i := range 23 {
		b, _ := json.Marshal(map[string]any{
			"version": 1, "id": fmt.Sprintf("evt-%02d", i), "channel": "webhook",
			"webhook": map[string]any{"url": "https://hooks.example.com/billing", "event_type": "invoice.paid", "payload": map[string]int{"n": i}},
		})
		bodies = append(bodies, b)
	}
	c := &producer.Client{SQS: sqsClient, QueueURL: wire.srv.URL + "/000000000000/herald-notifications"}
	results, err := c.SendBodies(context.Background(), bodies)
	fmt.Println("error:", err)
	fmt.Println("sent:", len(results))
	for _, b := range wire.sent() {
		fmt.Println("batch of", len(b))
	}
	// Output:
	// error: <nil>
	// sent: 23
	// batch of 10
	// batch of 10
	// batch of 3
}
