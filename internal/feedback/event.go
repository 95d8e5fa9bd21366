package feedback

import (
	"log/slog"
	"time"
)

// Event is the email sending event record SES publishes for one message
// (SES Developer Guide, "Contents of event data that Amazon SES publishes"):
// the detail of the EventBridge event, the Message of the SNS notification.
// Only the members herald logs are decoded; headers, the sender and the
// diagnostic texts, which hold addresses, are left out on purpose.
type Event struct {
	// EventType is SES's name of the event: "Send", "Delivery", "Bounce",
	// "Complaint", "Reject", "Rendering Failure", "DeliveryDelay",
	// "Subscription", "Open" or "Click".
	EventType     string            `json:"eventType"`
	Mail          Mail              `json:"mail"`
	Bounce        *Bounce           `json:"bounce,omitempty"`
	Complaint     *Complaint        `json:"complaint,omitempty"`
	Delivery      *Delivery         `json:"delivery,omitempty"`
	Reject        *Reject           `json:"reject,omitempty"`
	Failure       *RenderingFailure `json:"failure,omitempty"`
	DeliveryDelay *DeliveryDelay    `json:"deliveryDelay,omitempty"`
}

// Mail is the event's "mail" object: the message the event is about.
type Mail struct {
	Timestamp time.Time `json:"timestamp"`
	// MessageID is the id SES returned from SendEmail.
	MessageID string `json:"messageId"`
	// Destination is every recipient of the message (To, Cc and Bcc).
	Destination []string `json:"destination"`
	// Tags are the message tags, each name with its values: the
	// configuration set's and SES's auto-tags ("ses:configuration-set",
	// "ses:from-domain", …) and the ones in SendEmail's EmailTags, among
	// them herald's IDTag.
	Tags map[string][]string `json:"tags"`
}

// Recipient is one recipient of a bounce, complaint or delivery delay.
type Recipient struct {
	EmailAddress string `json:"emailAddress"`
	// Status is the SMTP enhanced status code (RFC 3463), e.g. "5.1.1".
	Status string `json:"status,omitempty"`
}

// Bounce is the "bounce" object. BounceType is "Permanent", "Transient" or
// "Undetermined"; BounceSubType refines it ("General", "NoEmail",
// "Suppressed", "OnAccountSuppressionList", "MailboxFull", …).
type Bounce struct {
	BounceType        string      `json:"bounceType"`
	BounceSubType     string      `json:"bounceSubType"`
	BouncedRecipients []Recipient `json:"bouncedRecipients"`
	Timestamp         time.Time   `json:"timestamp"`
}

// Complaint is the "complaint" object. ComplaintSubType is empty or
// "OnAccountSuppressionList"; ComplaintFeedbackType is the feedback report's
// type (RFC 5965: "abuse", "fraud", …) when the mailbox provider sent one.
type Complaint struct {
	ComplainedRecipients  []Recipient `json:"complainedRecipients"`
	ComplaintSubType      string      `json:"complaintSubType"`
	ComplaintFeedbackType string      `json:"complaintFeedbackType"`
	Timestamp             time.Time   `json:"timestamp"`
}

// Delivery is the "delivery" object: the recipients' mail server accepted
// the message.
type Delivery struct {
	Recipients           []string  `json:"recipients"`
	ProcessingTimeMillis int64     `json:"processingTimeMillis"`
	Timestamp            time.Time `json:"timestamp"`
}

// Reject is the "reject" object: SES found a virus and sent nothing.
type Reject struct {
	Reason string `json:"reason"`
}

// RenderingFailure is the "failure" object: a stored template could not be
// rendered with the message's data, and nothing was sent.
type RenderingFailure struct {
	TemplateName string `json:"templateName"`
	ErrorMessage string `json:"errorMessage"`
}

// DeliveryDelay is the "deliveryDelay" object: SES keeps trying until
// ExpirationTime. DelayType is e.g. "TransientCommunicationFailure",
// "MailboxFull", "SpamDetected", "IPFailure", "Undetermined".
type DeliveryDelay struct {
	DelayType         string      `json:"delayType"`
	DelayedRecipients []Recipient `json:"delayedRecipients"`
	ExpirationTime    time.Time   `json:"expirationTime"`
	Timestamp         time.Time   `json:"timestamp"`
}

// EventType is herald's name of an SES event type: the event_type member of
// the log line and the value of the metric's event_type dimension.
type EventType string

// The event types herald's configuration set publishes.
const (
	Send            EventType = "send"
	Delivered       EventType = "delivery"
	Bounced         EventType = "bounce"
	Complained      EventType = "complaint"
	Rejected        EventType = "reject"
	RenderingFailed EventType = "rendering_failure"
	DeliveryDelayed EventType = "delivery_delay"
)

// SourceSES is the EventBridge "source" of SES events.
const SourceSES = "aws.ses"

// MetricEmailEvents counts SES events (Count, namespace Herald), by
// DimEventType, and bounces also by DimEventType and DimBounceType.
// MetricEmailEventsUnreadable counts events the function could not read.
const (
	MetricEmailEvents           = "EmailEvents"
	MetricEmailEventsUnreadable = "EmailEventsUnreadable"
	DimEventType                = "event_type"
	DimBounceType               = "bounce_type"
)

// Kind is what herald knows of one SES event type, in one place: the name
// in the event record, the EventBridge detail-type, the name an SES event
// destination's MatchingEventTypes uses in CloudFormation, and the level of
// its log line. The template's event destination and rule list the same
// (checked by a test).
type Kind struct {
	Type       EventType
	Record     string // Event.EventType
	DetailType string // EventBridge detail-type
	Matching   string // AWS::SES::ConfigurationSetEventDestination MatchingEventTypes
	Level      slog.Level
	// Object is the member of the record that describes the event (none
	// for Send, whose "send" object is empty).
	Object string
}

// EventTypes are the SES event types herald publishes and logs. Left out:
// Open and Click (they need open and click tracking, which rewrites the
// message's links and adds a tracking pixel) and Subscription (SES list
// management, which herald does not use).
var EventTypes = []Kind{
	{Send, "Send", "Email Sent", "send", slog.LevelInfo, ""},
	{Delivered, "Delivery", "Email Delivered", "delivery", slog.LevelInfo, "delivery"},
	{Bounced, "Bounce", "Email Bounced", "bounce", slog.LevelWarn, "bounce"},
	{Complained, "Complaint", "Email Complaint Received", "complaint", slog.LevelWarn, "complaint"},
	{Rejected, "Reject", "Email Rejected", "reject", slog.LevelWarn, "reject"},
	{RenderingFailed, "Rendering Failure", "Email Rendering Failed", "renderingFailure", slog.LevelWarn, "failure"},
	{DeliveryDelayed, "DeliveryDelay", "Email Delivery Delayed", "deliveryDelay", slog.LevelInfo, "deliveryDelay"},
}

// kindOf returns the Kind of the record's eventType.
func kindOf(record string) (Kind, bool) {
	for _, k := range EventTypes {
		if k.Record == record {
			return k, true
		}
	}
	return Kind{}, false
}
