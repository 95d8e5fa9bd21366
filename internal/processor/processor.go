package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/sqsbatch"
	"github.com/heraldhq/herald/notification"
)

// QueueAPI is the part of the SQS API the processor calls: visibility changes
// on the main queue and sends to the dead-letter queue.
type QueueAPI interface {
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var _ QueueAPI = (*sqs.Client)(nil)

// Config configures a Processor.
type Config struct {
	// QueueURL is the URL of a queue of every channel the records come
	// from (a [Queue] without Channel), and DeadLetterQueueURL its
	// dead-letter queue's. Optional when Queues names the queues.
	QueueURL           string
	DeadLetterQueueURL string
	// Queues are the channels' queues the records come from, besides
	// QueueURL. Each record's queue is found by its eventSourceARN
	// ([FindQueue]); its retries and dead letters go to that queue's.
	Queues []redrive.Queue
	// MaxReceiveCount is the redrive policy's maxReceiveCount: a transient
	// failure on this receive is dead-lettered by herald itself. Required, ≥ 1.
	MaxReceiveCount int
	// Backoff is the retry schedule. Zero fields take backoff's defaults.
	Backoff backoff.Policy
	// Concurrency is how many records of a batch are delivered at once.
	// Defaults to [sqsbatch.DefaultConcurrency].
	Concurrency int
	// Reserve is the part of the invocation's remaining time kept for the
	// visibility changes and dead-letter moves after the deliveries: no
	// delivery starts, and none runs, past the deadline minus Reserve.
	// Defaults to 2 s.
	Reserve time.Duration
	// Senders deliver each channel. A channel without a sender is a
	// permanent failure.
	Senders map[notification.Channel]Sender
	// Pauser, when set, pauses a channel queue's event source mapping when a
	// delivery from it fails with an error that every delivery of the
	// channel meets (delivery.PausesChannel: SES sending paused). The
	// records keep their outcome (retried after their delay); the pause
	// spares the rest of the queue's receives. Not used for a queue of every
	// channel, whose pause would stop the other channels too. A processor
	// with a Pauser reports Paused 0 (metrics.PausedEntry) on its batches
	// when due; one without writes no Paused metric, which is the deliver
	// function's alarm's.
	Pauser Pauser
	// Middleware wrap every channel's sender, the first outermost: each
	// is given the next (the last the channel's own sender) and returns
	// the sender the processor calls, whose outcome it settles (package
	// delivery's errors). A Middleware with StartBatch is told of
	// each batch. The deliver function's are the circuit (package
	// circuit) and delivered-once (package once), in that order. Defaults
	// to none: each channel's sender is called as it is.
	Middleware []Middleware
	// Tracer, when set, traces each attempted record (package tracing).
	// Defaults to nil: nothing is traced.
	Tracer Tracer
	// Logger receives one line per record. Defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

// Pauser pauses the event source mapping of the queue q (a channel's),
// found by the batch's eventSourceARN sourceARN, because of cause. The
// deliver function's is package pause's QueuePauser.
type Pauser interface {
	PauseQueue(ctx context.Context, q redrive.Queue, sourceARN string, cause error) error
}

// Processor handles SQS batches. It is safe for concurrent use.
type Processor struct {
	q      QueueAPI
	cfg    Config
	queues []redrive.Queue
	// senders are cfg.Senders, each wrapped in cfg.Middleware.
	senders map[notification.Channel]Sender
	// starts are the middlewares' StartBatch, in their order.
	starts []func(context.Context) (context.Context, func(context.Context))
	quiet  quietQueues // when each queue last had a batch here, for Paused 0
}

// New returns a Processor that calls q for visibility changes and
// dead-letter moves. It returns an error naming the first missing or
// out-of-range field of cfg.
func New(q QueueAPI, cfg Config) (*Processor, error) {
	switch {
	case q == nil:
		return nil, errors.New("processor: nil QueueAPI")
	case cfg.QueueURL == "" && len(cfg.Queues) == 0:
		return nil, errors.New("processor: QueueURL is required")
	case cfg.QueueURL != "" && cfg.DeadLetterQueueURL == "":
		return nil, errors.New("processor: DeadLetterQueueURL is required")
	case cfg.MaxReceiveCount < 1:
		return nil, fmt.Errorf("processor: MaxReceiveCount %d: must be at least 1", cfg.MaxReceiveCount)
	}
	queues := slices.Clone(cfg.Queues)
	if cfg.QueueURL != "" {
		queues = append(queues, redrive.Queue{URL: cfg.QueueURL, DeadLetterURL: cfg.DeadLetterQueueURL})
	}
	if err := checkQueues(queues); err != nil {
		return nil, err
	}
	cfg.Backoff = cfg.Backoff.WithDefaults()
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = sqsbatch.DefaultConcurrency
	}
	if cfg.Reserve <= 0 {
		cfg.Reserve = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Processor{q: q, cfg: cfg, queues: queues, senders: make(map[notification.Channel]Sender, len(cfg.Senders))}
	for i, m := range cfg.Middleware {
		if m.Wrap == nil {
			return nil, fmt.Errorf("processor: Middleware[%d] has no Wrap", i)
		}
		if m.StartBatch != nil {
			p.starts = append(p.starts, m.StartBatch)
		}
	}
	for c, s := range cfg.Senders {
		s = timed(s, cfg.Now)
		for i := len(cfg.Middleware) - 1; i >= 0; i-- {
			s = cfg.Middleware[i].Wrap(s)
		}
		p.senders[c] = s
	}
	return p, nil
}

// Outcome is how a record's invocation ended.
type Outcome string

// The outcomes of a record.
const (
	Delivered    Outcome = "delivered"
	Dropped      Outcome = "dropped"
	Retry        Outcome = "retry"
	DeadLettered Outcome = "dead_lettered"
	// Failed is a record that could be neither retried on schedule nor
	// dead-lettered (an SQS call failed): it is reported failed and comes
	// back after the queue's visibility timeout.
	Failed Outcome = "failed"
	// Skipped is a FIFO record not attempted because an earlier record of
	// its group in the batch was retried or failed. It is reported failed
	// and comes back with that record.
	Skipped Outcome = "skipped"
	// Duplicate is a record carrying the notification id of an earlier
	// record of the same batch (a producer's retry landing in the same
	// batch): not attempted, acknowledged, logged with duplicate_of, the
	// earlier record's SQS message id. The earlier record's outcome is the
	// notification's. Also a record whose send returned a
	// *delivery.DeliveredError (a middleware, delivered-once, found it
	// delivered before): not sent, acknowledged, logged with delivered_at.
	Duplicate Outcome = "duplicate"
	// Moved is a record on another channel's queue whose own channel has
	// a queue but no sender here (its setup failed): not attempted, sent
	// to its channel's queue, where it waits for that channel, and
	// acknowledged. A misrouted record whose channel has a sender is
	// delivered where it is.
	Moved Outcome = "moved"
)

// record is one SQS record's way through an invocation.
type record struct {
	msg          *events.SQSMessage
	queue        redrive.Queue // the queue it came from
	queueFound   bool
	movedTo      string                // the queue URL a Moved record was sent to
	n            *notification.Message // nil when the body is invalid
	id           string                // n's id, or an invalid body's when it has one
	receiveCount int
	outcome      Outcome
	err          error
	class        delivery.Class
	delay        time.Duration
	sqsErr       error // a failed visibility change or dead-letter move
	// follows is the retried record of the same FIFO group whose visibility
	// delay a Skipped record shares.
	follows *record
	// sendTime is how long the sender took; zero when no send was attempted.
	sendTime time.Duration
	// settledAt is when the record's outcome was decided.
	settledAt time.Time
	// deliveredAt is when the store says a Duplicate was delivered
	// (delivery.DeliveredError).
	deliveredAt time.Time
	// attempt is what the middlewares noted of the record's send; nil
	// when no send was attempted. storeErr and disabledOrigin are its
	// notes, read once the batch's hooks ended.
	attempt *delivery.Attempt
	// storeErr is a failed call to a store (delivered-once, destination
	// health) for the record.
	storeErr error
	// disabledOrigin: this record's failure disabled its destination (the
	// write that made the transition was this record's).
	disabledOrigin bool
	// Set before any delivery (prepare).
	parseErr error // why the body is invalid, when n is nil
	size     int   // body and message attributes, as SQS counts them
	blankID  bool  // the record has no SQS message id
	// unfit is set when the record's dead letter exceeds the dead-letter
	// queue's maximum message size even with no reason; reasonless when
	// it was dead-lettered with no reason, none fitting.
	unfit, reasonless bool
	duplicate         *record // the earlier record of the batch with the same notification id
	// traceID is the trace of the record's span when it was sampled
	// (Config.Tracer), for its log line; empty else.
	traceID string
	created bool // the producer set created_at (else it is the SentTimestamp)
}

// Handle delivers the records of ev and returns the records to retry as
// BatchItemFailures. Per-record failures never become a batch error, so the
// event source mapping acts on the response alone, with one exception: a
// record without a message id cannot be named in the response (a blank or
// unknown itemIdentifier fails the whole batch), and the mapping deletes
// every record the response does not name. So it is delivered like any
// other, and when it is to come back (retried, failed, skipped) Handle
// returns an error naming it: the invocation fails and the whole batch
// comes back, rather than that record being lost.
//
// A record whose notification id an earlier record of the batch carries is
// a Duplicate: acknowledged without a delivery, also in a blocked FIFO
// group (the earlier record carries the notification).
//
// Records that carry a MessageGroupId attribute (a FIFO queue) are delivered
// one after another in batch order within their group, groups concurrently.
// After the first record of a group that is retried or failed, the group's
// later records are not attempted: they are reported failed with the same
// visibility delay, so the group comes back in order (the semantics of
// Powertools' SqsFifoPartialProcessor with skip_group_on_error). A
// dead-lettered record does not stop its group: it has left the queue.
func (p *Processor) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	recs := make([]*record, len(ev.Records))
	// The batch's hooks start before any send; the sends' contexts carry
	// what they return, the invocation's does not.
	batchCtx := ctx
	ends := make([]func(context.Context), 0, len(p.starts))
	for _, start := range p.starts {
		var end func(context.Context)
		batchCtx, end = start(batchCtx)
		ends = append(ends, end)
	}
	deliverCtx, cancel := p.deliveryContext(batchCtx)
	defer cancel()

	sem := make(chan struct{}, p.cfg.Concurrency)
	var wg sync.WaitGroup
	batches := groups(ev.Records, recs, receiveCount)
	prepare(recs)
	for _, r := range recs {
		r.queue, r.queueFound = redrive.FindQueue(p.queues, r.msg.EventSourceARN)
	}
	for _, group := range batches {
		wg.Add(1)
		go func(group []*record) {
			defer wg.Done()
			var blocker *record
			for _, r := range group {
				switch {
				case !r.queueFound:
					// Neither a retry nor a dead letter can be sent without
					// knowing the queue: handed back.
					r.outcome, r.class = Failed, ClassUnknownQueue
					r.err = delivery.Transient(ClassUnknownQueue, fmt.Errorf("the record's queue %s is none of this function's queues; not attempted", r.msg.EventSourceARN))
					continue
				case r.duplicate != nil:
					r.outcome = Duplicate
					continue
				}
				if blocker != nil {
					p.skip(ctx, r, blocker)
					continue
				}
				select {
				case sem <- struct{}{}:
					p.traced(ctx, deliverCtx, r)
					<-sem
				case <-deliverCtx.Done():
					p.settle(ctx, r, notStartedError(deliverCtx))
				}
				if r.outcome == Retry || r.outcome == Failed {
					blocker = r
				}
			}
		}(group)
	}
	wg.Wait()

	// The batch's hooks end (delivered-once's one write) beside the
	// visibility changes, before the records' notes are read.
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for _, end := range ends {
			end(ctx)
		}
	}()
	p.changeVisibility(ctx, recs)
	<-ended
	for _, r := range recs {
		r.storeErr, r.disabledOrigin = r.attempt.StoreError(), r.attempt.Disabled()
	}
	p.pauseIfChannelRefuses(ctx, recs)

	var resp events.SQSEventResponse
	p.logBatch(ctx, recs)
	var unreported []error
	for _, r := range recs {
		p.log(ctx, r)
		if r.outcome == Retry || r.outcome == Failed || r.outcome == Skipped {
			if r.blankID {
				unreported = append(unreported, fmt.Errorf("record %d (notification %q, %s) has no SQS message id to report for a retry", slices.Index(recs, r), r.id, r.outcome))
				continue
			}
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.msg.MessageId})
		}
	}
	if len(unreported) > 0 {
		return events.SQSEventResponse{}, fmt.Errorf("processor: the whole batch is retried: %w", errors.Join(unreported...))
	}
	return resp, nil
}

