// Command deliver is herald's delivery Lambda: it receives SQS batches from
// the event source mapping and delivers each notification by SES v2 or
// webhook, reporting partial batch failures. Configuration: docs/configuration.md.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
)

func main() {
	if err := run(); err != nil {
		// A setup error fails the cold start, so the bad setting shows in the
		// function's logs and no message is consumed.
		fmt.Fprintln(os.Stderr, "herald deliver: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	// GOMAXPROCS from the function's memory size (one per 1,769 MB).
	app.TuneRuntime(os.Getenv)
	cfg, err := config.LoadDeliver(os.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	ctx := context.Background()
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	// Reads the signing secret from Secrets Manager, once, when
	// HERALD_WEBHOOK_SECRET_ARN is set.
	p, err := app.NewDeliverContext(ctx, cfg, awsCfg, app.DeliverOptions{})
	if err != nil {
		return err
	}
	// A queue that disagrees with the settings (redrive maxReceiveCount,
	// retention, FIFO) fails the cold start (HERALD_CHECK_QUEUES). Lambda
	// does not tell a function its timeout before an invocation, so the
	// 6 × timeout visibility rule is left to the template's mapping.
	if err := app.CheckQueues(ctx, cfg, awsCfg, 0); err != nil {
		return err
	}
	lambda.Start(p.Handle)
	return nil
}
