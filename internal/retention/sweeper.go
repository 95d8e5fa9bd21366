// Package retention enforces how long dead letters are kept: it deletes
// those older than a maximum age and leaves the rest in the dead-letter
// queue, visible again at the end of the sweep.
//
// Age is measured from the notification's original SentTimestamp: the
// "original_sent_timestamp" of herald's dead-letter reason when present
// (herald's own dead-letter moves create a new message), else the dead
// letter's own SentTimestamp (a redrive-policy move keeps the original's).
// It never calls PurgeQueue.
package retention

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/sqsbatch"
)

// API is the part of the SQS API a Sweeper calls.
type API interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
}

var _ API = (*sqs.Client)(nil)

// Config configures a Sweeper.
type Config struct {
	// QueueURL is the dead-letter queue. Required.
	QueueURL string
	// MaxAge is the age from which a dead letter is deleted (age ≥ MaxAge,
	// to the millisecond of SentTimestamp). Required.
	MaxAge time.Duration
	// Hold is the visibility timeout of messages received during the sweep:
	// long enough that none comes back before the sweep ends. Defaults to
	// 15 minutes, the Lambda timeout limit.
	Hold time.Duration
	// Reserve is the time kept before ctx's deadline to make kept messages
	// visible again. Defaults to 5 s.
	Reserve time.Duration
	// Logger receives one line per deleted message and a summary. Defaults
	// to slog.Default().
	Logger *slog.Logger
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

// Sweeper deletes old dead letters.
type Sweeper struct {
	q   API
	cfg Config
}

// New returns a Sweeper, or an error naming a missing field.
func New(q API, cfg Config) (*Sweeper, error) {
	if q == nil || cfg.QueueURL == "" || cfg.MaxAge <= 0 {
		return nil, errors.New("retention: API, QueueURL and a positive MaxAge are required")
	}
	if cfg.Hold <= 0 {
		cfg.Hold = 15 * time.Minute
	}
	if cfg.Reserve <= 0 {
		cfg.Reserve = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Sweeper{q: q, cfg: cfg}, nil
}

// FunctionName is the function dimension of the retention function's
// metrics.
const FunctionName = "retention"

// Summary counts what one sweep did.
type Summary struct {
	Scanned int `json:"scanned"`
	Deleted int `json:"deleted"`
	Kept    int `json:"kept"`
	// Failed counts messages whose delete failed; they stay in the queue
	// and are swept again next time.
	Failed int `json:"failed"`
}

// Sweep receives every visible dead letter once, deletes those older than
// MaxAge and makes the others visible again. It stops early, keeping
// Reserve, when ctx has a deadline. The error reports a failed SQS call; the
// summary counts what was done before it.
func (s *Sweeper) Sweep(ctx context.Context) (Summary, error) {
	var sum Summary
	var kept []string // receipt handles to make visible again
	sweepCtx, cancel := ctx, context.CancelFunc(func() {})
	if deadline, ok := ctx.Deadline(); ok {
		sweepCtx, cancel = context.WithDeadline(ctx, deadline.Add(-s.cfg.Reserve))
	}
	defer cancel()

	var err error
	for sweepCtx.Err() == nil {
		var out *sqs.ReceiveMessageOutput
		out, err = s.q.ReceiveMessage(sweepCtx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(s.cfg.QueueURL),
			MaxNumberOfMessages:         10,
			WaitTimeSeconds:             1,
			VisibilityTimeout:           int32(s.cfg.Hold.Seconds()),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp},
			MessageAttributeNames:       []string{redrive.AttrReason},
		})
		if err != nil {
			if sweepCtx.Err() != nil {
				err = nil // the sweep's time is up: not a failure
			} else {
				err = fmt.Errorf("receive from dead-letter queue: %w", err)
			}
			break
		}
		if len(out.Messages) == 0 {
			break
		}
		var old []types.Message
		for _, m := range out.Messages {
			sum.Scanned++
			sentAt := sentAt(m)
			if age := s.cfg.Now().Sub(sentAt); age >= s.cfg.MaxAge {
				old = append(old, m)
			} else {
				kept = append(kept, aws.ToString(m.ReceiptHandle))
			}
		}
		deleted, failed, delErr := s.delete(ctx, old)
		sum.Deleted += deleted
		sum.Failed += failed
		if delErr != nil {
			err = delErr
			break
		}
	}
	sum.Kept = len(kept)
	if relErr := s.release(ctx, kept); relErr != nil {
		err = errors.Join(err, relErr)
	}
	// The summary line carries the sweep's metrics in CloudWatch Embedded
	// Metric Format: DeadLettersDeleted and DeadLettersKept by function.
	emf := metrics.Entry{
		Time:       s.cfg.Now(),
		Dimensions: []metrics.Dimension{{Name: metrics.DimFunction, Value: FunctionName}},
		Metrics: []metrics.Metric{
			{Name: metrics.DeadLettersDeleted, Unit: metrics.Count, Value: float64(sum.Deleted)},
			{Name: metrics.DeadLettersKept, Unit: metrics.Count, Value: float64(sum.Kept)},
		},
	}
	s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "retention sweep", append([]slog.Attr{
		slog.Int("scanned", sum.Scanned), slog.Int("deleted", sum.Deleted),
		slog.Int("kept", sum.Kept), slog.Int("failed", sum.Failed),
		slog.Float64("max_age_hours", s.cfg.MaxAge.Hours())}, emf.Attrs()...)...)
	return sum, err
}