// pauseIfChannelRefuses asks the Pauser to pause the batch's channel queue
// when one of its records failed with an error every delivery of the
// channel meets (delivery.PausesChannel), once per batch. A failed pause is
// logged: the records are retried on their schedule as without it.
func (p *Processor) pauseIfChannelRefuses(ctx context.Context, recs []*record) {
	if p.cfg.Pauser == nil {
		return
	}
	for _, r := range recs {
		if !refuses(r) {
			continue
		}
		if err := p.cfg.Pauser.PauseQueue(ctx, r.queue, r.msg.EventSourceARN, r.err); err != nil {
			p.cfg.Logger.LogAttrs(ctx, slog.LevelError, "could not pause the channel whose transport refuses every send: its notifications are retried on their schedule",
				slog.String(metrics.DimChannel, string(r.queue.Channel)),
				slog.String("error", delivery.Truncate(delivery.Detail(r.err), maxErrorText)),
				slog.String("pause_error", delivery.Truncate(err.Error(), maxErrorText)))
		}
		return
	}
}

// refuses reports whether r, from a channel's queue, failed with an error
// every delivery of the channel meets (delivery.PausesChannel): its queue
// is paused.
func refuses(r *record) bool {
	return r.err != nil && r.queue.Channel != "" && delivery.PausesChannel(r.err)
}

