// Command deliver is herald's delivery Lambda: it receives SQS batches from
// the event source mapping and delivers each notification by SES v2,
// webhook or chat, reporting partial batch failures. Configuration:
// docs/configuration.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/internal/tracing"
)

func main() {
	app.Run("deliver", func() (any, error) { return start(context.Background(), os.Stdout, os.Stderr) })
}

// handler answers one SQS batch with its partial batch response.
type handler = func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// start is the function's cold start, from the process's environment
// (HERALD_* settings, AWS_LAMBDA_FUNCTION_NAME, the SDK's AWS_* chain): it
// builds the SDK clients and the handler, JSON log lines going to stdout.
//
// A setup error would fail every cold start, and each failed invocation
// spends one receive of every message in the batch until the redrive
// policy dead-letters the backlog without a reason. Instead the function
// starts degraded (package pause): with a configuration it cannot use,
// every batch pauses its queue's event source mapping and is handed back;
// a queue it cannot serve (its channel's setup failed, or the queue
// disagrees with the settings) is paused here, before the first batch, and
// the others are delivered. A pause that fails here is written to stderr
// ("herald deliver: pause at start: …"); that queue's first batch pauses it.
//
// start returns an error, and the function must not start, only when it
// could not even pause: no AWS configuration, or no function name
// (AWS_LAMBDA_FUNCTION_NAME) when something needs pausing.
func start(ctx context.Context, stdout, stderr io.Writer) (handler, error) {
	// GOMAXPROCS from the function's memory size (one per 1,769 MB).
	app.TuneRuntime(os.Getenv)
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		// Without an AWS configuration nothing can be called, not even
		// Lambda to pause.
		return nil, err
	}
	paused := pause.Handler{
		API:          awslambda.NewFromConfig(awsCfg),
		FunctionName: os.Getenv("AWS_LAMBDA_FUNCTION_NAME"),
		// ERROR lines pass every HERALD_LOG_LEVEL, which may itself be
		// the bad setting.
		Logger: app.LoggerTo(stdout, slog.LevelError),
	}
	// Tracing (HERALD_TRACING) is not worth a delivery: a setting it cannot
	// use turns it off, said once on stderr.
	traces, err := startTracing(ctx, awsCfg)
	if err != nil {
		fmt.Fprintln(stderr, "herald deliver: tracing off: "+err.Error())
	}
	gate, err := run(ctx, awsCfg, paused, stdout, traces)
	if err != nil {
		// Nothing can be delivered (the configuration itself is bad).
		degraded := paused
		degraded.Cause = err
		if verr := degraded.Validate(); verr != nil {
			return nil, fmt.Errorf("%w; %w", err, verr)
		}
		return degraded.Handle, nil
	}
	if len(gate.Causes) > 0 {
		if paused.FunctionName == "" {
			return nil, errors.New("cannot pause the queues it cannot serve: AWS_LAMBDA_FUNCTION_NAME is not set")
		}
		// Pause before the first batch, so that not even one receive of
		// those queues is spent; a queue not paused here is paused by its
		// first batch.
		for _, err := range gate.PauseAtStart(ctx) {
			fmt.Fprintln(stderr, "herald deliver: pause at start: "+err.Error())
		}
	}
	return traces.Handler(gate.Handle, paused.Logger), nil
}

// startTracing builds the function's tracing from HERALD_TRACING and its
// variables: nil when off (docs/configuration.md, "Tracing").
func startTracing(ctx context.Context, awsCfg aws.Config) (*tracing.Tracing, error) {
	cfg, err := tracing.LoadConfig(os.Getenv)
	if err != nil {
		return nil, err
	}
	if name := os.Getenv("AWS_LAMBDA_FUNCTION_NAME"); name != "" {
		cfg.ServiceName = name
	}
	return tracing.New(ctx, cfg, tracing.Options{Credentials: awsCfg.Credentials, Region: awsCfg.Region})
}

// run builds the deliver function's handler: the processor for the queues
// whose channels start, behind a gate that pauses the others. It returns
// the setup error that stops every channel: invalid configuration.
// A channel's own setup error (its sender, an unreadable or malformed
// signing secret) and a queue that disagrees with the settings stop only
// the queues concerned.
func run(ctx context.Context, awsCfg aws.Config, paused pause.Handler, stdout io.Writer, traces *tracing.Tracing) (*pause.Gate, error) {
	cfg, err := config.LoadDeliver(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	// Reads the signing secret from Secrets Manager, once, when
	// HERALD_WEBHOOK_SECRET_ARN is set.
	// SES answering that the account's sending is paused pauses the email
	// queue alone, as a setup failure of the channel would.
	p, down, err := app.NewDeliverChannels(ctx, cfg, awsCfg, app.DeliverOptions{
		Pauser:  pause.QueuePauser{Handler: paused},
		Logger:  app.LoggerTo(stdout, cfg.LogLevel),
		Tracing: traces,
	})
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
