// Command feedback is herald's SES event Lambda: an EventBridge rule invokes
// it with the email sending events (delivery, bounce, complaint, …) SES
// publishes for herald's configuration set, and it writes one JSON log line
// with metrics per event, naming the notification (package feedback).
// Configuration: docs/configuration.md.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/feedback"
)

func main() {
	app.Run("feedback", func() (any, error) { return start(os.Stdout) })
}

// start is the function's cold start: it reads the settings from the
// process's environment (HERALD_LOG_LEVEL) and returns the handler of one
// EventBridge event (feedback.Handler.HandleRaw), its JSON lines going to
// stdout. It returns the configuration's error.
func start(stdout io.Writer) (func(ctx context.Context, raw json.RawMessage) error, error) {
	cfg, err := config.LoadFeedback(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	h, err := feedback.New(feedback.Config{Logger: app.LoggerTo(stdout, cfg.LogLevel)})
	if err != nil {
		return nil, err
	}
	return h.HandleRaw, nil
}
