package app

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/processor"
)

// CheckQueues compares the deliver function's queues with cfg when
// cfg.CheckQueues is set (processor.CheckQueues: two GetQueueAttributes
// calls). functionTimeout is the function's timeout, or zero where it is not
// known (in Lambda, before the first invocation) to skip that check.
func CheckQueues(ctx context.Context, cfg config.Deliver, awsCfg aws.Config, functionTimeout time.Duration) error {
	if !cfg.CheckQueues {
		return nil
	}
	return processor.CheckQueues(ctx, sqs.NewFromConfig(awsCfg), processor.QueueSettings{
		QueueURL:           cfg.QueueURL,
		DeadLetterQueueURL: cfg.DeadLetterQueueURL,
		MaxReceiveCount:    cfg.MaxReceiveCount,
		Backoff:            cfg.Backoff(),
		FunctionTimeout:    functionTimeout,
		BatchingWindow:     cfg.BatchingWindow,
		Names: processor.SettingNames{
			DeadLetterQueueURL: config.EnvDeadLetterQueueURL,
			MaxReceiveCount:    config.EnvMaxReceiveCount,
			BackoffBase:        config.EnvBackoffBase,
			BackoffCap:         config.EnvBackoffCap,
			BatchingWindow:     config.EnvBatchingWindow,
		},
	})
}
