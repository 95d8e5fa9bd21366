package deadletter

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/producer"
)

// Filter chooses dead letters. Its zero value chooses every letter.
type Filter struct {
	// IDs are notification ids or dead-letter SQS message ids; a letter
	// matches when it has one of them (an empty one names no letter).
	// Empty: any.
	IDs []string
	// Class is an error class, or "redrive_policy" for the letters the
	// redrive policy moved without a reason. Empty: any.
	Class string
	// Channel is "email", "webhook" or "chat". Empty: any.
	Channel string
	// OlderThan chooses letters whose [Letter.Age] is more than it. Zero: any.
	OlderThan time.Duration
}

// Match reports whether l meets every condition of f at now.
func (f Filter) Match(l *Letter, now time.Time) bool {
	if len(f.IDs) > 0 && !f.namedBy(l.NotificationID) && !f.namedBy(l.MessageID) {
		return false
	}
	if f.Class != "" && f.Class != l.Class && !(f.Class == MovedByRedrivePolicy && l.MovedBy == MovedByRedrivePolicy) {
		return false
	}
	if f.Channel != "" && f.Channel != l.Channel {
		return false
	}
	if f.OlderThan > 0 && l.Age(now) <= f.OlderThan {
		return false
	}
	return true
}

// namedBy reports whether id is one of f.IDs; an empty id names nothing.
func (f Filter) namedBy(id string) bool { return id != "" && slices.Contains(f.IDs, id) }

// What happened to one dead letter in a redrive.
const (
	ActionSent      = "sent"
	ActionWouldSend = "would_send"
	ActionFailed    = "failed"
)

// Result is one chosen dead letter's redrive.
type Result struct {
	NotificationID string `json:"id,omitempty"`
	// MessageID is the dead letter's SQS message id.
	MessageID string `json:"sqs_message_id"`
	// NewMessageID is the SQS message id in the main queue, once sent.
	NewMessageID string `json:"new_sqs_message_id,omitempty"`
	Action       string `json:"action"`
	Error        string `json:"error,omitempty"`
}

// Report counts a redrive: Sent letters went back to the main queue and
// left the dead-letter queue; Skipped were not chosen; Failed could not be
// sent, or were sent but not deleted (then they are in both queues). In a
// dry run the chosen letters are only listed in Results, as would_send.
type Report struct {
	Sent    int      `json:"sent"`
	Skipped int      `json:"skipped"`
	Failed  int      `json:"failed"`
	DryRun  bool     `json:"dry_run"`
	Results []Result `json:"results"`
}

// Redrive sends each letter that choose accepts back to queueURL and then
// deletes it from the dead-letter queue at dlqURL, one at a time: send
// before delete. With dryRun nothing is sent or deleted. Letters are
// released (Release) at the end unless deleted, so a redrive leaves what it
// did not move as it found it. letters must come from [Scan] of dlqURL.
//
// The message sent back has the original body and the producer's message
// attributes, including those herald kept in the reason's
// overflow_attributes (at most 10 in all, by name), but not herald's own.
// A letter whose body is only the head of the original's (the reason's
// original_body_bytes is larger) is not sent: it is Failed and kept, in a
// dry run too.
// On a FIFO queue it keeps its message group, and its deduplication id is
// "redrive-" and the dead letter's message id, so a repeated redrive of the
// same dead letter within 5 minutes is stored once.
func Redrive(ctx context.Context, api API, dlqURL, queueURL string, letters []Letter, choose func(*Letter) bool, dryRun bool) (Report, error) {
	rep := Report{DryRun: dryRun, Results: []Result{}}
	var keep []Letter
	for i := range letters {
		l := &letters[i]
		if !choose(l) {
			rep.Skipped++
			keep = append(keep, *l)
			continue
		}
		res := Result{NotificationID: l.NotificationID, MessageID: l.MessageID}
		if r := l.heraldReason(); r != nil && r.OriginalBodyBytes > len(l.Body) {
			// Sent back, the head of a body would be dead-lettered again
			// as invalid, and this letter's reason (the original's size
			// and digest) would be lost with it.
			res.Action, res.Error = ActionFailed, fmt.Sprintf("not sent: the body is only the first %d of the original's %d bytes (%s); the producer must send it again", len(l.Body), r.OriginalBodyBytes, r.ErrorClass)
			rep.Failed++
			rep.Results = append(rep.Results, res)
			keep = append(keep, *l)
			continue
		}
		if dryRun {
			res.Action = ActionWouldSend
			rep.Results = append(rep.Results, res)
			keep = append(keep, *l)
			continue
		}
		out, err := api.SendMessage(ctx, SendBackInput(l, queueURL))
		if err != nil {
			res.Action, res.Error = ActionFailed, fmt.Sprintf("send to %s: %v", queueURL, err)
			rep.Failed++
			rep.Results = append(rep.Results, res)
			keep = append(keep, *l)
			continue
		}
		res.NewMessageID = aws.ToString(out.MessageId)
		if _, err := api.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(dlqURL), ReceiptHandle: aws.String(l.receiptHandle)}); err != nil {
			res.Action, res.Error = ActionFailed, fmt.Sprintf("sent to the queue as %s but not deleted from the dead-letter queue, so it is in both (a second redrive sends it again): %v", res.NewMessageID, err)
			rep.Failed++
			rep.Results = append(rep.Results, res)
			keep = append(keep, *l)
			continue
		}
		res.Action = ActionSent
		rep.Sent++
		rep.Results = append(rep.Results, res)
	}
	return rep, Release(ctx, api, dlqURL, keep)
}

// SendBackInput is the SendMessage input that puts l back on queueURL.
func SendBackInput(l *Letter, queueURL string) *sqs.SendMessageInput {
	in := &sqs.SendMessageInput{
		QueueUrl:          aws.String(queueURL),
		MessageBody:       aws.String(l.Body),
		MessageAttributes: ProducerAttributes(l),
	}
	if producer.IsFIFO(queueURL) {
		group := l.GroupID
		if group == "" {
			group = "herald"
		}
		in.MessageGroupId = aws.String(group)
		in.MessageDeduplicationId = aws.String("redrive-" + l.MessageID)
	}
	return in
}

// ProducerAttributes returns l's message attributes as its producer sent
// them: those on the dead letter and those herald kept in the reason's
// overflow_attributes (of its current or previous reason), without
// herald's own (herald.reason, herald.error_class), the first 10 by name.
func ProducerAttributes(l *Letter) map[string]types.MessageAttributeValue {
	all := map[string]types.MessageAttributeValue{}
	for name, a := range l.attributes {
		all[name] = a
	}
	if r := l.heraldReason(); r != nil {
		for name, a := range r.OverflowAttributes {
			if _, ok := all[name]; !ok {
				all[name] = types.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
			}
		}
	}
	delete(all, processor.AttrReason)
	delete(all, processor.AttrErrorClass)
	out := map[string]types.MessageAttributeValue{}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if len(out) == processor.MaxMessageAttributes {
			break
		}
		out[name] = all[name]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