// ClassUnknownQueue is the class of a record from a queue the processor
// was not given: handed back unattempted (outcome failed), since neither a
// retry nor a dead letter can be sent without knowing its queue.
var ClassUnknownQueue = delivery.NewClass("unknown_queue")

// ClassChannelNotConfigured is the class of a notification whose channel
// has no sender and no queue of its own to move it to: dead-lettered.
var ClassChannelNotConfigured = delivery.NewClass("channel_not_configured")

// ClassMessageTooLarge is the class of a message above
// notification.MaxMessageBytes: its dead letter would not leave room for
// the whole reason.
var ClassMessageTooLarge = delivery.NewClass("message_too_large")

// prepare reads every record before any delivery: its size, whether it has
// a message id (one without is delivered all the same, see Handle), its notification (parsed once), and whether an earlier
// record of the batch carries the same notification id. A notification
// without created_at gets the record's SentTimestamp: the event time the
// webhook envelope carries, the same on every attempt.
func prepare(recs []*record) {
	first := map[string]*record{}
	for _, r := range recs {
		r.size = messageSize(r.msg)
		r.blankID = strings.TrimSpace(r.msg.MessageId) == ""
		if r.size > notification.MaxMessageBytes {
			r.id = notification.IDOf([]byte(r.msg.Body))
			continue
		}
		n, err := notification.Parse([]byte(r.msg.Body))
		if err != nil {
			r.id, r.parseErr = notification.IDOf([]byte(r.msg.Body)), err
			continue
		}
		r.n, r.id, r.created = n, n.ID, n.CreatedAt != nil
		if n.CreatedAt == nil {
			if ms, err := strconv.ParseInt(r.msg.Attributes[AttrSentTimestamp], 10, 64); err == nil {
				sent := time.UnixMilli(ms).UTC()
				n.CreatedAt = &sent
			}
		}
		if f, ok := first[n.ID]; ok {
			r.duplicate = f
			continue
		}
		first[n.ID] = r
	}
}

