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
	// A batch comes from one mapping, so from one queue; records are
	// grouped by queue all the same.
	retry := map[string][]*record{}
	changes := map[string][]sqsbatch.Change{}
	var order []string
	for _, r := range recs {
		if r.outcome == Retry || r.outcome == Skipped && r.follows != nil {
			url := r.queue.URL
			if _, seen := retry[url]; !seen {
				order = append(order, url)
			}
			retry[url] = append(retry[url], r)
			changes[url] = append(changes[url], sqsbatch.Change{ReceiptHandle: r.msg.ReceiptHandle, Timeout: r.delay})
		}
	}
	for _, url := range order {
		for i, err := range sqsbatch.ChangeVisibility(ctx, p.q, url, changes[url]) {
			if err != nil {
				retry[url][i].outcome, retry[url][i].sqsErr = Failed, err
			}
		}
	}
}
