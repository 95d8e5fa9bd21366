package pause

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/redrive"
)

// Gate is the deliver function's handler when it has several queues: it
// hands each batch to Deliver, unless the batch's queue cannot be served —
// its channel's setup failed, or the queue's own check did — and then to
// Paused with that cause, which pauses that queue's mapping alone. A batch
// comes from one event source mapping, so from one queue: its records'
// eventSourceARN names it (redrive.FindQueue).
type Gate struct {
	// Deliver handles the batches of the queues that can be served: the
	// processor's Handle. Required.
	Deliver func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)
	// Queues are the function's queues.
	Queues []redrive.Queue
	// Causes holds why each queue that cannot be served cannot; a queue
	// absent (or nil) is served.
	Causes map[redrive.Queue]error
	// Paused is the pause of a queue that cannot be served; Gate sets its
	// Cause and Channel per batch. Its API and FunctionName are required
	// when Causes has an error.
	Paused Handler
}

// Handle hands ev to Deliver or to a pause (see Gate).
func (g *Gate) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	if h := g.pauseOf(ev); h != nil {
		return h.Handle(ctx, ev)
	}
	return g.Deliver(ctx, ev)
}

func (g *Gate) pauseOf(ev events.SQSEvent) *Handler {
	if len(ev.Records) == 0 || len(g.Causes) == 0 {
		return nil
	}
	q, ok := redrive.FindQueue(g.Queues, ev.Records[0].EventSourceARN)
	if !ok || g.Causes[q] == nil {
		return nil
	}
	h := g.Paused
	h.Cause, h.Channel = g.Causes[q], q.Channel
	return &h
}

// initPauseTime bounds PauseAtStart, which runs in the function's Init
// phase: Lambda limits that phase to 10 s and, past it, starts the function
// again within its first invocation (AWS Lambda Developer Guide,
// "Understanding the Lambda execution environment lifecycle", Init phase).
// A mapping busy for longer (Updating during a stack update) is left to its
// queue's first batch, which waits it out within the invocation.
const initPauseTime = 8 * time.Second

// PauseAtStart pauses, before any batch, the mapping of every queue that
// cannot be served (Handler.PauseQueue), so that their messages keep their
// receive counts, within 8 s in all (initPauseTime: the update waits end 2 s
// before, [Pause]). It returns the errors, one per queue; a queue it could
// not pause is paused by its first batch.
func (g *Gate) PauseAtStart(ctx context.Context) []error {
	ctx, cancel := context.WithTimeout(ctx, initPauseTime)
	defer cancel()
	var errs []error
	for _, q := range g.Queues {
		cause := g.Causes[q]
		if cause == nil {
			continue
		}
		h := g.Paused
		h.Cause, h.Channel = cause, q.Channel
		if err := h.PauseQueue(ctx, q.URL); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// QueuePauser pauses one channel queue's mapping at the processor's request
// (it is a processor.Pauser: functions/deliver passes it as
// app.DeliverOptions.Pauser, which the compiler checks, so that this
// package need not import the processor): a channel whose transport refuses every send, such as
// SES with the account's sending paused. Its Handler gives the API, the
// function name, the logger and the clock; the cause and channel are the
// request's. The ERROR line and the Paused metric are those of a setup
// failure of that channel.
type QueuePauser struct {
	Handler Handler
}

// PauseQueue pauses the mappings from sourceARN, the batch's queue (q's).
func (p QueuePauser) PauseQueue(ctx context.Context, q redrive.Queue, sourceARN string, cause error) error {
	h := p.Handler
	h.Cause, h.Channel = cause, q.Channel
	logger, now := h.Logger, h.Now
	if logger == nil {
		logger = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	mappings, err := Pause(ctx, h.API, h.FunctionName, sourceARN)
	if err != nil {
		return err
	}
	h.paused(ctx, logger, now, mappings, 0)
	return nil
}