// AttrSentTimestamp is the SQS system attribute holding when SQS accepted
// the message (Unix epoch milliseconds).
const AttrSentTimestamp = "SentTimestamp"

// messageSize is the record's size as SQS counts it against the maximum
// message size: the body and each message attribute's name, data type and
// value (SendMessage, "MessageAttributes").
func messageSize(m *events.SQSMessage) int {
	n := len(m.Body)
	for name, a := range m.MessageAttributes {
		n += len(name) + len(a.DataType) + len(a.BinaryValue)
		if a.StringValue != nil {
			n += len(*a.StringValue)
		}
	}
	return n
}

// AttrMessageGroupID is the SQS system attribute naming a FIFO message's
// group; the event source mapping passes it in each record's Attributes.
const AttrMessageGroupID = "MessageGroupId"

// groups fills recs from msgs and splits them into the runs delivered one
// after another: the records of one MessageGroupId in batch order, and
// every record without a group on its own.
func groups(msgs []events.SQSMessage, recs []*record, count func(*events.SQSMessage) int) [][]*record {
	var out [][]*record
	index := map[string]int{}
	for i := range msgs {
		r := &record{msg: &msgs[i], receiveCount: count(&msgs[i])}
		recs[i] = r
		g, ok := msgs[i].Attributes[AttrMessageGroupID]
		if !ok {
			out = append(out, []*record{r})
			continue
		}
		if j, seen := index[g]; seen {
			out[j] = append(out[j], r)
			continue
		}
		index[g] = len(out)
		out = append(out, []*record{r})
	}
	return out
}

