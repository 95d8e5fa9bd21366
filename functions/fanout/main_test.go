package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

const base = "https://sqs.us-east-1.amazonaws.com/123456789012/"

// TestStartFansOutTheEventQueue: the cold start reads its settings, builds
// the handler over SQS and DynamoDB, and a batch of the event queue gets
// its partial batch response: an event for an endpoint the tenant does
// not have is settled (no_subscribers, nothing sent, its progress done),
// an invalid event is dead-lettered to the event dead-letter queue with
// its reason. Not parallel: t.Setenv.
func TestStartFansOutTheEventQueue(t *testing.T) {
	sq, db := sqstest.New(t), dynamotest.New(t)
	for _, name := range []string{"herald-event", "herald-event-dlq", "herald-webhook", "herald-chat"} {
		sq.AddQueue(base+name, nil)
	}
	db.AddTable("herald", store.AttrPK, store.AttrSK)
	awstest.Setenv(t, map[string]string{"SQS": sq.URL(), "DYNAMODB": db.URL(), "KMS": awstest.Unreachable})
	env := map[string]string{
		"HERALD_EVENT_QUEUE_URL": base + "herald-event", "HERALD_EVENT_DLQ_URL": base + "herald-event-dlq",
		"HERALD_WEBHOOK_QUEUE_URL": base + "herald-webhook", "HERALD_CHAT_QUEUE_URL": base + "herald-chat",
		"HERALD_STORE_TABLE": "herald",
	}
	var out bytes.Buffer
	h, err := start(context.Background(), func(k string) string { return env[k] }, &out)
	require.NoError(t, err)

	rec := func(id, body string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, ReceiptHandle: "rh-" + id, Body: body,
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:herald-event",
			Attributes:     map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1764900000000"}}
	}
	resp, err := h(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m-1", `{"version":1,"id":"evt_1","channel":"event","event":{"tenant":"acme","type":"herald.test","endpoint":"ep_01jh0000000000000000000000","payload":{}}}`),
		rec("m-2", `{"version":1,"id":"evt_2","channel":"event","event":{"tenant":"acme","type":"invoice:paid","payload":{}}}`),
	}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures, "both settled: %s", out.String())

	require.Empty(t, sq.Messages(base+"herald-webhook"))
	letters := sq.Messages(base + "herald-event-dlq")
	require.Len(t, letters, 1)
	require.Contains(t, *letters[0].MsgAttrs[redrive.AttrReason].StringValue, "event.type")
	require.Len(t, db.Items("herald"), 1, "the settled event's progress item")
	require.Equal(t, "done", db.Items("herald")[0]["state"].(map[string]any)["S"])

	var fanoutLine map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		if m["msg"] == "fanout" {
			fanoutLine = m
		}
	}
	require.Equal(t, "no_subscribers", fanoutLine["fanout"], out.String())

	env["HERALD_STORE_TABLE"] = ""
	_, err = start(context.Background(), func(k string) string { return env[k] }, &out)
	require.ErrorContains(t, err, "HERALD_STORE_TABLE")
}
