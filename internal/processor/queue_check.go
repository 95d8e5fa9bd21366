package processor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/notification"
)

// QueueAttributesAPI reads queue attributes: the one call CheckQueues makes.
type QueueAttributesAPI interface {
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var _ QueueAttributesAPI = (*sqs.Client)(nil)

// QueueSettings are the settings of herald that the queues must agree with.
type QueueSettings struct {
	// QueueURL and DeadLetterQueueURL are the queues (HERALD_QUEUE_URL,
	// HERALD_DLQ_URL).
	QueueURL, DeadLetterQueueURL string
	// MaxReceiveCount is HERALD_MAX_RECEIVE_COUNT.
	MaxReceiveCount int
	// Backoff is the retry schedule (HERALD_BACKOFF_*).
	Backoff backoff.Policy
	// FunctionTimeout is the function's timeout; zero skips the visibility
	// timeout check (Lambda does not tell a function its timeout before the
	// first invocation).
	FunctionTimeout time.Duration
	// BatchingWindow is the event source mapping's
	// MaximumBatchingWindowInSeconds (HERALD_BATCHING_WINDOW_SECONDS).
	BatchingWindow time.Duration
}

// CheckQueues reads both queues' attributes (two GetQueueAttributes calls)
// and returns every disagreement with s, joined; each error names both
// settings. The rules:
//   - the main queue's VisibilityTimeout is at least 6 × the function timeout
//     plus the batching window (AWS guidance for SQS event sources: "at
//     least six times the timeout that you configure on your function" plus
//     MaximumBatchingWindowInSeconds), when s.FunctionTimeout is set;
//   - the dead-letter queue's MaximumMessageSize leaves room for a dead
//     letter's reason (notification.DeadLetterReserveBytes) beside the
//     largest message herald keeps whole: the smaller of the main queue's
//     MaximumMessageSize and notification.MaxMessageBytes;
//   - its redrive policy names the dead-letter queue, with maxReceiveCount
//     equal to HERALD_MAX_RECEIVE_COUNT;
//   - the whole retry schedule, Backoff.Total(MaxReceiveCount), fits in its
//     MessageRetentionPeriod, or the last attempts are never made;
//   - the dead-letter queue keeps messages longer than the main queue
//     (a dead letter keeps its original enqueue time when SQS moves it);
//   - both queues are FIFO, or neither is.
func CheckQueues(ctx context.Context, q QueueAttributesAPI, s QueueSettings) error {
	main, err := attributes(ctx, q, s.QueueURL)
	if err != nil {
		return err
	}
	dlq, err := attributes(ctx, q, s.DeadLetterQueueURL)
	if err != nil {
		return err
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	visibility := seconds(main, types.QueueAttributeNameVisibilityTimeout)
	if want := 6*s.FunctionTimeout + s.BatchingWindow; s.FunctionTimeout > 0 && visibility < want {
		bad("queue VisibilityTimeout %s is less than 6 × the function timeout %s plus the batching window %s (HERALD_BATCHING_WINDOW_SECONDS) = %s: SQS could deliver a batch again while it is still being handled", visibility, s.FunctionTimeout, s.BatchingWindow, want)
	}
	mainMax, _ := strconv.Atoi(main[string(types.QueueAttributeNameMaximumMessageSize)])
	dlqMax, _ := strconv.Atoi(dlq[string(types.QueueAttributeNameMaximumMessageSize)])
	if need := min(mainMax, notification.MaxMessageBytes) + notification.DeadLetterReserveBytes; mainMax > 0 && dlqMax > 0 && dlqMax < need {
		bad("dead-letter queue MaximumMessageSize %d is less than %d, the queue's largest message kept whole (MaximumMessageSize %d, at most %d) plus %d bytes for the reason: a failed message could not be dead-lettered (docs/delivery.md, \"Message size\")", dlqMax, need, mainMax, notification.MaxMessageBytes, notification.DeadLetterReserveBytes)
	}
	var redrive struct {
		DeadLetterTargetArn string      `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.Number `json:"maxReceiveCount"`
	}
	if raw := main[string(types.QueueAttributeNameRedrivePolicy)]; raw == "" {
		bad("queue %s has no RedrivePolicy: herald needs one to dead-letter what it cannot (HERALD_DLQ_URL %s)", s.QueueURL, s.DeadLetterQueueURL)
	} else if err := json.Unmarshal([]byte(raw), &redrive); err != nil {
		bad("queue RedrivePolicy %q: %v", raw, err)
	} else {
		if n, _ := strconv.Atoi(redrive.MaxReceiveCount.String()); n != s.MaxReceiveCount {
			bad("queue RedrivePolicy maxReceiveCount %s differs from HERALD_MAX_RECEIVE_COUNT %d", redrive.MaxReceiveCount, s.MaxReceiveCount)
		}
		if arn := dlq[string(types.QueueAttributeNameQueueArn)]; arn != "" && redrive.DeadLetterTargetArn != arn {
			bad("queue RedrivePolicy deadLetterTargetArn %s is not HERALD_DLQ_URL's queue %s", redrive.DeadLetterTargetArn, arn)
		}
	}
	retention := seconds(main, types.QueueAttributeNameMessageRetentionPeriod)
	if total := s.Backoff.Total(s.MaxReceiveCount); total >= retention {
		bad("retry schedule of %s (HERALD_BACKOFF_BASE_SECONDS %d, HERALD_BACKOFF_CAP_SECONDS %d, HERALD_MAX_RECEIVE_COUNT %d) is not shorter than the queue's MessageRetentionPeriod %s",
			total, int(s.Backoff.Base.Seconds()), int(s.Backoff.Cap.Seconds()), s.MaxReceiveCount, retention)
	}
	if dlqRetention := seconds(dlq, types.QueueAttributeNameMessageRetentionPeriod); dlqRetention <= retention {
		bad("dead-letter queue MessageRetentionPeriod %s is not longer than the queue's MessageRetentionPeriod %s: a dead letter keeps its original enqueue time, so it could expire on arrival", dlqRetention, retention)
	}
	if isFIFO(s.QueueURL) != isFIFO(s.DeadLetterQueueURL) {
		bad("queue %s and dead-letter queue %s must both be FIFO or both standard", s.QueueURL, s.DeadLetterQueueURL)
	}
	if len(errs) > 0 {
		return fmt.Errorf("queue settings: %w", errors.Join(errs...))
	}
	return nil
}

func attributes(ctx context.Context, q QueueAttributesAPI, url string) (map[string]string, error) {
	out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameVisibilityTimeout, types.QueueAttributeNameMessageRetentionPeriod,
			types.QueueAttributeNameRedrivePolicy, types.QueueAttributeNameQueueArn,
			types.QueueAttributeNameMaximumMessageSize,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("read attributes of queue %s: %w", url, err)
	}
	return out.Attributes, nil
}

func seconds(attrs map[string]string, name types.QueueAttributeName) time.Duration {
	n, _ := strconv.Atoi(attrs[string(name)])
	return time.Duration(n) * time.Second
}
