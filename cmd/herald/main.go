// Command herald is herald's command line for producers, operators and
// local development: send notifications, run the deliver function locally
// against a queue, list, read and redrive dead letters, make and check
// webhook signing secrets and derive a receiver's, resume a paused deliver
// function, list the SES events of a notification's email, and receive,
// verify and print webhooks on this machine (listen).
//
//	go install github.com/heraldhq/herald/cmd/herald@latest
//	herald --help
//
// Exit status: 0 when everything succeeded, 1 when something failed (an
// invalid notification, a message not sent, a dead letter not redriven), 2
// for a usage error (unknown command or flag, missing argument).
//
// AWS access goes through the SDK's default configuration chain, as the
// functions do; queue URLs come from --queue-url / --dlq-url, else from
// --stack NAME (the CloudFormation stack's outputs), else from
// HERALD_QUEUE_URL / HERALD_DLQ_URL. See docs/operations.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal, the next one ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	os.Exit(execute(ctx, defaultEnv(), os.Args[1:]))
}
