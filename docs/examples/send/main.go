// Command send is the Go example of docs/endpoints-guide.md: it sends one
// event for a tenant to herald's event queue with the producer package.
//
//	HERALD_EVENT_QUEUE_URL=https://sqs.eu-west-1.amazonaws.com/123456789012/herald-EventQueue-… go run ./docs/examples/send
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

func main() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	p := &producer.Client{
		SQS:    sqs.NewFromConfig(cfg),
		Queues: map[notification.Channel]string{notification.ChannelEvent: os.Getenv("HERALD_EVENT_QUEUE_URL")}, // the EventQueueUrl output
	}
	if err := send(ctx, p); err != nil {
		log.Fatal(err)
	}
}

func send(ctx context.Context, p *producer.Client) error {
	res, err := p.Send(ctx, &notification.Message{
		Version: notification.Version,
		ID:      "evt_01jh7q3kz9", // yours, unique per event: a second send of it delivers nothing twice
		Channel: notification.ChannelEvent,
		Event: &notification.Event{
			Tenant:  "acme",
			Type:    "invoice.paid",
			Payload: json.RawMessage(`{"invoice_id":"INV-2026-0042","amount":4200,"currency":"EUR"}`),
		},
	})
	if err != nil {
		return err // *producer.InvalidError: nothing sent; else see producer.OutcomeUnknown
	}
	fmt.Println("sent", res[0].ID)
	return nil
}
