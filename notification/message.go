package notification

import (
	"encoding/json"
	"time"
)

// Version is the contract version this package reads and writes.
const Version = 1

// Channel names how a notification is delivered.
type Channel string

// The channels of contract v1.
const (
	ChannelEmail   Channel = "email"
	ChannelWebhook Channel = "webhook"
	// ChannelChat is a message to a chat service's incoming webhook (Slack,
	// Discord, Microsoft Teams): see [Chat].
	ChannelChat Channel = "chat"
	// ChannelEvent is an event for a tenant's registered endpoints: herald
	// fans it out to one delivery per subscribed endpoint (see [Event]).
	ChannelEvent Channel = "event"
)

// Channels are the channels of contract v1, in the order the contract lists
// them: the one list that the parser, the schema test, the dead-letter tools
// and a router by channel read.
var Channels = []Channel{ChannelEmail, ChannelWebhook, ChannelChat, ChannelEvent}

// Known reports whether c is a channel of contract v1.
func (c Channel) Known() bool {
	for _, k := range Channels {
		if c == k {
			return true
		}
	}
	return false
}

// Message is one notification: one SQS message body.
//
// Exactly one of Email, Webhook, Chat and Event is set, the one that Channel
// names.
type Message struct {
	// Version is the contract version; always 1 ([Version]).
	Version int `json:"version"`
	// ID is chosen by the producer and is stable across retries: it is the
	// idempotency key (the webhook-id header, the SES email tag herald-id).
	// 1–128 characters of A-Z a-z 0-9 . _ : -
	ID string `json:"id"`
	// Channel is "email", "webhook", "chat" or "event".
	Channel Channel `json:"channel"`
	// CreatedAt is when the producer created the notification (RFC 3339). Optional.
	CreatedAt *time.Time `json:"created_at,omitempty"`
	// ExpiresAt is the time after which the notification must not be sent
	// (RFC 3339): it is dropped, not dead-lettered. Optional.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Metadata is logged with every failure of the notification (with every
	// outcome at log level DEBUG). Optional; at most MaxMetadataEntries
	// members, names of MaxMetadataKeyChars and values of
	// MaxMetadataValueChars characters.
	Metadata map[string]string `json:"metadata,omitempty"`

	// Tenant and EventID are set on a delivery that herald's fan-out made
	// from an event (the event's tenant and id), so that dead letters and
	// logs can be found by tenant and event. Producers leave them out.
	Tenant  string `json:"tenant,omitempty"`
	EventID string `json:"event_id,omitempty"`

	Email   *Email   `json:"email,omitempty"`
	Webhook *Webhook `json:"webhook,omitempty"`
	Chat    *Chat    `json:"chat,omitempty"`
	Event   *Event   `json:"event,omitempty"`
}

// Event is something that happened for a tenant: herald delivers it to each
// of the tenant's enabled endpoints whose event-type filter matches Type.
type Event struct {
	// Tenant is the application's customer id the event belongs to.
	Tenant string `json:"tenant"`
	// Type is the event type, for example "invoice.paid".
	Type string `json:"type"`
	// Payload is any JSON value; it becomes the "data" of each webhook body.
	Payload json.RawMessage `json:"payload"`
	// Endpoint, when set, sends the event to that one endpoint of the
	// tenant whatever its filter (a test event). Optional.
	Endpoint string `json:"endpoint,omitempty"`
}

// Email is an email sent through Amazon SES v2 SendEmail.
//
// Mailboxes are RFC 5322 mailboxes ("Name <addr@example.com>" or
// "addr@example.com"). Either Subject with Text and/or HTML, or Template, is set.
type Email struct {
	// From is the sender; optional when the function has a default sender
	// (HERALD_EMAIL_DEFAULT_FROM). Its address must be a verified SES identity.
	From    string   `json:"from,omitempty"`
	To      []string `json:"to,omitempty"`
	Cc      []string `json:"cc,omitempty"`
	Bcc     []string `json:"bcc,omitempty"`
	ReplyTo []string `json:"reply_to,omitempty"`
	Subject string   `json:"subject,omitempty"`
	Text    string   `json:"text,omitempty"`
	HTML    string   `json:"html,omitempty"`
	// Template names a stored SES email template and its data, instead of
	// Subject, Text and HTML.
	Template *Template `json:"template,omitempty"`
	// ConfigurationSet overrides the function's default SES configuration set.
	ConfigurationSet string `json:"configuration_set,omitempty"`
	// Tags become SES message tags (name → value).
	Tags map[string]string `json:"tags,omitempty"`
	// Headers are extra email headers (name → value).
	Headers map[string]string `json:"headers,omitempty"`
}

// Template is a stored SES email template and the data it is rendered with.
type Template struct {
	Name string `json:"name"`
	// Data is a JSON object.
	Data json.RawMessage `json:"data,omitempty"`
}

// Webhook is an HTTPS POST signed per the Standard Webhooks specification.
type Webhook struct {
	// URL is an absolute https URL. Exactly one of URL and Endpoint is set.
	URL string `json:"url,omitempty"`
	// Endpoint is a registered endpoint's id (ep_…): herald reads its URL,
	// signing secret and headers from the endpoint store.
	Endpoint string `json:"endpoint,omitempty"`
	// EventType becomes the "type" of the posted body.
	EventType string `json:"event_type"`
	// Payload is any JSON value; it becomes the "data" of the posted body.
	Payload json.RawMessage `json:"payload"`
	// Headers are extra request headers (name → value).
	Headers map[string]string `json:"headers,omitempty"`
}

// Recipients returns the number of To, Cc and Bcc addresses.
func (e *Email) Recipients() int { return len(e.To) + len(e.Cc) + len(e.Bcc) }

// Expired reports whether m has an ExpiresAt at or before now.
func (m *Message) Expired(now time.Time) bool {
	return m.ExpiresAt != nil && !now.Before(*m.ExpiresAt)
}
