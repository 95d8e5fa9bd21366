// Command retention is herald's scheduled retention Lambda: it deletes dead
// letters older than HERALD_DLQ_MAX_AGE_HOURS and keeps the younger ones.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/retention"
)

func main() {
	app.Run("retention", func() (any, error) { return start(context.Background(), os.Stdout) })
}

// handler sweeps every dead-letter queue once per invocation. The
// EventBridge schedule's event carries nothing the sweep needs.
type handler = func(ctx context.Context, event json.RawMessage) (retention.Summary, error)

// start is the function's cold start, from the process's environment
// (HERALD_* settings, the SDK's AWS_* chain): it builds the SQS client and
// one sweeper per dead-letter queue (one per channel), swept in turn by
// each invocation, their JSON lines going to stdout. It returns the
// configuration's error or the AWS configuration's.
func start(ctx context.Context, stdout io.Writer) (handler, error) {
	cfg, err := config.LoadRetention(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	sweepers, err := app.NewRetention(cfg, awsCfg, app.LoggerTo(stdout, cfg.LogLevel))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, _ json.RawMessage) (retention.Summary, error) {
		return retention.SweepAll(ctx, sweepers)
	}, nil
}
