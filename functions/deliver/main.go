// Command deliver is herald's delivery Lambda: it receives SQS batches from
// the event source mapping and delivers each notification by SES v2 or
// webhook, reporting partial batch failures. Configuration: docs/configuration.md.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/pause"
)

func main() {
	// GOMAXPROCS from the function's memory size (one per 1,769 MB).
	app.TuneRuntime(os.Getenv)
	ctx := context.Background()
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		// Without an AWS configuration nothing can be called, not even
		// Lambda to pause: fail the cold start.
		fmt.Fprintln(os.Stderr, "herald deliver: "+err.Error())
		os.Exit(1)
	}
	handler, err := run(ctx, awsCfg)
	if err != nil {
		// A setup error would fail every cold start, and each failed
		// invocation spends one receive of every message in the batch until
		// the redrive policy dead-letters the backlog without a reason.
		// Instead start degraded: pause this function's event source
		// mapping and hand the batches back (package pause).
		degraded := &pause.Handler{
			API:          awslambda.NewFromConfig(awsCfg),
			FunctionName: os.Getenv("AWS_LAMBDA_FUNCTION_NAME"),
			Cause:        err,
			// ERROR lines pass every HERALD_LOG_LEVEL, which may itself be
			// the bad setting.
			Logger: app.Logger(slog.LevelError),
		}
		if verr := degraded.Validate(); verr != nil {
			fmt.Fprintln(os.Stderr, "herald deliver: "+err.Error()+"; "+verr.Error())
			os.Exit(1)
		}
		lambda.Start(degraded.Handle)
		return
	}
	lambda.Start(handler)
}

// run builds the deliver function's handler, or returns the setup error:
// invalid configuration, an unreadable or malformed signing secret, or
// queues that disagree with the settings.
func run(ctx context.Context, awsCfg aws.Config) (any, error) {
	cfg, err := config.LoadDeliver(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	// Reads the signing secret from Secrets Manager, once, when
	// HERALD_WEBHOOK_SECRET_ARN is set.
	p, err := app.NewDeliverContext(ctx, cfg, awsCfg, app.DeliverOptions{})
	if err != nil {
		return nil, err
	}
	// A queue that disagrees with the settings (redrive maxReceiveCount,
	// retention, FIFO, visibility timeout, message sizes) fails the cold
	// start (HERALD_CHECK_QUEUES). Lambda does not tell a function its
	// timeout before an invocation: the template passes it in
	// HERALD_FUNCTION_TIMEOUT_SECONDS.
	if err := app.CheckQueues(ctx, cfg, awsCfg, cfg.FunctionTimeout); err != nil {
		return nil, err
	}
	return p.Handle, nil
}