// ClassGroupBlocked is the class of a FIFO record not attempted because an
// earlier record of its group in the same batch is being retried.
var ClassGroupBlocked = delivery.NewClass("fifo_group_blocked")

// skip settles a record of a FIFO group behind blocker, a record of the
// same group that is retried or failed: it is not attempted and comes back
// with blocker (same visibility delay when blocker's is set). On its last
// allowed receive it is dead-lettered with that reason, rather than left for
// the redrive policy to move without one.
func (p *Processor) skip(ctx context.Context, r *record, blocker *record) {
	err := delivery.Transient(ClassGroupBlocked, fmt.Errorf("not attempted: message %s of the same group is retried", blocker.msg.MessageId))
	if r.receiveCount >= p.cfg.MaxReceiveCount {
		p.deadLetter(ctx, r, err)
		if r.outcome == DeadLettered {
			return
		}
		// The move failed: r stays in the queue, reported failed.
	}
	r.outcome, r.class, r.err = Skipped, ClassGroupBlocked, err
	if blocker.outcome == Retry {
		r.delay, r.follows = blocker.delay, blocker
	}
}

// deliveryContext ends Reserve before ctx's deadline, so the SQS calls that
// follow the deliveries still have time.
func (p *Processor) deliveryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadlineCause(ctx, deadline.Add(-p.cfg.Reserve), errors.New("invocation deadline reserve reached"))
}

// process decides one record's outcome: attempt, then settle. Dead-letter
// moves use ctx (the invocation's), deliveries deliverCtx.
func (p *Processor) process(ctx, deliverCtx context.Context, r *record) {
	// A panic in one record's delivery must not take the batch down: the
	// event source mapping would then retry every record, delivered or not.
	defer func() {
		if v := recover(); v != nil {
			r.outcome = ""
			p.settle(ctx, r, delivery.Transient(ClassPanic, fmt.Errorf("panic: %v", v)))
		}
	}()
	p.settle(ctx, r, p.attempt(ctx, deliverCtx, r))
}

