package processor

import (
	"context"

	"github.com/heraldhq/herald/internal/sqsbatch"
)

// changeVisibility sets each retried record's visibility timeout to its
// backoff delay, and each skipped FIFO record's to the delay of the record
// it follows, ten records per ChangeMessageVisibilityBatch call. A record
// whose change fails becomes Failed: it still comes back, after the queue's
// visibility timeout instead of its delay. SQS applies a visibility change
// to the one message, also on a FIFO queue; the group's order holds because
// SQS returns no message of a group while an earlier one is in flight.
func (p *Processor) changeVisibility(ctx context.Context, recs []*record) {
	var retry []*record
	var changes []sqsbatch.Change
	for _, r := range recs {
		if r.outcome == Retry || r.outcome == Skipped && r.follows != nil {
			retry = append(retry, r)
			changes = append(changes, sqsbatch.Change{ReceiptHandle: r.msg.ReceiptHandle, Timeout: r.delay})
		}
	}
	for i, err := range sqsbatch.ChangeVisibility(ctx, p.q, p.cfg.QueueURL, changes) {
		if err != nil {
			retry[i].outcome, retry[i].sqsErr = Failed, err
		}
	}
}
