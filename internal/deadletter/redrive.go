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

	"github.com/heraldhq/herald/internal/redrive"
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
	// Tenant and Endpoint choose the letters of deliveries to that tenant's
	// endpoints, or to that registered endpoint (ep_…). Empty: any.
	Tenant   string
	Endpoint string
	// Since chooses letters herald gave up on at or after it (their
	// failure time, or without one the dead letter's SentTimestamp): `herald
	// dlq redrive --endpoint ep_… --since T` resends what failed since an
	// endpoint went down. Zero: any.
	Since time.Time
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
	if f.Tenant != "" && f.Tenant != l.Tenant {
		return false
	}
	if f.Endpoint != "" && f.Endpoint != l.Endpoint {
		return false
	}
	if !f.Since.IsZero() && (l.orderTime().IsZero() || l.orderTime().Before(f.Since)) {
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
	// ActionHeld is a letter of a FIFO message group not sent because an
	// earlier letter of its group was not (failed, unknown, or not chosen
	// and so staying in the dead-letter queue): sending it
	// would put the group out of order. It stays; counted in Failed.
	ActionHeld = "held"
	// ActionUnknown is a letter whose send's answer cannot be trusted
	// (producer.OutcomeUnknown): the queue may hold it. It stays in the
	// dead-letter queue; its Error says how to check before a new redrive.
	ActionUnknown = "unknown"
)

