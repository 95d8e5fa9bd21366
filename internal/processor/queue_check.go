package processor

import (
	"cmp"
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
	"github.com/heraldhq/herald/producer"
)

// QueueAttributesAPI reads queue attributes: the one call CheckQueues makes.
type QueueAttributesAPI interface {
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var _ QueueAttributesAPI = (*sqs.Client)(nil)

// QueueSettings are the settings of herald that the queues must agree with.
type QueueSettings struct {
	// QueueURL and DeadLetterQueueURL are the queues.
	QueueURL, DeadLetterQueueURL string
	// MaxReceiveCount is the redrive policy's maxReceiveCount herald uses.
	MaxReceiveCount int
	// Backoff is the retry schedule.
	Backoff backoff.Policy
	// FunctionTimeout is the function's timeout; zero skips the visibility
	// timeout check (Lambda does not tell a function its timeout before the
	// first invocation).
	FunctionTimeout time.Duration
	// BatchingWindow is the event source mapping's
	// MaximumBatchingWindowInSeconds.
	BatchingWindow time.Duration
	// Names are what the errors call these settings where the operator set
	// them (package config passes its environment variable names). Empty
	// names are the field names above.
	Names SettingNames
}

// SettingNames name the settings of QueueSettings in errors.
type SettingNames struct {
	DeadLetterQueueURL, MaxReceiveCount, BackoffBase, BackoffCap, BatchingWindow string
}

// withDefaults returns n with each empty name set to its field's name.
func (n SettingNames) withDefaults() SettingNames {
	n.DeadLetterQueueURL = cmp.Or(n.DeadLetterQueueURL, "DeadLetterQueueURL")
	n.MaxReceiveCount = cmp.Or(n.MaxReceiveCount, "MaxReceiveCount")
	n.BackoffBase = cmp.Or(n.BackoffBase, "Backoff.Base")
	n.BackoffCap = cmp.Or(n.BackoffCap, "Backoff.Cap")
	n.BatchingWindow = cmp.Or(n.BatchingWindow, "BatchingWindow")
	return n
}

// CheckQueues reads both queues' attributes (two GetQueueAttributes calls)
// and returns every disagreement with s, joined; each error names both
// settings. The rules:
//   - the main queue's VisibilityTimeout is at least 6 × the function timeout
//     plus the batching window (AWS guidance for SQS event sources: "at
//     least six times the timeout that you configure on your function" plus
//     MaximumBatchingWindowInSeconds), when s.FunctionTimeout is set;
//   - the dead-letter queue's MaximumMessageSize is at least the main
//     queue's (equal is what two queues created with SQS's defaults have),
//     so that the largest message fits it: a dead letter shortens its
//     reason to fit beside the body, down to its outcome, class and ids,
//     and one that fits even so is left to the redrive policy;
//   - its redrive policy names the dead-letter queue, with maxReceiveCount
//     equal to s.MaxReceiveCount;
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
	names := s.Names.withDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	visibility := seconds(main, types.QueueAttributeNameVisibilityTimeout)
	if want := 6*s.FunctionTimeout + s.BatchingWindow; s.FunctionTimeout > 0 && visibility < want {
		bad("queue VisibilityTimeout %s is less than 6 × the function timeout %s plus the batching window %s (%s) = %s: SQS could deliver a batch again while it is still being handled", visibility, s.FunctionTimeout, s.BatchingWindow, names.BatchingWindow, want)
	}
	mainMax, _ := strconv.Atoi(main[string(types.QueueAttributeNameMaximumMessageSize)])
	if mainMax <= 0 {
		mainMax = notification.SQSMaxMessageBytes // not reported: judged as the largest SQS allows
	}
	dlqMax, _ := strconv.Atoi(dlq[string(types.QueueAttributeNameMaximumMessageSize)])
	if dlqMax > 0 && dlqMax < mainMax {
		bad("dead-letter queue MaximumMessageSize %d is less than the queue's MaximumMessageSize %d: a failed message of the queue's largest size could not be dead-lettered (docs/delivery.md, \"Message size\")", dlqMax, mainMax)
	}
	var redrive struct {
		DeadLetterTargetArn string      `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.Number `json:"maxReceiveCount"`
	}
	if raw := main[string(types.QueueAttributeNameRedrivePolicy)]; raw == "" {
		bad("queue %s has no RedrivePolicy: herald needs one to dead-letter what it cannot (%s %s)", s.QueueURL, names.DeadLetterQueueURL, s.DeadLetterQueueURL)
	} else if err := json.Unmarshal([]byte(raw), &redrive); err != nil {
		bad("queue RedrivePolicy %q: %v", raw, err)
	} else {
		if n, _ := strconv.Atoi(redrive.MaxReceiveCount.String()); n != s.MaxReceiveCount {
			bad("queue RedrivePolicy maxReceiveCount %s differs from %s %d", redrive.MaxReceiveCount, names.MaxReceiveCount, s.MaxReceiveCount)
		}
		if arn := dlq[string(types.QueueAttributeNameQueueArn)]; arn != "" && redrive.DeadLetterTargetArn != arn {
			bad("queue RedrivePolicy deadLetterTargetArn %s is not %s's queue %s", redrive.DeadLetterTargetArn, names.DeadLetterQueueURL, arn)
		}
	}
	retention := seconds(main, types.QueueAttributeNameMessageRetentionPeriod)
	if total := s.Backoff.Total(s.MaxReceiveCount); total >= retention {
		bad("retry schedule of %s (%s %s, %s %s, %s %d) is not shorter than the queue's MessageRetentionPeriod %s",
			total, names.BackoffBase, s.Backoff.Base, names.BackoffCap, s.Backoff.Cap, names.MaxReceiveCount, s.MaxReceiveCount, retention)
	}
	if dlqRetention := seconds(dlq, types.QueueAttributeNameMessageRetentionPeriod); dlqRetention <= retention {
		bad("dead-letter queue MessageRetentionPeriod %s is not longer than the queue's MessageRetentionPeriod %s: a dead letter keeps its original enqueue time, so it could expire on arrival", dlqRetention, retention)
	}
	if producer.IsFIFO(s.QueueURL) != producer.IsFIFO(s.DeadLetterQueueURL) {
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
