// Command retention is herald's scheduled retention Lambda: it deletes dead
// letters older than HERALD_DLQ_MAX_AGE_HOURS and keeps the younger ones.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/retention"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "herald retention: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.LoadRetention(os.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	awsCfg, err := app.AWSConfig(context.Background())
	if err != nil {
		return err
	}
	sweepers, err := app.NewRetention(cfg, awsCfg, nil)
	if err != nil {
		return err
	}
	// The EventBridge schedule's event carries nothing the sweep needs.
	// Each dead-letter queue (one per channel) is swept in turn.
	lambda.Start(func(ctx context.Context, _ json.RawMessage) (retention.Summary, error) {
		return retention.SweepAll(ctx, sweepers)
	})
	return nil
}