// attempt sends r with its channel's sender, inside the middlewares
// (Config.Middleware), and returns the send's outcome: nil when
// delivered, else an error of package delivery. A record it does not send
// gets a permanent error (too large, invalid, no sender), an error that it
// was not started (no time left), or its outcome set (dropped, moved).
func (p *Processor) attempt(ctx, deliverCtx context.Context, r *record) error {
	if deliverCtx.Err() != nil {
		return notStartedError(deliverCtx)
	}
	if r.size > notification.MaxMessageBytes {
		return delivery.Permanent(ClassMessageTooLarge, fmt.Errorf("the message is %d bytes (body and message attributes), above %d: 1 MiB, the SQS maximum, less the room a dead letter's reason needs (docs/delivery.md); not attempted", r.size, notification.MaxMessageBytes))
	}
	if r.parseErr != nil {
		return delivery.Permanent(delivery.ClassInvalidMessage, r.parseErr)
	}
	n := r.n
	if n.Expired(p.cfg.Now()) {
		r.outcome = Dropped
		return nil
	}
	sender, ok := p.senders[n.Channel]
	if !ok {
		if own, has := queueOfChannel(p.queues, n.Channel); has && own.URL != r.queue.URL {
			p.move(ctx, r, own)
			return nil
		}
		return delivery.Permanent(ClassChannelNotConfigured, fmt.Errorf("no sender for channel %q", n.Channel))
	}
	r.attempt = &delivery.Attempt{Number: r.receiveCount}
	if d, ok := ctx.Deadline(); ok {
		r.attempt.Deadline = d
	}
	return sender.Send(delivery.NewContext(withRecord(deliverCtx, r), r.attempt), n)
}

// settle turns r's outcome into what SQS does with it, the one place
// that does: nil is delivered (deleted) unless attempt settled r already
// (dropped, moved); a *delivery.DeliveredError is a duplicate
// (deleted, unsent); a record not started is retried at once
// (visibility 0); any other error is retried after its backoff or
// dead-lettered (fail).
func (p *Processor) settle(ctx context.Context, r *record, err error) {
	if err == nil {
		if r.outcome == "" {
			r.outcome = Delivered
		}
		return
	}
	if at, ok := delivery.AlreadyDelivered(err); ok {
		r.outcome, r.deliveredAt = Duplicate, at
		return
	}
	var ns *notStarted
	if errors.As(err, &ns) && r.receiveCount < p.cfg.MaxReceiveCount {
		r.outcome, r.class, r.err, r.delay = Retry, delivery.ClassDeadline, err, 0
		return
	}
	p.fail(ctx, r, err)
}

// ClassPanic is the class of a delivery that panicked: a bug, retried like
// any unforeseen failure so that the rest of the batch is unharmed.
var ClassPanic = delivery.NewClass("internal_panic")

// fail settles a failed delivery: dead-lettered when permanent or on the
// last receive the redrive policy allows, else retried after its backoff.
func (p *Processor) fail(ctx context.Context, r *record, err error) {
	permanent, class, retryAfter := delivery.Classify(err)
	if permanent || r.receiveCount >= p.cfg.MaxReceiveCount {
		p.deadLetter(ctx, r, err)
		return
	}
	r.outcome, r.class, r.err = Retry, class, err
	r.delay = p.cfg.Backoff.Delay(r.receiveCount, retryAfter)
}

// receiveCount reads ApproximateReceiveCount; 1 when absent or malformed.
func receiveCount(m *events.SQSMessage) int {
	n, err := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// notStarted is the error of a record the invocation had no time left to
// deliver: settle retries it at once (visibility timeout 0), not after a
// backoff delay; on its last allowed receive it is dead-lettered with
// that reason, rather than left for the redrive policy to move without
// one.
type notStarted struct{ error }

func (e *notStarted) Unwrap() error { return e.error }

// notStartedError is the transient ClassDeadline error of a record not
// started before deliverCtx ended.
func notStartedError(deliverCtx context.Context) error {
	return &notStarted{delivery.Transient(delivery.ClassDeadline, fmt.Errorf("not started: %w", context.Cause(deliverCtx)))}
}
