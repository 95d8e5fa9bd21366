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
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
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
	// Channel is the channel whose setup failed, when the batch's queue is
	// that channel's (the ERROR line's channel member and the Paused
	// metric's channel dimension); "" when nothing can be delivered.
	Channel notification.Channel
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
	mappings, err := Pause(ctx, h.API, h.FunctionName, source)
	if err != nil {
		return resp, h.failed(ctx, logger, err, len(ev.Records))
	}
	h.paused(ctx, logger, now, mappings, len(ev.Records))
	return resp, nil
}

// PauseQueue pauses the function's mappings from the queue queueURL before
// any batch comes (the deliver function calls it at cold start for each
// queue whose channel could not start, so that not even one receive is
// spent), and logs the same ERROR line as Handle. It returns the Lambda
// API's error, or ErrNoMapping when the function has no mapping from that
// queue; then the first batch pauses it.
func (h *Handler) PauseQueue(ctx context.Context, queueURL string) error {
	logger, now := h.Logger, h.Now
	if logger == nil {
		logger = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	all, err := List(ctx, h.API, h.FunctionName, "")
	if err != nil {
		return h.failed(ctx, logger, err, 0)
	}
	var mappings []Mapping
	for _, m := range all {
		if redrive.QueueKey(m.EventSourceARN) != redrive.QueueKey(queueURL) {
			continue
		}
		got, err := Pause(ctx, h.API, h.FunctionName, m.EventSourceARN)
		if err != nil {
			return h.failed(ctx, logger, err, 0)
		}
		mappings = append(mappings, got...)
	}
	if len(mappings) == 0 {
		return fmt.Errorf("%w for function %s from queue %s", ErrNoMapping, h.FunctionName, queueURL)
	}
	h.paused(ctx, logger, now, mappings, 0)
	return nil
}

func (h *Handler) failed(ctx context.Context, logger *slog.Logger, err error, records int) error {
	cause := delivery.Truncate(h.Cause.Error(), maxCauseText)
	logger.LogAttrs(ctx, slog.LevelError, "cannot deliver and could not pause the event source mapping: the batch is returned and will be received again",
		slog.String("error", cause),
		slog.String(metrics.DimChannel, string(h.Channel)),
		slog.String("pause_error", delivery.Truncate(err.Error(), maxCauseText)),
		slog.Int("records", records))
	return fmt.Errorf("cannot deliver (%s) and could not pause: %w", cause, err)
}

// paused logs the ERROR line of a pause, with the Paused metric by
// function, and by function and channel when the pause is one channel's.
func (h *Handler) paused(ctx context.Context, logger *slog.Logger, now func() time.Time, mappings []Mapping, records int) {
	uuids := make([]string, 0, len(mappings))
	commands := make([]string, 0, len(mappings))
	for _, m := range mappings {
		uuids = append(uuids, m.UUID)
		commands = append(commands, ResumeCommand(m.UUID))
	}
	emf := metrics.PausedEntry(now(), string(h.Channel), true)
	msg := "paused: cannot deliver, event source mapping disabled; fix the setting, then resume"
	if h.Channel != "" {
		msg = "paused channel " + string(h.Channel) + ": cannot deliver it, its event source mapping disabled (other channels deliver); fix the setting, then resume"
	}
	logger.LogAttrs(ctx, slog.LevelError, msg,
		append([]slog.Attr{
			slog.String("error", delivery.Truncate(h.Cause.Error(), maxCauseText)),
			slog.String("event_source_mappings", strings.Join(uuids, ",")),
			slog.String("resume", strings.Join(commands, " && ")),
			slog.Int("records", records),
		}, emf.Attrs()...)...)
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
