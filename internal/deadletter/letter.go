package deadletter

import (
	"encoding/json"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// Who moved a dead letter to the dead-letter queue.
const (
	// MovedByHerald is a dead letter herald sent with a herald.reason.
	MovedByHerald = "herald"
	// MovedByRedrivePolicy is a dead letter the queue's redrive policy moved
	// after maxReceiveCount receives, without a reason.
	MovedByRedrivePolicy = "redrive_policy"
)

// sysDeadLetterQueueSourceArn is the message system attribute SQS sets on a
// message its redrive policy moved to a dead-letter queue: the source
// queue's ARN (SQS API Reference, ReceiveMessage,
// MessageSystemAttributeNames). A dead letter herald sends with
// SendMessage never has it.
const sysDeadLetterQueueSourceArn = string(types.MessageSystemAttributeNameDeadLetterQueueSourceArn)

// maxSendDelay bounds the time between herald giving up on a message (the
// reason's failed_at) and SQS storing its dead letter (SentTimestamp): the
// processor sends it within the same invocation, which lasts at most 15
// minutes (the Lambda limit), plus 5 minutes for clocks apart. A dead
// letter sent later than that was not sent with that reason: the reason is
// from an earlier dead-lettering.
const maxSendDelay = 20 * time.Minute

// Letter is one dead letter as read from the dead-letter queue.
type Letter struct {
	// MessageID is the SQS message id in the dead-letter queue.
	MessageID string `json:"sqs_message_id"`
	// NotificationID is the notification's id, when the body has one that
	// is valid (notification.IDOf).
	NotificationID string `json:"id,omitempty"`
	// Channel is "email", "webhook" or "chat", when the body names one.
	Channel string `json:"channel,omitempty"`
	// Destination is the webhook or chat webhook URL's host, the
	// registered endpoint's id (ep_…) of a delivery to one, or the domain of
	// the email's first recipient; never a path, query, user name or whole
	// address.
	Destination string `json:"destination,omitempty"`
	// Tenant and Endpoint are the tenant and the registered endpoint
	// (ep_…) of a delivery the fan-out made: from the body, else from
	// herald's herald.tenant and herald.endpoint attributes; empty for a
	// message that named its destination inline.
	Tenant   string `json:"tenant,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	// Class is the reason's error class; empty when the redrive policy
	// moved the message.
	Class string `json:"error_class,omitempty"`
	// Attempts is the receive count herald gave up on; 0 when unknown.
	Attempts int `json:"attempts,omitempty"`
	// FailedAt is when herald gave up; zero when unknown.
	FailedAt time.Time `json:"failed_at,omitzero"`
	// SentAt is the dead letter's SQS SentTimestamp.
	SentAt time.Time `json:"sent_at,omitzero"`
	// MovedBy is MovedByHerald or MovedByRedrivePolicy.
	MovedBy string `json:"moved_by"`
	// GroupID is the MessageGroupId on a FIFO dead-letter queue.
	GroupID string `json:"group_id,omitempty"`
	// SequenceNumber is the letter's place in its message group on a FIFO
	// dead-letter queue (a decimal of up to 40 digits, beyond 2^64): the
	// SequenceNumber SQS gave it in the dead-letter queue when it was first
	// dead-lettered, which herald's redrive carries in the
	// herald.sequence_number attribute ([AttrSequenceNumber]); else its
	// own. See [Scan] for why that is the group's order. Empty on a
	// standard queue.
	SequenceNumber string `json:"sequence_number,omitempty"`
	// Reason is herald's reason, nil when MovedBy is MovedByRedrivePolicy,
	// or when the herald.reason attribute is not readable JSON (MovedBy is
	// then MovedByHerald and Class is the herald.error_class attribute).
	Reason *redrive.Reason `json:"reason,omitempty"`
	// PreviousReason is a herald.reason the letter still carries from an
	// earlier dead-lettering, when the redrive policy moved it this time:
	// it was sent back with its attributes (SQS's move task keeps them),
	// failed again without herald settling it, and the redrive policy moved
	// it. It is history, never the cause of this move; Class, Attempts and
	// FailedAt do not come from it.
	PreviousReason *redrive.Reason `json:"previous_reason,omitempty"`
	// DeadLetterSourceARN is the DeadLetterQueueSourceArn SQS set when its
	// redrive policy moved the message; empty for a letter herald sent.
	DeadLetterSourceARN string `json:"dead_letter_source_arn,omitempty"`
	// Body is the original message body.
	Body string `json:"body,omitempty"`

	attributes    map[string]types.MessageAttributeValue
	receiptHandle string
}

// Age is how long ago herald gave up on the letter, or, when it is not
// known, how long ago the dead letter was sent.
func (l *Letter) Age(now time.Time) time.Duration {
	if !l.FailedAt.IsZero() {
		return now.Sub(l.FailedAt)
	}
	if !l.SentAt.IsZero() {
		return now.Sub(l.SentAt)
	}
	return 0
}

// fromMessage reads a received dead letter.
func fromMessage(m types.Message) Letter {
	l := Letter{
		MessageID:     aws.ToString(m.MessageId),
		Body:          aws.ToString(m.Body),
		MovedBy:       MovedByRedrivePolicy,
		GroupID:       m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)],
		attributes:    m.MessageAttributes,
		receiptHandle: aws.ToString(m.ReceiptHandle),
	}
	if ms, err := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64); err == nil {
		l.SentAt = time.UnixMilli(ms).UTC()
	}
	l.SequenceNumber = m.Attributes[string(types.MessageSystemAttributeNameSequenceNumber)]
	var b body
	l.NotificationID, l.Channel, l.Destination, b = describeBody(l.Body)
	l.Tenant, l.Endpoint = b.Tenant, b.endpoint()
	if l.Tenant == "" {
		l.Tenant = aws.ToString(m.MessageAttributes[redrive.AttrTenant].StringValue)
	}
	if l.Endpoint == "" {
		l.Endpoint = aws.ToString(m.MessageAttributes[redrive.AttrEndpoint].StringValue)
	}
	l.DeadLetterSourceARN = m.Attributes[sysDeadLetterQueueSourceArn]
	if a, ok := m.MessageAttributes[redrive.AttrReason]; ok && l.staleReason(aws.ToString(a.StringValue)) {
		// Moved by the redrive policy with a reason of an earlier
		// dead-lettering: kept as history only.
		var r redrive.Reason
		if json.Unmarshal([]byte(aws.ToString(a.StringValue)), &r) == nil {
			l.PreviousReason = &r
		}
	} else if ok {
		// Only herald writes the attribute: the letter is herald's even
		// when the reason cannot be read, and herald.error_class beside it
		// still names the class.
		l.MovedBy = MovedByHerald
		l.Class = aws.ToString(m.MessageAttributes[redrive.AttrErrorClass].StringValue)
		var r redrive.Reason
		if json.Unmarshal([]byte(aws.ToString(a.StringValue)), &r) == nil {
			l.Reason = &r
			l.MovedBy = MovedByHerald
			l.Class = string(r.ErrorClass)
			l.Attempts = r.Attempts
			if t, err := time.Parse(time.RFC3339Nano, r.FailedAt); err == nil {
				l.FailedAt = t.UTC()
			}
			if l.NotificationID == "" {
				l.NotificationID = r.NotificationID
			}
			if l.Channel == "" {
				l.Channel = r.Channel
			}
		}
	}
	if seq := l.carriedSequenceNumber(); seq != "" {
		l.SequenceNumber = seq
	}
	return l
}

// carriedSequenceNumber is the herald.sequence_number herald's redrive put
// on the letter: an attribute of the letter, or of the original that
// herald kept in the reason's overflow_attributes; "" when it has none or
// it is not a sequence number, or not one of an earlier stay in this
// dead-letter queue: only a FIFO queue's letter (with a SequenceNumber of
// its own) carries one, smaller than its own, since SQS's SequenceNumbers
// increase within a message group ("SequenceNumber", SQS API Reference,
// Message). Another is the producer's own attribute: ignored.
func (l *Letter) carriedSequenceNumber() string {
	a, ok := l.attributes[AttrSequenceNumber]
	seq := aws.ToString(a.StringValue)
	if r := l.heraldReason(); !ok && r != nil {
		seq = aws.ToString(r.OverflowAttributes[AttrSequenceNumber].StringValue)
	}
	if !sequencePattern.MatchString(seq) || CompareSequenceNumbers(seq, l.SequenceNumber) >= 0 {
		return ""
	}
	return seq
}

// staleReason reports whether reason, the letter's herald.reason, is not
// the cause of the move that put the letter in the dead-letter queue: SQS
// set DeadLetterQueueSourceArn (its redrive policy moved it), or the letter
// was stored more than maxSendDelay after the reason's failed_at.
func (l *Letter) staleReason(reason string) bool {
	if l.DeadLetterSourceARN != "" {
		return true
	}
	var r struct {
		FailedAt string `json:"failed_at"`
	}
	if json.Unmarshal([]byte(reason), &r) != nil || l.SentAt.IsZero() {
		return false
	}
	failed, err := time.Parse(time.RFC3339Nano, r.FailedAt)
	return err == nil && l.SentAt.Sub(failed) > maxSendDelay
}

// heraldReason is the reason herald wrote on the letter, current or
// previous: what it kept of the producer's message (attributes beyond
// those that fit, a cut body's size) holds either way.
func (l *Letter) heraldReason() *redrive.Reason {
	if l.Reason != nil {
		return l.Reason
	}
	return l.PreviousReason
}

// body is what describeBody reads of a dead letter's body.
type body struct {
	Channel string `json:"channel"`
	Tenant  string `json:"tenant"`
	Webhook *struct {
		URL      string `json:"url"`
		Endpoint string `json:"endpoint"`
	} `json:"webhook"`
	Chat *struct {
		URL      string `json:"url"`
		Endpoint string `json:"endpoint"`
	} `json:"chat"`
	Email *struct {
		To  []any `json:"to"`
		Cc  []any `json:"cc"`
		Bcc []any `json:"bcc"`
	} `json:"email"`
}

// endpoint is the registered endpoint the body names, "" when none.
func (b body) endpoint() string {
	switch {
	case b.Webhook != nil:
		return b.Webhook.Endpoint
	case b.Chat != nil:
		return b.Chat.Endpoint
	}
	return ""
}

// describeBody reads what it can of a body that may be invalid: the id,
// the channel, the destination and the rest as read.
func describeBody(raw string) (id, channel, dest string, b body) {
	// A member of the wrong type is skipped and the rest decoded
	// (encoding/json, Unmarshal); a body that is not JSON leaves b empty.
	_ = json.Unmarshal([]byte(raw), &b)
	// The id as the processor reads it (valid, and only one), and a channel
	// herald knows: anything else a producer wrote (an address, a terminal
	// escape sequence, a megabyte) stays in the body.
	id = notification.IDOf([]byte(raw))
	if notification.Channel(b.Channel).Known() {
		channel = b.Channel
	}
	switch {
	case b.endpoint() != "":
		dest = b.endpoint()
	case b.Webhook != nil:
		dest = WebhookHost(b.Webhook.URL)
	case b.Chat != nil:
		dest = WebhookHost(b.Chat.URL) // the host only: a chat webhook URL's path is its credential
	case b.Email != nil:
		for _, list := range [][]any{b.Email.To, b.Email.Cc, b.Email.Bcc} {
			if len(list) > 0 {
				if s, ok := list[0].(string); ok {
					dest = MailDomain(s)
				}
				break
			}
		}
	}
	return id, channel, dest, b
}

// WebhookHost returns the host name of a webhook URL, without user
// information, port, path or query; "" when it has none.
func WebhookHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// MailDomain returns the domain of an RFC 5322 mailbox; "" when it is not one.
func MailDomain(mailbox string) string {
	a, err := mail.ParseAddress(mailbox)
	if err != nil {
		return ""
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at < 0 {
		return ""
	}
	return strings.ToLower(a.Address[at+1:])
}
