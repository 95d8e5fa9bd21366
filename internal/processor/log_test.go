package processor_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/processor"
)

// TestHandleLogLineFields: each record's one line carries the notification
// id (also of an invalid body that has one), its channel, its metadata as a
// group, the receive count and level by outcome; a body without an id has
// no id field.
func TestHandleLogLineFields(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	withMeta := `{"version":1,"id":"ok-meta","channel":"webhook","metadata":{"tenant":"acme"},"webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", withMeta, 2),
		rec("m2", webhookBody("ok-plain"), 1),
		rec("m3", `{"version":1,"id":"bad-1","channel":"carrier-pigeon"}`, 1),
		rec("m4", `no id here`, 1),
		rec("m5", webhookBody("transient-5"), 1),
	}})
	require.NoError(t, err)
	lines := logLines(t, b)

	require.Equal(t, "ok-meta", lines["m1"]["id"])
	require.Equal(t, "webhook", lines["m1"]["channel"])
	require.Equal(t, float64(2), lines["m1"]["receive_count"])
	require.Equal(t, map[string]any{"tenant": "acme"}, lines["m1"]["metadata"])
	require.Equal(t, "INFO", lines["m1"]["level"])
	require.NotContains(t, lines["m1"], "delay_seconds", "only a retry has a delay")

	require.NotContains(t, lines["m2"], "metadata", "no metadata, no group")

	require.Equal(t, "bad-1", lines["m3"]["id"], "an invalid body's id is still logged")
	require.Equal(t, "WARN", lines["m3"]["level"])

	require.NotContains(t, lines["m4"], "id")

	require.Equal(t, "retry", lines["m5"]["outcome"])
	require.Equal(t, float64(10), lines["m5"]["delay_seconds"])
	require.Equal(t, "WARN", lines["m5"]["level"])
}

// TestHandleLogsSQSFailuresAsErrors: a record whose SQS call failed is
// logged at ERROR with the SQS error beside the delivery's.
func TestHandleLogsSQSFailuresAsErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.wire.FailAction("SendMessage")
	_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m1", webhookBody("permanent-1"), 1)}})
	require.NoError(t, err)
	l := logLines(t, b)["m1"]
	require.Equal(t, "ERROR", l["level"])
	require.Equal(t, "webhook_gone", l["error_class"])
	require.Contains(t, l["sqs_error"], "send to dead-letter queue")
}

// TestNewAcceptsTheSmallestValidConfig: MaxReceiveCount 1 (every failure is
// the last) is valid.
func TestNewAcceptsTheSmallestValidConfig(t *testing.T) {
	t.Parallel()
	_, client := newSQSWire(t)
	_, err := processor.New(client, processor.Config{QueueURL: "q", DeadLetterQueueURL: "d", MaxReceiveCount: 1})
	require.NoError(t, err)
	_, err = processor.New(nil, processor.Config{QueueURL: "q", DeadLetterQueueURL: "d", MaxReceiveCount: 1})
	require.ErrorContains(t, err, "nil QueueAPI")
	_, err = processor.New(client, processor.Config{QueueURL: "q", MaxReceiveCount: 1})
	require.ErrorContains(t, err, "DeadLetterQueueURL is required")
}
