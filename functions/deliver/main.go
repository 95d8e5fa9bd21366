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
	// A setup error would fail every cold start, and each failed
	// invocation spends one receive of every message in the batch until the
	// redrive policy dead-letters the backlog without a reason. Instead the
	// function starts degraded: it pauses the event source mapping of each
	// queue it cannot serve and hands those batches back (package pause),
	// and delivers the others.
	paused := pause.Handler{
		API:          awslambda.NewFromConfig(awsCfg),
		FunctionName: os.Getenv("AWS_LAMBDA_FUNCTION_NAME"),
		// ERROR lines pass every HERALD_LOG_LEVEL, which may itself be
		// the bad setting.
		Logger: app.Logger(slog.LevelError),
	}
	gate, err := run(ctx, awsCfg, paused)
	if err != nil {
		// Nothing can be delivered (the configuration itself is bad).
		degraded := paused
		degraded.Cause = err
		if verr := degraded.Validate(); verr != nil {
			fmt.Fprintln(os.Stderr, "herald deliver: "+err.Error()+"; "+verr.Error())
			os.Exit(1)
		}
		lambda.Start(degraded.Handle)
		return
	}
	if len(gate.Causes) > 0 {
		if paused.FunctionName == "" {
			fmt.Fprintln(os.Stderr, "herald deliver: cannot pause the queues it cannot serve: AWS_LAMBDA_FUNCTION_NAME is not set")
			os.Exit(1)
		}
		// Pause before the first batch, so that not even one receive of
		// those queues is spent; a queue not paused here is paused by its
		// first batch.
		for _, err := range gate.PauseAtStart(ctx) {
			fmt.Fprintln(os.Stderr, "herald deliver: pause at start: "+err.Error())
		}
	}
	lambda.Start(gate.Handle)
}

// run builds the deliver function's handler: the processor for the queues
// whose channels start, behind a gate that pauses the others. It returns
// the setup error that stops every channel: invalid configuration.
// A channel's own setup error (its sender, an unreadable or malformed
// signing secret) and a queue that disagrees with the settings stop only
// the queues concerned.
func run(ctx context.Context, awsCfg aws.Config, paused pause.Handler) (*pause.Gate, error) {
	cfg, err := config.LoadDeliver(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	// Reads the signing secret from Secrets Manager, once, when
	// HERALD_WEBHOOK_SECRET_ARN is set.
	// SES answering that the account's sending is paused pauses the email
	// queue alone, as a setup failure of the channel would.
	p, down, err := app.NewDeliverChannels(ctx, cfg, awsCfg, app.DeliverOptions{Pauser: pause.QueuePauser{Handler: paused}})
	if err != nil {
		return nil, err
	}
	// A queue that disagrees with the settings (redrive maxReceiveCount,
	// retention, FIFO, visibility timeout, message sizes) is not served
	// (HERALD_CHECK_QUEUES). Lambda does not tell a function its timeout
	// before an invocation: the template passes it in
	// HERALD_FUNCTION_TIMEOUT_SECONDS.
	bad := app.CheckEachQueue(ctx, cfg, awsCfg, cfg.FunctionTimeout)
	return &pause.Gate{
		Deliver: p.Handle,
		Queues:  cfg.AllQueues(),
		Causes:  app.QueueCauses(cfg.AllQueues(), down, bad),
		Paused:  paused,
	}, nil
}
