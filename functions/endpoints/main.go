// Command endpoints is herald's endpoints API Lambda: API Gateway REST API
// proxy requests (AWS_IAM authorization on every method) answered by
// internal/endpointapi over the endpoint store and the event queue.
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
	app.Run("endpoints", func() (any, error) { return start(context.Background(), os.Getenv, os.Stdout) })
}

// handler answers one proxy request; it never returns an error (a failure
// is a 500 answer with code "internal").
type handler = func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// start is the function's cold start, from the environment (HERALD_*
// settings, the SDK's AWS_* chain): it returns the configuration's error or
// the AWS configuration's.
func start(ctx context.Context, getenv func(string) string, stdout io.Writer) (handler, error) {
	cfg, err := config.LoadEndpointsAPI(getenv)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	h, err := app.NewEndpointsAPI(cfg, awsCfg, app.LoggerTo(stdout, cfg.LogLevel))
	if err != nil {
		return nil, err
	}
	return h.Handle, nil
}
