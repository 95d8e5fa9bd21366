package main

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// TestSend: the guide's Go producer puts its event on the event queue, as
// the contract's event.
func TestSend(t *testing.T) {
	t.Parallel()
	sq := sqstest.New(t)
	q := sq.URL() + "/123456789012/herald-event"
	sq.AddQueue(q, nil)
	c := sqs.New(sqs.Options{Region: "eu-west-1", BaseEndpoint: aws.String(sq.URL()), Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", "")})
	require.NoError(t, send(context.Background(), &producer.Client{SQS: c, Queues: map[notification.Channel]string{notification.ChannelEvent: q}}))
	msgs := sq.Messages(q)
	require.Len(t, msgs, 1)
	m, err := notification.Parse([]byte(msgs[0].Body))
	require.NoError(t, err)
	require.Equal(t, "evt_01jh7q3kz9", m.ID)
	require.Equal(t, &notification.Event{Tenant: "acme", Type: "invoice.paid", Payload: m.Event.Payload}, m.Event)
	require.JSONEq(t, `{"invoice_id":"INV-2026-0042","amount":4200,"currency":"EUR"}`, string(m.Event.Payload))
}
