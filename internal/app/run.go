package app

import (
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

// Run is a function's main: it builds the handler with start (the cold
// start: settings, SDK clients) and serves the invocations with it
// (lambda.Start, which does not return). When start fails, Run writes
// "herald FUNCTION: ERR" (function such as "deliver") as one line to
// standard error, which Lambda sends to the function's log, and exits with
// status 1, which Lambda reports as the initialization error
// Runtime.ExitError: the function does not start.
func Run(function string, start func() (any, error)) {
	handler, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "herald "+function+": "+err.Error())
		os.Exit(1)
	}
	lambda.Start(handler)
}
