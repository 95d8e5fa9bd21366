package processor

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// maxBatchEntries is the SQS limit of entries in one batch request
// (ChangeMessageVisibilityBatch: 10).
const maxBatchEntries = 10

// changeVisibility sets each retried record's visibility timeout to its
// backoff delay, and each skipped FIFO record's to the delay of the record
// it follows, ten records per ChangeMessageVisibilityBatch call. A record
// whose change fails becomes Failed: it still comes back, after the queue's
// visibility timeout instead of its delay. SQS applies a visibility change
// to the one message, also on a FIFO queue; the group's order holds because
// SQS returns no message of a group while an earlier one is in flight.
func (p *Processor) changeVisibility(ctx context.Context, recs []*record) {
	var retry []*record
	for _, r := range recs {
		if r.outcome == Retry || r.outcome == Skipped && r.follows != nil {
			retry = append(retry, r)
		}
	}
	for start := 0; start < len(retry); start += maxBatchEntries {
		chunk := retry[start:min(start+maxBatchEntries, len(retry))]
		entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(chunk))
		for i, r := range chunk {
			entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{
				Id:                aws.String(strconv.Itoa(i)),
				ReceiptHandle:     aws.String(r.msg.ReceiptHandle),
				VisibilityTimeout: int32(r.delay.Seconds()),
			}
		}
		out, err := p.q.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{
			QueueUrl: aws.String(p.cfg.QueueURL),
			Entries:  entries,
		})
		if err != nil {
			for _, r := range chunk {
				r.outcome, r.sqsErr = Failed, fmt.Errorf("change visibility: %w", err)
			}
			continue
		}
		for _, f := range out.Failed {
			i, convErr := strconv.Atoi(aws.ToString(f.Id))
			if convErr != nil || i < 0 || i >= len(chunk) {
				continue
			}
			chunk[i].outcome = Failed
			chunk[i].sqsErr = fmt.Errorf("change visibility: %s: %s", aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
}
