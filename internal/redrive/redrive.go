// Package redrive holds what the deliver function, the operator's
// commands, retention and pause share about herald's queues and their
// dead letters, as a leaf that imports none of them: a queue paired with
// its dead-letter queue (the pair an SQS redrive policy ties), how a
// queue is named in its URL and its ARN, and the reason herald writes on
// every dead letter it sends (the herald.reason message attribute).
//
// See https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html.
package redrive

import (
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/notification"
)

// Message attributes herald adds to a dead letter. SQS allows
// [MaxMessageAttributes] message attributes per message: herald uses 2
// (4 on a delivery to a registered endpoint) and keeps as many of the
// original's as fit beside them; any others are carried inside the
// reason, so nothing is lost.
const (
	// AttrReason holds a JSON [Reason].
	AttrReason = "herald.reason"
	// AttrErrorClass holds the error class alone, for filtering.
	AttrErrorClass = "herald.error_class"
	// AttrTenant and AttrEndpoint (String) name the tenant and the
	// registered endpoint (ep_…) of a delivery the fan-out made, for
	// `herald dlq --tenant/--endpoint`; absent on other dead letters.
	AttrTenant   = "herald.tenant"
	AttrEndpoint = "herald.endpoint"
)

// HeraldAttribute reports whether name is one of the attributes herald
// writes on a dead letter (never the producer's own: a redrive leaves them
// out, a new dead-lettering writes them anew).
func HeraldAttribute(name string) bool {
	switch name {
	case AttrReason, AttrErrorClass, AttrTenant, AttrEndpoint:
		return true
	}
	return false
}

// EndpointOf is the id of the registered endpoint m names (webhook.endpoint
// or chat.endpoint); "" for a message that names its destination inline.
func EndpointOf(m *notification.Message) string {
	switch {
	case m == nil:
		return ""
	case m.Webhook != nil:
		return m.Webhook.Endpoint
	case m.Chat != nil:
		return m.Chat.Endpoint
	}
	return ""
}

// Subject is the (tenant, endpoint) attributes of m's dead letter: one
// entry per non-empty value of AttrTenant and AttrEndpoint.
func Subject(m *notification.Message) map[string]string {
	out := map[string]string{}
	if m == nil {
		return out
	}
	if m.Tenant != "" {
		out[AttrTenant] = m.Tenant
	}
	if id := EndpointOf(m); id != "" {
		out[AttrEndpoint] = id
	}
	return out
}

// MaxMessageAttributes is the most message attributes of one SQS message
// (SQS Developer Guide, "Amazon SQS message attributes").
const MaxMessageAttributes = 10

// Queue is one queue the deliver function's records come from, with its
// dead-letter queue. herald gives each channel a queue of its own (its own
// event source mapping, so that a channel that cannot deliver pauses alone;
// docs/reliability.md); a queue with no Channel serves every channel, as
// the single queue of herald before channel queues did.
type Queue struct {
	// Channel is the channel producers send to this queue; "" for a queue
	// of every channel.
	Channel notification.Channel
	// URL is the queue's URL. Required.
	URL string
	// DeadLetterURL is the URL of its dead-letter queue: where herald
	// moves what it cannot deliver, and the redrive policy's target.
	// Required.
	DeadLetterURL string
}

// QueueKey is what names a queue within a Region in both its URL
// (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME, or an emulator's
// http://HOST:PORT/ACCOUNT/NAME) and its ARN (arn:PARTITION:sqs:REGION:
// ACCOUNT:NAME): "ACCOUNT/NAME". It returns "" for anything else. The
// deliver function finds a record's queue by its eventSourceARN with it.
func QueueKey(urlOrARN string) string {
	if rest, ok := strings.CutPrefix(urlOrARN, "arn:"); ok {
		parts := strings.Split(rest, ":")
		if len(parts) != 5 || parts[1] != "sqs" || parts[3] == "" || parts[4] == "" {
			return ""
		}
		return parts[3] + "/" + parts[4]
	}
	u, err := url.Parse(urlOrARN)
	if err != nil || u.Host == "" {
		return ""
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return ""
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1]
}

// FindQueue returns the queue of qs whose URL names the same queue as
// sourceARN (a record's eventSourceARN; [QueueKey]). With a single queue
// that queue is returned whatever sourceARN is: its records can come from
// no other. It returns false when no queue matches.
func FindQueue(qs []Queue, sourceARN string) (Queue, bool) {
	if len(qs) == 1 {
		return qs[0], true
	}
	key := QueueKey(sourceARN)
	for _, q := range qs {
		if key != "" && QueueKey(q.URL) == key {
			return q, true
		}
	}
	return Queue{}, false
}

// Reason is why herald dead-lettered a notification: the JSON value of the
// herald.reason message attribute of every dead letter it sends.
type Reason struct {
	// Outcome is "permanent_failure" or "attempts_exhausted".
	Outcome string `json:"outcome"`
	// ErrorClass is the failure's class, such as "webhook_gone".
	ErrorClass delivery.Class `json:"error_class"`
	// Error is the last error's text, at most 1 KiB, free of secrets.
	Error string `json:"error"`
	// Attempts is the SQS receive count of the failing receive.
	Attempts int `json:"attempts"`
	// FailedAt is when herald gave up (RFC 3339).
	FailedAt string `json:"failed_at"`
	// NotificationID is the message's id, when its body could be parsed.
	NotificationID string `json:"notification_id,omitempty"`
	// Channel is the message's channel, when its body could be parsed.
	Channel string `json:"channel,omitempty"`
	// SourceQueueARN and SourceMessageID identify the original SQS message.
	SourceQueueARN  string `json:"source_queue_arn,omitempty"`
	SourceMessageID string `json:"source_message_id"`
	// OriginalSentTimestamp is the original message's SentTimestamp (Unix
	// epoch milliseconds): retention measures age from it.
	OriginalSentTimestamp int64 `json:"original_sent_timestamp,omitempty"`
	// OverflowAttributes holds original message attributes beyond the 8
	// that fit beside herald's own.
	OverflowAttributes map[string]events.SQSMessageAttribute `json:"overflow_attributes,omitempty"`
	// DroppedAttributes names original message attributes left out because
	// the dead letter would otherwise exceed the queue's maximum message
	// size; the original's other attributes and its body are kept.
	DroppedAttributes []string `json:"dropped_attributes,omitempty"`
	// OriginalBodyBytes and OriginalBodySHA256 (hexadecimal) are set only
	// in dead letters of earlier herald versions, which kept the first
	// notification.MaxMessageBytes bytes of a message_too_large original's
	// body. herald now never cuts a body: the reason shrinks instead, or
	// the message goes as it came, with no reason.
	OriginalBodyBytes  int    `json:"original_body_bytes,omitempty"`
	OriginalBodySHA256 string `json:"original_body_sha256,omitempty"`
}
