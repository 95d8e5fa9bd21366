// Command feedback is herald's SES event Lambda: an EventBridge rule invokes
// it with the email sending events (delivery, bounce, complaint, …) SES
// publishes for herald's configuration set, and it writes one JSON log line
// with metrics per event, naming the notification (package feedback).
// Configuration: docs/configuration.md.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/feedback"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "herald feedback: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.LoadFeedback(os.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	h, err := feedback.New(feedback.Config{Logger: app.Logger(cfg.LogLevel)})
	if err != nil {
		return err
	}
	lambda.Start(h.HandleRaw)
	return nil
}
