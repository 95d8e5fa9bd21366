package processor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/producer"
)

// herald's two attributes (redrive.AttrReason, redrive.AttrErrorClass)
// leave room for 8 of the original's; a delivery to a registered endpoint's
// two more (redrive.Subject) for 6.
const (
	maxAttributes     = redrive.MaxMessageAttributes
	maxKeptAttributes = maxAttributes - 2
	// maxErrorText bounds the error text kept in logs and dead letters.
	maxErrorText = 1024
	// shortErrorText bounds it in a dead letter that did not fit with
	// maxErrorText.
	shortErrorText = 256
)

// deadLetter sends r to the dead-letter queue with its reason. On success r
// is acknowledged (DeadLettered); on failure it is reported failed (Failed)
// and the redrive policy remains its way to the dead-letter queue.
func (p *Processor) deadLetter(ctx context.Context, r *record, cause error) {
	permanent, class, _ := delivery.Classify(cause)
	r.class, r.err = class, cause
	reason := redrive.Reason{
		Outcome:         "permanent_failure",
		ErrorClass:      class,
		Error:           delivery.Truncate(delivery.Detail(cause), maxErrorText),
		Attempts:        r.receiveCount,
		FailedAt:        p.cfg.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		SourceQueueARN:  r.msg.EventSourceARN,
		SourceMessageID: r.msg.MessageId,
	}
	if !permanent {
		reason.Outcome = "attempts_exhausted"
	}
	reason.NotificationID = r.id
	if r.n != nil {
		reason.Channel = string(r.n.Channel)
	}
	if ts, err := strconv.ParseInt(r.msg.Attributes[AttrSentTimestamp], 10, 64); err == nil {
		reason.OriginalSentTimestamp = ts
	}
	attrs, overflow := keptAttributes(r.msg.MessageAttributes, maxKeptAttributes-len(redrive.Subject(r.n)))
	reason.OverflowAttributes = overflow

	// The dead letter is the original plus herald's attributes, so it can
	// exceed the dead-letter queue's MaximumMessageSize when the original
	// was close to it (SQS refuses it, isTooLarge). The body is the
	// producer's and is never cut: the reason shrinks instead, one step per
	// refusal, until the dead letter fits.
	var shrink []func()
	if len(reason.Error) > shortErrorText || overflow != nil {
		shrink = append(shrink, func() { // a short error, the overflow attributes' names only
			reason.Error = delivery.Truncate(reason.Error, shortErrorText)
			reason.DroppedAttributes = slices.Sorted(maps.Keys(overflow))
			reason.OverflowAttributes = nil
		})
	}
	if len(r.msg.MessageAttributes) > 0 {
		shrink = append(shrink, func() { // none of the original's attributes, their names kept
			reason.DroppedAttributes = slices.Sorted(maps.Keys(r.msg.MessageAttributes))
			attrs = nil
		})
	}
	shrink = append(shrink, func() { reason = shortest(reason) })
	err := p.sendDeadLetter(ctx, r, r.msg.Body, &reason, attrs)
	for _, step := range shrink {
		if !isTooLarge(err) {
			break
		}
		step()
		err = p.sendDeadLetter(ctx, r, r.msg.Body, &reason, attrs)
	}
	if isTooLarge(err) {
		// Not even the shortest reason fits beside the body: the message
		// goes as it came, the body and the producer's attributes, with no
		// reason; the reason is in the record's log line and the letter
		// is counted (DeadLettersWithoutReason). Left in the queue, its
		// gone receiver would be sent it again on every receive.
		if err = p.sendDeadLetter(ctx, r, r.msg.Body, nil, producerAttributes(r.msg.MessageAttributes)); err == nil {
			r.reasonless = true
		}
	}
	if err != nil {
		if isTooLarge(err) {
			// Not even the message as it came fits: the dead-letter queue's
			// MaximumMessageSize is below the queue's. It stays untouched
			// for the redrive policy to move.
			r.unfit = true
			err = fmt.Errorf("%w: even with no reason (%w); the message is left in the queue, untouched, for its redrive policy to move after maxReceiveCount receives", errDeadLetterTooLarge, err)
		}
		r.outcome, r.sqsErr = Failed, fmt.Errorf("send to dead-letter queue: %w", err)
		return
	}
	r.outcome = DeadLettered
}

// producerAttributes converts every message attribute of the record for
// SendMessage but herald's own (redrive.HeraldAttribute, which a
// redriven letter may carry from an earlier dead-lettering): at most
// MaxMessageAttributes, as the record had.
func producerAttributes(in map[string]events.SQSMessageAttribute) map[string]types.MessageAttributeValue {
	out := make(map[string]types.MessageAttributeValue, len(in))
	for name, a := range in {
		if redrive.HeraldAttribute(name) {
			continue
		}
		out[name] = types.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
	}
	return out
}

