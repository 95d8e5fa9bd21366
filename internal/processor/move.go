package processor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/producer"
)

// move sends r, a notification on another channel's queue whose own channel
// cannot deliver here, to its channel's queue own, body and message
// attributes unchanged, where it waits with that channel's mapping; then r
// is acknowledged (Moved). A FIFO record keeps its group, and its message id
// deduplicates a repeated move. When the send fails r is reported failed
// (Failed) and comes back after the visibility timeout; it is never
// acknowledged unless the copy was stored.
func (p *Processor) move(ctx context.Context, r *record, own redrive.Queue) {
	attrs := make(map[string]types.MessageAttributeValue, len(r.msg.MessageAttributes))
	for name, a := range r.msg.MessageAttributes {
		attrs[name] = types.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
	}
	in := &sqs.SendMessageInput{
		QueueUrl:          aws.String(own.URL),
		MessageBody:       aws.String(r.msg.Body),
		MessageAttributes: attrs,
	}
	if len(attrs) == 0 {
		in.MessageAttributes = nil
	}
	if producer.IsFIFO(own.URL) {
		group := r.msg.Attributes[AttrMessageGroupID]
		if group == "" {
			group = "herald"
		}
		in.MessageGroupId = aws.String(group)
		in.MessageDeduplicationId = aws.String(r.msg.MessageId)
	}
	if _, err := p.q.SendMessage(ctx, in); err != nil {
		r.outcome, r.sqsErr = Failed, fmt.Errorf("move to the queue of channel %s: %w", own.Channel, err)
		return
	}
	r.outcome = Moved
	r.movedTo = own.URL
}
