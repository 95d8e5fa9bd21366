package app

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// CheckQueues compares each of the deliver function's queues with cfg when
// cfg.CheckQueues is set ([CheckEachQueue]) and returns every disagreement,
// joined.
func CheckQueues(ctx context.Context, cfg config.Deliver, awsCfg aws.Config, functionTimeout time.Duration) error {
	var errs []error
	bad := CheckEachQueue(ctx, cfg, awsCfg, functionTimeout)
	for _, q := range cfg.AllQueues() {
		if err := bad[q]; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CheckEachQueue compares each of the deliver function's queues (a channel's
// queue, or the queue of every channel) with cfg when cfg.CheckQueues is set
// (processor.CheckQueues: two GetQueueAttributes calls per queue), and
// returns the disagreements of each queue that has some. functionTimeout is
// the function's timeout, or zero where it is not known (in Lambda, before
// the first invocation) to skip that check. Errors name the variables the
// operator sets.
func CheckEachQueue(ctx context.Context, cfg config.Deliver, awsCfg aws.Config, functionTimeout time.Duration) map[redrive.Queue]error {
	if !cfg.CheckQueues {
		return nil
	}
	client := sqs.NewFromConfig(awsCfg)
	out := map[redrive.Queue]error{}
	for _, q := range cfg.AllQueues() {
		dlqName := config.EnvDeadLetterQueueURL
		if q.Channel != "" {
			dlqName = config.EnvChannelDeadLetterQueueURL(q.Channel)
		}
		err := processor.CheckQueues(ctx, client, processor.QueueSettings{
			QueueURL:           q.URL,
			DeadLetterQueueURL: q.DeadLetterURL,
			MaxReceiveCount:    cfg.MaxReceiveCount,
			Backoff:            cfg.Backoff(),
			FunctionTimeout:    functionTimeout,
			BatchingWindow:     cfg.BatchingWindow,
			Names: processor.SettingNames{
				DeadLetterQueueURL: dlqName,
				MaxReceiveCount:    config.EnvMaxReceiveCount,
				BackoffBase:        config.EnvBackoffBase,
				BackoffCap:         config.EnvBackoffCap,
				BatchingWindow:     config.EnvBatchingWindow,
			},
		})
		if err != nil {
			out[q] = err
		}
	}
	return out
}

// QueueCauses returns why each queue cannot be served: a channel queue when
// its channel's setup failed (down) or its check did (bad); the queue of
// every channel when any channel's setup failed or its check did. Queues
// that can be served are absent.
func QueueCauses(queues []redrive.Queue, down map[notification.Channel]error, bad map[redrive.Queue]error) map[redrive.Queue]error {
	out := map[redrive.Queue]error{}
	for _, q := range queues {
		var errs []error
		for _, c := range notification.Channels {
			if down[c] != nil && (q.Channel == "" || q.Channel == c) {
				errs = append(errs, down[c])
			}
		}
		if bad[q] != nil {
			errs = append(errs, bad[q])
		}
		if len(errs) > 0 {
			out[q] = errors.Join(errs...)
		}
	}
	return out
}
