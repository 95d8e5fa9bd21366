// Command noop is the floor of the bench's cold start: a Go Lambda that
// answers every SQS batch with an empty partial batch response and does
// nothing else, built and run under the emulator like herald's bootstrap.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(handle)
}

// handle answers ev with no batch item failure: every record succeeded.
func handle(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return events.SQSEventResponse{}, nil
}
