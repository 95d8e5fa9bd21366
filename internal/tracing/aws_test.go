package tracing_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/internal/tracing"
)

// TestAWSMiddleware: a span per SDK call, its service's error code on
// failure, never a parameter (the queue URL, the body).
func TestAWSMiddleware(t *testing.T) {
	t.Parallel()
	tr, rcv := setup(t)
	srv := sqstest.New(t)
	const queue = "https://sqs.us-east-1.amazonaws.com/123456789012/traced"
	srv.AddQueue(queue, nil)
	cfg := awstest.Config(srv.URL())
	cfg.APIOptions = append(cfg.APIOptions, tr.AWSMiddleware)
	client := sqs.NewFromConfig(cfg)

	_, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(queue), MessageBody: aws.String("BODY-SECRET")})
	require.NoError(t, err)
	_, err = client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(queue + "-missing"), MessageBody: aws.String("x")})
	require.Error(t, err)
	require.NoError(t, tr.Flush(t.Context()))

	spans := rcv.Spans()
	require.Len(t, spans, 2)
	ok, failed := spans[0], spans[1]
	require.Equal(t, "SQS.SendMessage", ok.Name)
	require.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, ok.Kind)
	require.Equal(t, "SQS", ok.Attributes[string(tracing.KeyRPCService)])
	require.Equal(t, awstest.Region, ok.Attributes[string(tracing.KeyCloudRegion)])
	require.Equal(t, tracepb.Status_STATUS_CODE_UNSET, ok.StatusCode)
	require.NotEmpty(t, failed.Attributes[string(tracing.KeyErrorType)])
	require.NotEqual(t, "transport", failed.Attributes[string(tracing.KeyErrorType)], "the service's code")
	require.Equal(t, tracepb.Status_STATUS_CODE_ERROR, failed.StatusCode)
	require.Equal(t, int64(400), failed.Attributes[string(tracing.KeyHTTPStatusCode)])
	for _, b := range rcv.Bodies() {
		require.NotContains(t, string(b), "BODY-SECRET")
		require.NotContains(t, string(b), "123456789012")
	}
}
