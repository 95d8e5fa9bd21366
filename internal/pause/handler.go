package pause

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/processor"
)

// Handler is the deliver function's handler when its setup failed and it
// can deliver nothing: each invocation pauses the function's mapping from
// the batch's queue, logs one ERROR with the cause and the resume command
// and the Paused metric (EMF, dimension function), and hands every record
// back as a batch item failure, untouched: it comes back after the queue's
// visibility timeout, once delivery is resumed.
//
// When the pause fails (no permission, no mapping), Handle returns an
// error as well: Lambda counts a function error (the errors alarm) and the
// batch comes back as before, one receive spent per visibility timeout.
type Handler struct {
	// API calls Lambda. Required.
	API MappingAPI
	// FunctionName is the function's own name (AWS_LAMBDA_FUNCTION_NAME).
	// Required.
	FunctionName string
	// Cause is the setup error. Its text names the bad setting; it must
	// not hold a secret. Required.
	Cause error
	// Logger receives the ERROR line. Defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock of the metric's timestamp. Defaults to time.Now.
	Now func() time.Time
}

// maxCauseText bounds the cause in the log line.
const maxCauseText = 1024

// Handle pauses and hands ev back (see Handler).
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	logger, now := h.Logger, h.Now
	if logger == nil {
		logger = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	var resp events.SQSEventResponse
	source := ""
	for _, r := range ev.Records {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		source = r.EventSourceARN
	}
	cause := delivery.Truncate(h.Cause.Error(), maxCauseText)
	mappings, err := Pause(ctx, h.API, h.FunctionName, source)
	if err != nil {
		logger.LogAttrs(ctx, slog.LevelError, "cannot deliver and could not pause the event source mapping: the batch is returned and will be received again",
			slog.String("error", cause),
			slog.String("pause_error", delivery.Truncate(err.Error(), maxCauseText)),
			slog.Int("records", len(ev.Records)))
		return resp, fmt.Errorf("cannot deliver (%s) and could not pause: %w", cause, err)
	}
	uuids := make([]string, 0, len(mappings))
	commands := make([]string, 0, len(mappings))
	for _, m := range mappings {
		uuids = append(uuids, m.UUID)
		commands = append(commands, ResumeCommand(m.UUID))
	}
	emf := metrics.Entry{
		Time:       now(),
		Dimensions: []metrics.Dimension{{Name: metrics.DimFunction, Value: processor.FunctionName}},
		Metrics:    []metrics.Metric{{Name: metrics.Paused, Unit: metrics.Count, Value: 1}},
	}
	logger.LogAttrs(ctx, slog.LevelError, "paused: cannot deliver, event source mapping disabled; fix the setting, then resume",
		append([]slog.Attr{
			slog.String("error", cause),
			slog.String("event_source_mappings", strings.Join(uuids, ",")),
			slog.String("resume", strings.Join(commands, " && ")),
			slog.Int("records", len(ev.Records)),
		}, emf.Attrs()...)...)
	return resp, nil
}

// Validate reports a missing required field.
func (h *Handler) Validate() error {
	switch {
	case h.API == nil:
		return errors.New("pause: nil API")
	case h.FunctionName == "":
		return errors.New("pause: FunctionName is required (AWS_LAMBDA_FUNCTION_NAME)")
	case h.Cause == nil:
		return errors.New("pause: Cause is required")
	}
	return nil
}
