// Command fanout is herald's fan-out Lambda: it receives SQS batches of the
// event queue and puts one delivery per subscribed endpoint of each event's
// tenant on the webhook and chat queues (package fanout), reporting partial
// batch failures. Configuration: docs/configuration.md; the rule:
// docs/endpoints.md, "Events and fan-out".
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
)

func main() {
	app.Run("fanout", func() (any, error) { return start(context.Background(), os.Getenv, os.Stdout) })
}

// handler answers one SQS batch with its partial batch response.
type handler = func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// start is the function's cold start, from getenv (HERALD_* settings, the
// SDK's AWS_* chain): it builds the SDK clients and the handler, JSON log
// lines going to stdout. It returns the configuration's error or the AWS
// configuration's; the function does not start then, and the event
// source mapping's retries of the batch end in the event dead-letter queue
// by its redrive policy.
func start(ctx context.Context, getenv func(string) string, stdout io.Writer) (handler, error) {
	app.TuneRuntime(getenv)
	cfg, err := config.LoadFanout(getenv)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	p, err := app.NewFanout(cfg, awsCfg, app.LoggerTo(stdout, cfg.LogLevel))
	if err != nil {
		return nil, err
	}
	return p.Handle, nil
}
