package deadletter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/internal/sqsbatch"
	"github.com/heraldhq/herald/producer"
)

// API is the part of the SQS API the dead-letter commands call.
type API interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

var _ API = (*sqs.Client)(nil)

// DefaultHold is the visibility timeout of the dead letters a scan
// receives: long enough for a scan and a redrive of a few thousand dead
// letters, short enough that an interrupted one hides them only briefly.
const DefaultHold = 60 * time.Second

// ErrHoldTooShort is returned by [Scan] when dead letters came back while
// it ran: reading the queue took longer than their visibility timeout.
var ErrHoldTooShort = errors.New("the scan outlasted its hold (give a longer one)")

// ErrIncomplete is returned by [Scan] of a FIFO queue when visible dead
// letters remain that it could not receive: a FIFO queue returns no more
// messages of a message group while some of it is in flight, and the scan
// holds what it read ("Using the message group ID with Amazon SQS FIFO
// queues", SQS Developer Guide). Deleting or redriving the letters read
// lets a new scan read further.
var ErrIncomplete = errors.New("dead letters left unread")

// maxBatch is the most entries of one SQS batch call and the most messages
// of one ReceiveMessage.
const maxBatch = sqsbatch.MaxEntries

// Scan receives every visible message of the dead-letter queue at queueURL
// once, hiding each for hold (DefaultHold when 0; SQS allows up to 12 h),
// and returns them in a stable order (sortLetters): on a FIFO queue each
// message group in its original order, by [Letter.SequenceNumber]; on a
// standard queue, which keeps no order, oldest failure first (a letter the
// redrive policy moved, without a failure time, by its SentTimestamp, the
// original's), then by message id. It stops at an empty long-poll receive once the queue
// reports no visible message, or after 3 empty receives. Messages already in
// flight (hidden by another reader) are not seen. Call [Release] with the
// result when done, also after an error: the letters received so far are
// returned with it. A scan that outlasts hold receives its first letters
// again; it stops there with the letters read and an error wrapping
// [ErrHoldTooShort] (SQS may also, rarely, deliver a message twice: a new
// scan then succeeds). On a FIFO queue, visible letters it could not
// receive (see [ErrIncomplete]) make it return the letters read and an
// error wrapping ErrIncomplete.
func Scan(ctx context.Context, api API, queueURL string, hold time.Duration) ([]Letter, error) {
	if hold <= 0 {
		hold = DefaultHold
	}
	var out []Letter
	index := map[string]int{}
	unread := 0
	for empties := 0; empties < 3; {
		res, err := api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(queueURL),
			MaxNumberOfMessages:         maxBatch,
			WaitTimeSeconds:             1,
			VisibilityTimeout:           int32(hold.Seconds()),
			MessageAttributeNames:       []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			return out, fmt.Errorf("receive from %s: %w", queueURL, err)
		}
		if len(res.Messages) == 0 {
			empties++
			n, err := Count(ctx, api, queueURL)
			if err != nil {
				return out, err
			}
			if unread = n.Visible; unread == 0 {
				break
			}
			continue
		}
		again := 0
		for _, m := range res.Messages {
			l := fromMessage(m)
			if i, seen := index[l.MessageID]; seen {
				// Received again: only the newest receipt handle works.
				out[i].receiptHandle = l.receiptHandle
				again++
				continue
			}
			index[l.MessageID] = len(out)
			out = append(out, l)
		}
		if again > 0 {
			// The scan outlasted the hold: the first letters are visible
			// again and mixed with those not yet seen, so going on would
			// go round the queue without end.
			return sortLetters(out), fmt.Errorf("%w: %d dead letters of %s came back after %d were read; the list is incomplete", ErrHoldTooShort, again, queueURL, len(out))
		}
	}
	if unread > 0 && producer.IsFIFO(queueURL) {
		return sortLetters(out), fmt.Errorf("%w: %d dead letters read, about %d more of %s visible but not returned while messages of their message groups are held (FIFO)", ErrIncomplete, len(out), unread, queueURL)
	}
	return sortLetters(out), nil
}

// sortLetters sorts letters as [Scan] returns them. Letters with a
// SequenceNumber (a FIFO queue's) come first, by it as a number: a FIFO
// queue hands a message group over one message at a time, in order, and
// herald settles each before the next, so a group's letters reach the
// dead-letter queue in the group's order whichever moved them, herald or
// the redrive policy (which stores the message anew in a FIFO dead-letter
// queue). Their dead-letter queue SequenceNumbers are that order; a letter
// that herald redrove and that came back carries its first one
// (herald.sequence_number). The others, oldest failure first (or, without
// one, oldest SentTimestamp), then by message id: never by the text of
// notification ids, which puts n-10 before n-9.
func sortLetters(out []Letter) []Letter {
	slices.SortStableFunc(out, func(a, b Letter) int {
		switch {
		case a.SequenceNumber != "" && b.SequenceNumber != "":
			if c := CompareSequenceNumbers(a.SequenceNumber, b.SequenceNumber); c != 0 {
				return c
			}
		case a.SequenceNumber != "":
			return -1
		case b.SequenceNumber != "":
			return 1
		}
		if c := a.orderTime().Compare(b.orderTime()); c != 0 {
			return c
		}
		return strings.Compare(a.MessageID, b.MessageID)
	})
	return out
}

// orderTime is when herald gave up on l, or, when it is not known, when
// its dead letter was sent.
func (l *Letter) orderTime() time.Time {
	if !l.FailedAt.IsZero() {
		return l.FailedAt
	}
	return l.SentAt
}

// sequencePattern is an SQS SequenceNumber: a decimal of 128 bits at most
// (SQS API Reference, SendMessage, "SequenceNumber").
var sequencePattern = regexp.MustCompile(`^[0-9]{1,40}$`)

// CompareSequenceNumbers compares two SQS SequenceNumbers as the numbers
// they are (they exceed 2^64), returning -1, 0 or +1: a shorter number is
// smaller whatever its digits.
func CompareSequenceNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// Release makes letters visible again at once (visibility timeout 0), in
// ChangeMessageVisibilityBatch calls of 10 (sqsbatch.ChangeVisibility). It
// returns the failures joined, each entry's own; a letter it could not
// release becomes visible when its hold ends. A letter whose hold has
// already ended (MessageNotInflight) is visible, as asked: not a failure.
func Release(ctx context.Context, api API, queueURL string, letters []Letter) error {
	var changes []sqsbatch.Change
	for _, l := range letters {
		if l.receiptHandle != "" {
			changes = append(changes, sqsbatch.Change{ReceiptHandle: l.receiptHandle})
		}
	}
	var errs []error
	for _, err := range sqsbatch.ChangeVisibility(ctx, api, queueURL, changes) {
		var entry *sqsbatch.EntryError
		if errors.As(err, &entry) && entry.Code == sqsbatch.CodeMessageNotInflight {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("release dead letter: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Counts are a queue's approximate message counts (GetQueueAttributes).
type Counts struct {
	// Visible is ApproximateNumberOfMessages.
	Visible int `json:"visible"`
	// InFlight is ApproximateNumberOfMessagesNotVisible.
	InFlight int `json:"in_flight"`
}

// Count reads the queue's approximate counts.
func Count(ctx context.Context, api API, queueURL string) (Counts, error) {
	out, err := api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		return Counts{}, fmt.Errorf("queue attributes of %s: %w", queueURL, err)
	}
	visible, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	inFlight, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return Counts{Visible: visible, InFlight: inFlight}, nil
}