// sentAt is the notification's original enqueue time: the reason's
// OriginalSentTimestamp (redrive.Reason, as the processor writes it) when
// set, else the message's own SentTimestamp.
func sentAt(m types.Message) time.Time {
	if a, ok := m.MessageAttributes[redrive.AttrReason]; ok && a.StringValue != nil {
		var r redrive.Reason
		if json.Unmarshal([]byte(*a.StringValue), &r) == nil && r.OriginalSentTimestamp > 0 {
			return time.UnixMilli(r.OriginalSentTimestamp)
		}
	}
	ms, _ := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64)
	return time.UnixMilli(ms) // 0 when absent: old, so it is swept
}

// delete removes msgs with one DeleteMessageBatch call (≤ sqsbatch.MaxEntries) and
// logs each deletion.
func (s *Sweeper) delete(ctx context.Context, msgs []types.Message) (deleted, failed int, err error) {
	if len(msgs) == 0 {
		return 0, 0, nil
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
	}
	out, err := s.q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.cfg.QueueURL), Entries: entries})
	if err != nil {
		return 0, len(msgs), fmt.Errorf("delete from dead-letter queue: %w", err)
	}
	failedIDs := map[string]bool{}
	for _, f := range out.Failed {
		failedIDs[aws.ToString(f.Id)] = true
	}
	for i, m := range msgs {
		if failedIDs[strconv.Itoa(i)] {
			failed++
			continue
		}
		deleted++
		s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "dead letter deleted",
			slog.String("sqs_message_id", aws.ToString(m.MessageId)),
			slog.Time("sent_at", sentAt(m)))
	}
	return deleted, failed, nil
}

// release makes kept messages visible again at once. A change SQS refuses
// leaves its message hidden until Hold ends: it is not lost, and the error
// counts such messages.
func (s *Sweeper) release(ctx context.Context, handles []string) error {
	changes := make([]sqsbatch.Change, len(handles))
	for i, h := range handles {
		changes[i] = sqsbatch.Change{ReceiptHandle: h, Timeout: 0}
	}
	var failed int
	var first error
	for _, err := range sqsbatch.ChangeVisibility(ctx, s.q, s.cfg.QueueURL, changes) {
		if err != nil {
			failed++
			first = cmp.Or(first, err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("make kept dead letters visible: %d of %d stay hidden until the hold of %s ends: %w", failed, len(handles), s.cfg.Hold, first)
	}
	return nil
}

// SweepAll sweeps each dead-letter queue's sweeper in turn (herald has one
// per channel queue) and returns the sum of their summaries. A failed sweep
// does not stop the next; the error joins each failure, naming its queue.
func SweepAll(ctx context.Context, sweepers []*Sweeper) (Summary, error) {
	var total Summary
	var errs []error
	for _, s := range sweepers {
		sum, err := s.Sweep(ctx)
		total.Scanned += sum.Scanned
		total.Deleted += sum.Deleted
		total.Kept += sum.Kept
		total.Failed += sum.Failed
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", s.cfg.QueueURL, err))
		}
	}
	return total, errors.Join(errs...)
}