// errDeadLetterTooLarge marks a dead letter that exceeds the dead-letter
// queue's MaximumMessageSize however short its reason.
var errDeadLetterTooLarge = errors.New("the dead letter exceeds the dead-letter queue's MaximumMessageSize")

// shortenedError is the error of the shortest reason: the full one is in
// the function's log line of the record.
const shortenedError = "reason shortened to fit the dead-letter queue's MaximumMessageSize; the full error is in the deliver function's log"

// shortest is r with no more than its outcome, class, attempts, time and
// ids: a few hundred bytes, the last reason tried before the message is
// sent as it came, with none.
func shortest(r redrive.Reason) redrive.Reason {
	return redrive.Reason{
		Outcome:               r.Outcome,
		ErrorClass:            r.ErrorClass,
		Error:                 shortenedError,
		Attempts:              r.Attempts,
		FailedAt:              r.FailedAt,
		NotificationID:        r.NotificationID,
		SourceMessageID:       r.SourceMessageID,
		OriginalSentTimestamp: r.OriginalSentTimestamp,
	}
}

// sendDeadLetter sends body, r's, with attrs and, unless reason is nil,
// the reason attributes.
func (p *Processor) sendDeadLetter(ctx context.Context, r *record, body string, reason *redrive.Reason, attrs map[string]types.MessageAttributeValue) error {
	all := make(map[string]types.MessageAttributeValue, len(attrs)+4)
	maps.Copy(all, attrs)
	if reason != nil {
		reasonJSON, err := json.Marshal(reason)
		if err != nil { // cannot happen: redrive.Reason holds only strings, numbers and maps of them
			panic(err)
		}
		all[redrive.AttrReason] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(attributeSafe.Replace(string(reasonJSON)))}
		all[redrive.AttrErrorClass] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(string(reason.ErrorClass))}
		for name, v := range redrive.Subject(r.n) {
			all[name] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	in := &sqs.SendMessageInput{
		QueueUrl:          aws.String(r.queue.DeadLetterURL),
		MessageBody:       aws.String(body),
		MessageAttributes: all,
	}
	if producer.IsFIFO(r.queue.DeadLetterURL) {
		// A FIFO queue requires a group; the original's keeps the dead
		// letters of a group in order. The source message ID as
		// deduplication ID makes a repeated move (a retried send, or a
		// crash before the acknowledgement) one dead letter within SQS's
		// 5-minute deduplication interval.
		group := r.msg.Attributes[AttrMessageGroupID]
		if group == "" {
			group = "herald"
		}
		in.MessageGroupId = aws.String(group)
		dedup := r.msg.MessageId[:min(len(r.msg.MessageId), 128)] // SQS limit; message ids are 36
		if r.blankID {                                            // SQS requires one: the body's digest
			sum := sha256.Sum256([]byte(r.msg.Body))
			dedup = hex.EncodeToString(sum[:])
		}
		in.MessageDeduplicationId = aws.String(dedup)
	}
	_, err := p.q.SendMessage(ctx, in)
	return err
}

// attributeSafe escapes the two characters that JSON leaves as they are and
// SQS refuses in a message attribute's value, U+FFFE and U+FFFF ("the same
// restrictions on the content as the message body": #x9 | #xA | #xD | #x20
// to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF; SendMessage). A
// reason can hold them, in the path of a member a body names with \uffff;
// json.Marshal already escapes the control characters and replaces invalid
// UTF-8. They occur only inside JSON strings, so the escaped text is the
// same JSON value.
var attributeSafe = strings.NewReplacer("\uFFFE", `\ufffe`, "\uFFFF", `\uffff`)

// isTooLarge reports an SQS refusal of the message itself, such as one over
// the queue's MaximumMessageSize (InvalidParameterValue), as opposed to a
// throttle or an outage that a smaller message would not get past.
func isTooLarge(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "InvalidParameterValue", "MessageTooLong", "InvalidMessageContents", "InvalidAttributeValue":
		return true
	}
	return false
}

// keptAttributes converts the record's message attributes for SendMessage,
// keeping the first keep by name and returning the rest as overflow.
func keptAttributes(in map[string]events.SQSMessageAttribute, keep int) (map[string]types.MessageAttributeValue, map[string]events.SQSMessageAttribute) {
	names := slices.Sorted(maps.Keys(in))
	out := make(map[string]types.MessageAttributeValue, min(len(in), keep)+4)
	var overflow map[string]events.SQSMessageAttribute
	for _, name := range names {
		a := in[name]
		if len(out) >= keep || redrive.HeraldAttribute(name) {
			if overflow == nil {
				overflow = map[string]events.SQSMessageAttribute{}
			}
			overflow[name] = a
			continue
		}
		out[name] = types.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
	}
	return out, overflow
}