// AttrSequenceNumber is the message attribute herald's redrive puts on a
// letter it sends back to a FIFO queue: the letter's SequenceNumber (its
// place in its message group, [Letter.SequenceNumber]), so that if it is
// dead-lettered again it keeps its place among the letters of its group
// that stayed. It is herald's, not the producer's: left out of
// [ProducerAttributes], and left off when the producer's attributes
// already take all 10 (the letter then takes its new place).
const AttrSequenceNumber = "herald.sequence_number"

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
// sent, were held behind an earlier letter of their FIFO message group
// that was not sent (or not chosen), or were sent but not deleted (then they are in both
// queues); Unknown were sent without an answer that can be trusted (the
// queue may hold them; they stay in the dead-letter queue too). In a dry
// run the chosen letters are only listed in Results, as would_send.
type Report struct {
	Sent    int      `json:"sent"`
	Skipped int      `json:"skipped"`
	Failed  int      `json:"failed"`
	Unknown int      `json:"unknown"`
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
// same dead letter within 5 minutes is stored once. Letters are sent in the
// order given ([Scan]'s: each group in its original order), and a group
// stops at its first letter not sent (failed, unknown, or not chosen): its
// later chosen letters are held (ActionHeld) and stay, as `herald send`
// stops a group.
// A send whose answer cannot be trusted (producer.OutcomeUnknown) is
// ActionUnknown: the letter stays, and the result says how to check.
func Redrive(ctx context.Context, api API, dlqURL, queueURL string, letters []Letter, choose func(*Letter) bool, dryRun bool) (Report, error) {
	rep := Report{DryRun: dryRun, Results: []Result{}}
	var keep []Letter
	fifo := producer.IsFIFO(queueURL)
	// stopped holds, by message group, the letter not sent that stops it.
	stopped := map[string]Result{}
	// unchosen holds, by message group, the first letter not chosen.
	unchosen := map[string]*Letter{}
	for i := range letters {
		l := &letters[i]
		group := sendGroup(l)
		if !choose(l) {
			rep.Skipped++
			keep = append(keep, *l)
			if _, ok := unchosen[group]; !ok && fifo {
				unchosen[group] = l
			}
			continue
		}
		res := Result{NotificationID: l.NotificationID, MessageID: l.MessageID}
		if first, ok := stopped[group]; ok {
			res.Action, res.Error = ActionHeld, fmt.Sprintf("not sent: dead letter %s (%s) of message group %s, before it, was not sent; sending this one first would put the group out of order", first.MessageID, cellOr(first.NotificationID), group)
			rep.Failed++
			rep.Results = append(rep.Results, res)
			keep = append(keep, *l)
			continue
		}
		if first, ok := unchosen[group]; ok {
			// A gap in the chosen letters of a group (--id n-9 --id
			// n-11): the letter left out stays, and would go back after
			// this one if redriven later.
			res.Action, res.Error = ActionHeld, fmt.Sprintf("not sent: dead letter %s (%s) of message group %s, before it, was not chosen and stays; sending this one first would put the group out of order: choose it too, or delete it first", first.MessageID, cellOr(first.NotificationID), group)
			rep.Failed++
			rep.Results = append(rep.Results, res)
			keep = append(keep, *l)
			continue
		}
		stop := func() {
			if fifo {
				stopped[group] = res
			}
		}
		if r := l.heraldReason(); r != nil && r.OriginalBodyBytes > len(l.Body) {
			// Sent back, the head of a body would be dead-lettered again
			// as invalid, and this letter's reason (the original's size
			// and digest) would be lost with it.
			res.Action, res.Error = ActionFailed, fmt.Sprintf("not sent: the body is only the first %d of the original's %d bytes (%s); the producer must send it again", len(l.Body), r.OriginalBodyBytes, r.ErrorClass)
			rep.Failed++
			rep.Results = append(rep.Results, res)
			keep = append(keep, *l)
			stop()
			continue
		}
		if dryRun {
			res.Action = ActionWouldSend
			rep.Results = append(rep.Results, res)
			keep = append(keep, *l)
			continue
		}
		out, err := api.SendMessage(ctx, SendBackInput(l, queueURL), producer.RetryKnownOutcomesOnly)
		if err != nil {
			if producer.OutcomeUnknown(err) {
				res.Action, res.Error = ActionUnknown, unknownText(l, queueURL, err)
				rep.Unknown++
			} else {
				res.Action, res.Error = ActionFailed, fmt.Sprintf("send to %s: %v", queueURL, err)
				rep.Failed++
			}
			rep.Results = append(rep.Results, res)
			keep = append(keep, *l)
			stop()
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

// unknownText is the Error of a letter whose send to queueURL failed with
// err of unknown outcome: the dead letter is kept, and how to check.
func unknownText(l *Letter, queueURL string, err error) string {
	check := fmt.Sprintf("look for notification %s in the deliver function's log before redriving it again: a second redrive to this standard queue is a second message", cellOr(l.NotificationID))
	if producer.IsFIFO(queueURL) {
		check = fmt.Sprintf("redriving it again within 5 minutes is safe: SQS stores one message per deduplication id %s", deduplicationID(l))
	}
	return fmt.Sprintf("unknown whether %s holds it (%v); the dead letter is kept; %s", queueURL, err, check)
}

// cellOr is id, or "without an id" when it is empty.
func cellOr(id string) string {
	if id == "" {
		return "without an id"
	}
	return id
}

// sendGroup is the message group l goes back to on a FIFO queue: its own,
// or "herald" when it has none.
func sendGroup(l *Letter) string {
	if l.GroupID == "" {
		return "herald"
	}
	return l.GroupID
}

// deduplicationID is l's MessageDeduplicationId on a FIFO queue.
func deduplicationID(l *Letter) string { return "redrive-" + l.MessageID }

// SendBackInput is the SendMessage input that puts l back on queueURL. On a
// FIFO queue it carries l's SequenceNumber as AttrSequenceNumber when the
// producer's attributes leave room.
func SendBackInput(l *Letter, queueURL string) *sqs.SendMessageInput {
	in := &sqs.SendMessageInput{
		QueueUrl:          aws.String(queueURL),
		MessageBody:       aws.String(l.Body),
		MessageAttributes: ProducerAttributes(l),
	}
	if producer.IsFIFO(queueURL) {
		in.MessageGroupId = aws.String(sendGroup(l))
		in.MessageDeduplicationId = aws.String(deduplicationID(l))
		if l.SequenceNumber != "" && len(in.MessageAttributes) < redrive.MaxMessageAttributes {
			if in.MessageAttributes == nil {
				in.MessageAttributes = map[string]types.MessageAttributeValue{}
			}
			in.MessageAttributes[AttrSequenceNumber] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(l.SequenceNumber)}
		}
	}
	return in
}

// ProducerAttributes returns l's message attributes as its producer sent
// them: those on the dead letter and those herald kept in the reason's
// overflow_attributes (of its current or previous reason), without
// herald's own (herald.reason, herald.error_class, herald.sequence_number),
// the first 10 by name.
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
	maps.DeleteFunc(all, func(name string, _ types.MessageAttributeValue) bool { return redrive.HeraldAttribute(name) })
	delete(all, AttrSequenceNumber)
	out := map[string]types.MessageAttributeValue{}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if len(out) == redrive.MaxMessageAttributes {
			break
		}
		out[name] = all[name]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
