// Package localrunner plays the Lambda event source mapping for SQS on a
// developer's machine: it long-polls a queue, hands each batch to the same
// handler the Lambda runs, as an events.SQSEvent with the real message
// attributes, deletes the records the handler did not report failed, and
// leaves the failed ones for their visibility timeout.
//
// It follows the documented behaviour of the event source mapping with
// ReportBatchItemFailures
// (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html):
// a handler error, or a response naming an unknown message ID, fails the
// whole batch.
package localrunner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Handler is the function under test, as lambda.Start would call it.
type Handler func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// API is the part of the SQS API the runner calls.
type API interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var _ API = (*sqs.Client)(nil)

// Runner is a local event source mapping for one queue.
type Runner struct {
	SQS      API
	QueueURL string
	Handler  Handler
	// BatchSize is the most records per invocation (1–10). Defaults to 10.
	BatchSize int
	// WaitTime is the long-poll wait of each receive (0–20 s). Defaults to 1 s.
	WaitTime time.Duration
	// FunctionTimeout is each invocation's deadline. Defaults to 30 s.
	FunctionTimeout time.Duration
	// Region is put on each record (awsRegion). Defaults to us-east-1.
	Region string
	// Logger receives one line per invocation. Defaults to slog.Default().
	Logger *slog.Logger

	queueARN string
}

// Run polls until ctx is done, then returns nil; it returns an error only
// when the queue cannot be read at all.
func (r *Runner) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if _, err := r.Poll(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.logger().Error("local event source mapping: poll failed", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}

// Poll does one receive and, when it returns records, one invocation and
// the deletes. It returns the number of records handed to the handler.
func (r *Runner) Poll(ctx context.Context) (int, error) {
	if err := r.init(ctx); err != nil {
		return 0, err
	}
	out, err := r.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(r.QueueURL),
		MaxNumberOfMessages:         int32(r.batchSize()),
		WaitTimeSeconds:             int32(r.waitTime().Seconds()),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return 0, fmt.Errorf("receive: %w", err)
	}
	if len(out.Messages) == 0 {
		return 0, nil
	}
	ev := r.event(out.Messages)

	invokeCtx, cancel := context.WithTimeout(ctx, r.functionTimeout())
	resp, herr := r.Handler(invokeCtx, ev)
	cancel()

	failed, ok := failedIDs(ev, resp)
	switch {
	case herr != nil:
		r.logger().Warn("local event source mapping: handler error, whole batch fails", "records", len(ev.Records), "error", herr)
		return len(ev.Records), nil
	case !ok:
		r.logger().Warn("local event source mapping: response names an unknown message id, whole batch fails", "records", len(ev.Records))
		return len(ev.Records), nil
	}
	var entries []types.DeleteMessageBatchRequestEntry
	for i, m := range out.Messages {
		if !failed[aws.ToString(m.MessageId)] {
			entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(entries) > 0 {
		del, err := r.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(r.QueueURL), Entries: entries})
		if err != nil {
			return len(ev.Records), fmt.Errorf("delete: %w", err)
		}
		if len(del.Failed) > 0 {
			return len(ev.Records), fmt.Errorf("delete: %d of %d entries failed, first: %s", len(del.Failed), len(entries), aws.ToString(del.Failed[0].Message))
		}
	}
	return len(ev.Records), nil
}

// event builds the SQSEvent the Lambda service would send for msgs.
func (r *Runner) event(msgs []types.Message) events.SQSEvent {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	for i, m := range msgs {
		attrs := make(map[string]events.SQSMessageAttribute, len(m.MessageAttributes))
		for k, a := range m.MessageAttributes {
			attrs[k] = events.SQSMessageAttribute{
				StringValue: a.StringValue,
				BinaryValue: a.BinaryValue,
				DataType:    aws.ToString(a.DataType),
			}
		}
		ev.Records[i] = events.SQSMessage{
			MessageId:              aws.ToString(m.MessageId),
			ReceiptHandle:          aws.ToString(m.ReceiptHandle),
			Body:                   aws.ToString(m.Body),
			Md5OfBody:              aws.ToString(m.MD5OfBody),
			Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
			Attributes:             m.Attributes,
			MessageAttributes:      attrs,
			EventSourceARN:         r.queueARN,
			EventSource:            "aws:sqs",
			AWSRegion:              r.region(),
		}
	}
	return ev
}

// failedIDs returns the reported failures, and false when one names a
// message that is not in the batch or is empty.
func failedIDs(ev events.SQSEvent, resp events.SQSEventResponse) (map[string]bool, bool) {
	in := make(map[string]bool, len(ev.Records))
	for _, rec := range ev.Records {
		in[rec.MessageId] = true
	}
	failed := make(map[string]bool, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		if !in[f.ItemIdentifier] {
			return nil, false
		}
		failed[f.ItemIdentifier] = true
	}
	return failed, true
}

func (r *Runner) init(ctx context.Context) error {
	if r.queueARN != "" {
		return nil
	}
	if r.SQS == nil || r.QueueURL == "" || r.Handler == nil {
		return errors.New("localrunner: SQS, QueueURL and Handler are required")
	}
	out, err := r.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(r.QueueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return fmt.Errorf("queue %s: %w", r.QueueURL, err)
	}
	r.queueARN = out.Attributes[string(types.QueueAttributeNameQueueArn)]
	if r.Region == "" && strings.HasPrefix(r.queueARN, "arn:") {
		if parts := strings.Split(r.queueARN, ":"); len(parts) > 3 {
			r.Region = parts[3]
		}
	}
	return nil
}

func (r *Runner) batchSize() int {
	if r.BatchSize < 1 || r.BatchSize > 10 {
		return 10
	}
	return r.BatchSize
}

func (r *Runner) waitTime() time.Duration {
	if r.WaitTime <= 0 {
		return time.Second
	}
	return min(r.WaitTime, 20*time.Second)
}

func (r *Runner) functionTimeout() time.Duration {
	if r.FunctionTimeout <= 0 {
		return 30 * time.Second
	}
	return r.FunctionTimeout
}

func (r *Runner) region() string {
	if r.Region == "" {
		return "us-east-1"
	}
	return r.Region
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.Default()
	}
	return r.Logger
}
