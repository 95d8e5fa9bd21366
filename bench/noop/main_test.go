package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"
)

// TestHandleSucceedsEveryRecord: any batch, however its records read, is
// answered with an empty partial batch response (nothing handed back),
// even after the invocation's context ended.
func TestHandleSucceedsEveryRecord(t *testing.T) {
	t.Parallel()
	var ev events.SQSEvent
	require.NoError(t, json.Unmarshal([]byte(`{"Records":[
		{"messageId":"m-1","receiptHandle":"rh-1","body":"{\"version\":1}","eventSourceARN":"arn:aws:sqs:us-east-1:123456789012:herald-webhook"},
		{"messageId":"m-2","receiptHandle":"rh-2","body":"not json","eventSourceARN":"arn:aws:sqs:us-east-1:123456789012:herald-webhook"}]}`), &ev))
	require.Len(t, ev.Records, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, in := range []events.SQSEvent{ev, {}} {
		resp, err := handle(ctx, in)
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
		out, err := json.Marshal(resp)
		require.NoError(t, err)
		require.JSONEq(t, `{"batchItemFailures":null}`, string(out), "what Lambda reads: no failure")
	}
}
