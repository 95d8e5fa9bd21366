// Package sqsbatch holds SQS batch rules herald follows in more than one
// place: at most [MaxEntries] entries per batch call, visibility changes
// whose per-entry failures are reported, not lost, and how many records of
// a received batch are delivered at once ([DefaultConcurrency]).
package sqsbatch

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// MaxEntries is the SQS limit of entries in one batch request
// (SendMessageBatch, DeleteMessageBatch, ChangeMessageVisibilityBatch: 10;
// TooManyEntriesInBatchRequest above it).
const MaxEntries = 10

// DefaultConcurrency is how many records of a batch the event source
// mapping passes are delivered at once unless configured otherwise
// (processor.Config.Concurrency, HERALD_CONCURRENCY): a batch of up to 100
// records is delivered in one round, at the speed of its slowest delivery.
// Requests to any one webhook destination are bounded apart from it
// (webhook.Config.MaxInFlightPerDestination).
const DefaultConcurrency = 100

// VisibilityAPI is the SQS call ChangeVisibility makes.
type VisibilityAPI interface {
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
}

var _ VisibilityAPI = (*sqs.Client)(nil)

// Change is one message's new visibility timeout: Timeout from now, in whole
// seconds (SQS's unit; fractions are dropped). The caller keeps it within
// SQS's 0–43,200 s (backoff.MaxVisibilityTimeout).
type Change struct {
	ReceiptHandle string
	Timeout       time.Duration
}

// ChangeVisibility applies changes to queueURL with ⌈len(changes)/10⌉
// ChangeMessageVisibilityBatch calls, entry ids "0"–"9" within each. It
// returns one error per change, nil where SQS applied it; a failed call
// fails each change of its chunk, a failed entry (SQS's Failed list) its
// change alone, with SQS's code and message.
func ChangeVisibility(ctx context.Context, q VisibilityAPI, queueURL string, changes []Change) []error {
	errs := make([]error, len(changes))
	for start := 0; start < len(changes); start += MaxEntries {
		chunk := changes[start:min(start+MaxEntries, len(changes))]
		entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(chunk))
		for i, c := range chunk {
			entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{
				Id:                aws.String(strconv.Itoa(i)),
				ReceiptHandle:     aws.String(c.ReceiptHandle),
				VisibilityTimeout: int32(c.Timeout / time.Second),
			}
		}
		out, err := q.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{
			QueueUrl: aws.String(queueURL),
			Entries:  entries,
		})
		if err != nil {
			for i := range chunk {
				errs[start+i] = fmt.Errorf("change visibility: %w", err)
			}
			continue
		}
		for _, f := range out.Failed {
			i, convErr := strconv.Atoi(aws.ToString(f.Id))
			if convErr != nil || i < 0 || i >= len(chunk) {
				continue // not an id we sent
			}
			errs[start+i] = fmt.Errorf("change visibility: %w", &EntryError{Code: aws.ToString(f.Code), Message: aws.ToString(f.Message)})
		}
	}
	return errs
}

// CodeMessageNotInflight is the code of an entry whose message is not in
// flight: its visibility timeout has already ended (ChangeMessageVisibility,
// SQS API Reference).
const CodeMessageNotInflight = "MessageNotInflight"

// EntryError is one entry's failure in a batch answer (SQS's Failed list).
type EntryError struct {
	Code, Message string
}

func (e *EntryError) Error() string { return e.Code + ": " + e.Message }
