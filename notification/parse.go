package notification

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of contract v1.
const (
	// MaxRecipients is the most To+Cc+Bcc addresses of one email: the SES v2
	// SendEmail limit of 50 recipients per message.
	MaxRecipients = 50
	// MaxIDLength is the longest notification id.
	MaxIDLength = 128
	// MaxEventTypeChars is the longest event type (event.type).
	MaxEventTypeChars = 128
	// MaxSubjectLength is the longest subject, in characters: the line
	// length limit of RFC 5322 §2.1.1.
	MaxSubjectLength = 998
	// MaxMessageBytes bounds a whole notification message as SQS counts it:
	// the body plus its message attributes' names, types and values. It is
	// the SQS maximum message size of 1 MiB (1,048,576 bytes, the
	// MaximumMessageSize of both of herald's queues) less 16 KiB kept for
	// the reason a dead letter carries beside the original, so that a
	// message that fails still fits in the dead-letter queue with its reason
	// (docs/delivery.md, "Message size"). The deliver function dead-letters
	// a larger one, unattempted, as message_too_large.
	MaxMessageBytes = SQSMaxMessageBytes - DeadLetterReserveBytes
	// SQSMaxMessageBytes is the largest message SQS and the SQS event source
	// mapping carry (1 MiB since 2026; the queues' MaximumMessageSize).
	SQSMaxMessageBytes = 1 << 20
	// DeadLetterReserveBytes is the room a dead letter keeps beside the
	// original for herald.reason and herald.error_class (docs/delivery.md).
	DeadLetterReserveBytes = 16 << 10
	// MaxBodyBytes bounds each of email.text, email.html and webhook.payload
	// (bytes): 960 KiB, leaving 48 KiB of MaxMessageBytes for the rest of
	// the message. Fields share MaxMessageBytes.
	MaxBodyBytes = 960 << 10
	// MaxMetadataEntries, MaxMetadataKeyChars and MaxMetadataValueChars
	// bound metadata: at most 16 members, names of at most 64 characters,
	// values of at most 256 (Unicode code points, as the JSON Schema's
	// maxLength counts), none of them control or invisible formatting
	// characters (hiddenChars). Metadata is written into the deliver
	// function's log line of every failure (and of every outcome at
	// DEBUG), which CloudWatch Logs bills per byte ingested: these keep it
	// to 5 KiB of ASCII a line, 20 KiB at worst (every character 4 bytes
	// of UTF-8; only " and \ are escaped, to 2 bytes), room for ids a
	// producer correlates with (tenant, request, trace), not for data,
	// which belongs in the payload. Like
	// SES message tags (256 characters) and Stripe's metadata (keys of 40,
	// values of 500 characters), they bound each entry and the count.
	// MaxHostChars bounds the host of a webhook's or chat webhook's URL:
	// a domain name is at most 253 characters in text form (RFC 1035
	// §2.3.4, RFC 1123 §2.1), so a longer host never resolves; counted in
	// Unicode code points, as the JSON Schema's pattern counts them. It
	// also bounds the key herald keeps the origin's health under (DynamoDB
	// refuses a partition key over 2,048 bytes).
	MaxHostChars          = 253
	MaxMetadataEntries    = 16
	MaxMetadataKeyChars   = 64
	MaxMetadataValueChars = 256
)

// hiddenChars are characters that change how text reads without showing:
// C0 and C1 controls, DEL, and the Unicode format characters used to hide
// or reorder text (zero-width spaces and joiners, bidirectional controls,
// the word joiner, the byte order mark).
const hiddenChars = `\x00-\x1f\x7f-\x9f\x{200B}-\x{200F}\x{202A}-\x{202E}\x{2060}-\x{2064}\x{2066}-\x{2069}\x{FEFF}`

var (
	hiddenPattern = regexp.MustCompile("[" + hiddenChars + "]")
	// safeEmailHeader is the set of custom email headers a producer may
	// set: extension headers (X-*), list headers (RFC 2369, RFC 8058),
	// threading (RFC 5322 §3.6.4) and auto-reply hints (RFC 3834). Headers
	// that name recipients or senders, or shape the MIME structure, are
	// herald's and SES's to write.
	safeEmailHeader = regexp.MustCompile(`(?i)^(X-[A-Za-z0-9-]+|List-(Unsubscribe|Unsubscribe-Post|Id|Help|Owner|Subscribe|Archive|Post)|In-Reply-To|References|Auto-Submitted|Precedence|Keywords|Comments|Importance|Priority)$`)
)

var (
	idPattern           = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	templateNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)  // SES template name rule
	tagPattern          = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`) // SES message tag name and value rule
	// Email headers: RFC 5322 §2.2 field names; SES v2 MessageHeader allows
	// names of 1–126 and values of 1–870 printable ASCII characters.
	emailHeaderNamePattern  = regexp.MustCompile(`^[!-9;-~]{1,126}$`)
	emailHeaderValuePattern = regexp.MustCompile(`^[ -~]{1,870}$`)
	// Webhook headers: RFC 9110 §5.1 token names; values of visible
	// characters, spaces and tabs (§5.5), no control characters.
	webhookHeaderNamePattern  = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
	webhookHeaderValuePattern = regexp.MustCompile(`^[^\x00-\x08\x0a-\x1f\x7f]*$`)
	// rfc3339Pattern is RFC 3339 §5.6 date-time; time.Parse alone also
	// takes one-digit hours.
	rfc3339Pattern   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)
	eventTypePattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`) // dotted names like invoice.paid
	// eventNamePattern is an event's type (event.type): the alphabet of an
	// endpoint's event-type filter, whose entries may end in ".*", so no
	// ":" or "*" (docs/contract.md "Events").
	eventNamePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	// endpointIDPattern is a registered endpoint's id: "ep_" and a ULID in
	// lower-case Crockford base32 (26 characters, the first 0–7: a ULID's
	// 128 bits), as package endpoint makes them.
	endpointIDPattern = regexp.MustCompile(`^ep_[0-7][0-9a-hjkmnp-tv-z]{25}$`)
	// mailQuoted is a Go-quoted text of two or more characters in a net/mail
	// error ("expected single address, got %q"): the part of the address
	// it could not read, which a problem (logged, and kept in the dead
	// letter's reason) must not repeat.
	mailQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.){2,}"|'(?:[^'\\]|\\.){2,}'`)
)

// Problem is one reason a body is not a valid message.
type Problem struct {
	// Field is the JSON path of the offending value ("email.to[1]"); empty
	// for the body as a whole.
	Field string
	// Message says what is wrong with it.
	Message string
	// logField is Field as the problem's text writes it, when it differs:
	// with every member name that holds an "@" written "<address>".
	logField string
}

// String is the problem as "field: message". The text is logged and kept in
// a dead letter's reason, so a member name of the body that holds an "@" (a
// payload keyed by email address) is written "<address>" in it; Field keeps
// the exact path.
func (p Problem) String() string {
	field := p.Field
	if p.logField != "" {
		field = p.logField
	}
	if field == "" {
		return p.Message
	}
	return field + ": " + p.Message
}

// nameProblem is the problem msg of the member name of the object at path
// prefix.
func nameProblem(prefix, name, msg string) Problem {
	p := Problem{Field: join(prefix, name), Message: msg}
	if logName := logSafe(name); logName != name {
		p.logField = join(prefix, logName)
	}
	return p
}

// logSafe returns s, a text taken from the body, or "<address>" when it
// holds an "@": an email address must not reach the logs.
func logSafe(s string) string {
	if strings.Contains(s, "@") {
		return "<address>"
	}
	return s
}

// InvalidError reports why a body is not a valid contract v1 message. A
// message with an InvalidError can never be delivered: it is a permanent
// failure.
type InvalidError struct {
	Problems []Problem
}

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "invalid message: " + strings.Join(parts, "; ")
}

// ValidTenant reports whether s is a tenant id (event.tenant, tenant): 1–128
// characters of A-Z a-z 0-9 . _ : - (a notification id's alphabet).
func ValidTenant(s string) bool { return idPattern.MatchString(s) }

// ValidEventType reports whether s is an event's type (event.type): 1–128
// characters of A-Z a-z 0-9 . _ - such as "invoice.paid".
func ValidEventType(s string) bool { return eventNamePattern.MatchString(s) }

// ValidEndpointID reports whether s is a registered endpoint's id
// (event.endpoint, webhook.endpoint, chat.endpoint): "ep_" and 26
// characters of lower-case Crockford base32, the first 0–7.
func ValidEndpointID(s string) bool { return endpointIDPattern.MatchString(s) }

// ValidWebhookHeaderName reports whether name may name a webhook header
// (webhook.headers): an RFC 9110 §5.6.2 token of 1–128 bytes.
func ValidWebhookHeaderName(name string) bool { return webhookHeaderNamePattern.MatchString(name) }

// ValidWebhookHeaderValue reports whether value may be a webhook header's
// value (webhook.headers): no control character but tab (RFC 9110 §5.5).
func ValidWebhookHeaderValue(value string) bool { return webhookHeaderValuePattern.MatchString(value) }

// Parse decodes and validates one SQS message body, in one pass over it.
//
// It returns the message, or an *InvalidError naming every field that breaks
// the contract: invalid JSON (including a member name given twice in one
// object, at any depth), an unknown version or channel, a missing required
// field, an unknown field (names match exactly, case included), a null, a
// wrong type, or a value out of its range. The message does not share memory
// with body.
func Parse(body []byte) (*Message, error) {
	var v validator
	m := decode(body, &v)
	if len(v.problems) > 0 {
		return nil, &InvalidError{Problems: v.problems}
	}
	return m, nil
}

// Validate checks a message built in Go against the same rules as [Parse].
func (m *Message) Validate() error {
	body, err := json.Marshal(m)
	if err != nil {
		return &InvalidError{Problems: []Problem{{Message: err.Error()}}}
	}
	_, err = Parse(body)
	return err
}

// validator checks the values of a decoded message (the structure is
// checked while decoding, in decode.go).
type validator struct {
	problems []Problem
	// email holds which members the email object has (emailFrom | …), so
	// that an empty string given is told apart from a field left out, as
	// the schema does.
	emailMembers uint16
}

func (v *validator) add(field, format string, args ...any) {
	v.problems = append(v.problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) message(m *Message) {
	if m.ID == "" {
		v.add("id", "required: 1–%d characters of A-Z a-z 0-9 . _ : -", MaxIDLength)
	} else if !idPattern.MatchString(m.ID) {
		v.add("id", "must be 1–%d characters of A-Z a-z 0-9 . _ : -", MaxIDLength)
	}
	if n := len(m.Metadata); n > MaxMetadataEntries {
		v.add("metadata", "%d members; at most %d", n, MaxMetadataEntries)
	}
	longest, hidden := 0, false // a bad name is not echoed: it could be anything
	for k := range m.Metadata {
		longest = max(longest, utf8.RuneCountInString(k))
		hidden = hidden || hiddenPattern.MatchString(k)
	}
	if longest > MaxMetadataKeyChars {
		v.add("metadata", "a member name of %d characters; at most %d", longest, MaxMetadataKeyChars)
	}
	if hidden {
		v.add("metadata", "a member name with control or invisible formatting characters")
	}
	v.members("metadata", m.Metadata, func(k, val string) string {
		if utf8.RuneCountInString(k) > MaxMetadataKeyChars || hiddenPattern.MatchString(k) {
			return ""
		}
		if n := utf8.RuneCountInString(val); n > MaxMetadataValueChars {
			return fmt.Sprintf("%d characters; at most %d", n, MaxMetadataValueChars)
		}
		if hiddenPattern.MatchString(val) {
			return "must not contain control or invisible formatting characters"
		}
		return ""
	})
	switch m.Channel {
	case ChannelEmail:
		v.email(m.Email)
	case ChannelWebhook:
		v.webhook(m.Webhook)
	case ChannelChat:
		v.chat(m.Chat)
	case ChannelEvent:
		v.event(m.Event)
	}
	v.delivery(m)
}

// delivery checks tenant and event_id, which only a delivery to a
// registered endpoint carries (the fan-out writes them): tenant is then
// required, so that the deliver function can check that the endpoint is
// the tenant's.
func (v *validator) delivery(m *Message) {
	toEndpoint := m.Webhook != nil && m.Webhook.Endpoint != "" || m.Chat != nil && m.Chat.Endpoint != ""
	if !toEndpoint {
		for _, f := range []struct{ name, value string }{{"tenant", m.Tenant}, {"event_id", m.EventID}} {
			if f.value != "" {
				v.add(f.name, "only on a delivery to a registered endpoint (%s.endpoint)", channelField(m.Channel))
			}
		}
		return
	}
	if m.Tenant == "" {
		v.add("tenant", "required with %s.endpoint: the endpoint's tenant, 1–%d characters of A-Z a-z 0-9 . _ : -", m.Channel, MaxIDLength)
	} else if !ValidTenant(m.Tenant) {
		v.add("tenant", "must be 1–%d characters of A-Z a-z 0-9 . _ : -", MaxIDLength)
	}
	if m.EventID != "" && !idPattern.MatchString(m.EventID) {
		v.add("event_id", "must be 1–%d characters of A-Z a-z 0-9 . _ : -", MaxIDLength)
	}
}

// channelField is the member that names an endpoint on channel c's
// deliveries: "webhook" or "chat" ("webhook or chat" for another channel).
func channelField(c Channel) string {
	if c == ChannelWebhook || c == ChannelChat {
		return string(c)
	}
	return "webhook or chat"
}

// event checks an event (channel "event").
func (v *validator) event(e *Event) {
	if e.Tenant == "" {
		v.add("event.tenant", "required: the tenant's id, 1–%d characters of A-Z a-z 0-9 . _ : -", MaxIDLength)
	} else if !ValidTenant(e.Tenant) {
		v.add("event.tenant", "must be 1–%d characters of A-Z a-z 0-9 . _ : -", MaxIDLength)
	}
	if e.Type == "" {
		v.add("event.type", "required: 1–%d characters of A-Z a-z 0-9 . _ - such as invoice.paid", MaxEventTypeChars)
	} else if !ValidEventType(e.Type) {
		v.add("event.type", "must be 1–%d characters of A-Z a-z 0-9 . _ - such as invoice.paid", MaxEventTypeChars)
	}
	if len(e.Payload) == 0 {
		v.add("event.payload", "required (any JSON value)")
	} else if len(e.Payload) > MaxBodyBytes {
		v.add("event.payload", "%d bytes; at most %d", len(e.Payload), MaxBodyBytes)
	}
	if e.Endpoint != "" && !ValidEndpointID(e.Endpoint) {
		v.add("event.endpoint", "must be an endpoint id: ep_ and 26 characters of lower-case Crockford base32")
	}
}

// endpointRef checks the endpoint id of field ("webhook.endpoint").
func (v *validator) endpointRef(field, id string) {
	if !ValidEndpointID(id) {
		v.add(field, "must be an endpoint id: ep_ and 26 characters of lower-case Crockford base32")
	}
}

func (v *validator) email(e *Email) {
	if v.has(emailFrom) {
		v.mailbox("email.from", -1, e.From)
	}
	for _, list := range []struct {
		field string
		addrs []string
	}{{"email.to", e.To}, {"email.cc", e.Cc}, {"email.bcc", e.Bcc}, {"email.reply_to", e.ReplyTo}} {
		for i, a := range list.addrs {
			v.mailbox(list.field, i, a)
		}
	}
	switch n := e.Recipients(); {
	case n == 0:
		v.add("email.to", "at least one recipient is required in to, cc or bcc")
	case n > MaxRecipients:
		v.add("email.to", "%d recipients in to, cc and bcc; SES allows at most %d", n, MaxRecipients)
	}

	if e.Template != nil {
		for _, f := range []struct {
			name string
			set  bool
		}{{"subject", v.has(emailSubject)}, {"text", v.has(emailText)}, {"html", v.has(emailHTML)}} {
			if f.set {
				v.add("email."+f.name, "not allowed with email.template")
			}
		}
		if !templateNamePattern.MatchString(e.Template.Name) {
			v.add("email.template.name", "required: 1–64 characters of A-Z a-z 0-9 _ -")
		}
		if len(e.Template.Data) > 0 && !isObject(e.Template.Data) {
			v.add("email.template.data", "must be an object")
		}
	} else {
		if e.Subject == "" {
			v.add("email.subject", "required unless email.template is given")
		} else if strings.ContainsAny(e.Subject, "\r\n") {
			v.add("email.subject", "must not contain CR or LF")
		} else if hiddenPattern.MatchString(e.Subject) {
			v.add("email.subject", "must not contain control or invisible formatting characters")
		} else if n := utf8.RuneCountInString(e.Subject); n > MaxSubjectLength {
			v.add("email.subject", "%d characters; at most %d", n, MaxSubjectLength)
		}
		if e.Text == "" && e.HTML == "" {
			v.add("email.text", "email.text or email.html is required unless email.template is given")
		}
		for _, b := range []struct{ field, s string }{{"email.text", e.Text}, {"email.html", e.HTML}} {
			if len(b.s) > MaxBodyBytes {
				v.add(b.field, "%d bytes; at most %d", len(b.s), MaxBodyBytes)
			}
		}
	}
	if v.has(emailConfigurationSet) && !templateNamePattern.MatchString(e.ConfigurationSet) {
		v.add("email.configuration_set", "must be 1–64 characters of A-Z a-z 0-9 _ -")
	}
	v.members("email.tags", e.Tags, func(k, val string) string {
		if !tagPattern.MatchString(k) || !tagPattern.MatchString(val) {
			return "tag names and values must be 1–256 characters of A-Z a-z 0-9 _ -"
		}
		return ""
	})
	v.headers("email.headers", e.Headers, emailHeaderNamePattern, emailHeaderValuePattern)
	v.members("email.headers", e.Headers, func(k, _ string) string {
		if emailHeaderNamePattern.MatchString(k) && !safeEmailHeader.MatchString(k) {
			return "not a header a producer may set (allowed: X-*, List-*, In-Reply-To, References, Auto-Submitted, Precedence, Keywords, Comments, Importance, Priority)"
		}
		return ""
	})
}

// members checks each member of the object m of field; check returns what
// is wrong with a member, or "". Problems are reported in the order of the
// members' names.
func (v *validator) members(field string, m map[string]string, check func(name, value string) string) {
	start := len(v.problems)
	for k, val := range m {
		if msg := check(k, val); msg != "" {
			v.problems = append(v.problems, nameProblem(field, k, msg))
		}
	}
	slices.SortFunc(v.problems[start:], func(a, b Problem) int { return strings.Compare(a.Field, b.Field) })
}

// mailbox checks the mailbox s of field, or of its element i when i ≥ 0.
func (v *validator) mailbox(field string, i int, s string) {
	var msg string
	if strings.ContainsAny(s, "\r\n") {
		msg = "must not contain CR or LF"
	} else if hiddenPattern.MatchString(s) {
		msg = "must not contain control or invisible formatting characters"
	} else if _, err := mail.ParseAddress(s); err != nil {
		msg = "not an RFC 5322 mailbox: " + mailQuoted.ReplaceAllString(err.Error(), `"…"`)
	} else {
		return
	}
	if i >= 0 {
		field += "[" + strconv.Itoa(i) + "]"
	}
	v.problems = append(v.problems, Problem{Field: field, Message: msg})
}

// headers checks the header names and values of field. Header names are
// case-insensitive (RFC 5322 §1.2.2, RFC 9110 §5.1): two names that differ
// only in case would leave it to the sender which value goes out, so the
// second of them in sorted order is a problem.
func (v *validator) headers(field string, h map[string]string, name, value *regexp.Regexp) {
	v.members(field, h, func(k, val string) string {
		switch {
		case !name.MatchString(k):
			return "not a valid header name"
		case sameHeader(h, k) != "":
			return fmt.Sprintf("the same header as %q (header names are case-insensitive)", sameHeader(h, k))
		case strings.ContainsAny(val, "\r\n"):
			return "must not contain CR or LF"
		case !value.MatchString(val):
			return "not a valid header value (printable characters only)"
		}
		return ""
	})
}

func (v *validator) webhook(w *Webhook) {
	switch {
	case w.URL != "" && w.Endpoint != "":
		v.add("webhook.endpoint", "not allowed with webhook.url: give one of them")
	case w.Endpoint != "":
		v.endpointRef("webhook.endpoint", w.Endpoint)
		if len(w.Headers) > 0 {
			v.add("webhook.headers", "not allowed with webhook.endpoint: the endpoint's headers are stored with it")
		}
	case w.URL == "":
		v.add("webhook.url", "required: an absolute https URL (or webhook.endpoint, a registered endpoint's id)")
	}
	if w.URL != "" {
		v.webhookURL(w.URL)
	}
	if w.EventType == "" {
		v.add("webhook.event_type", "required")
	} else if !eventTypePattern.MatchString(w.EventType) {
		v.add("webhook.event_type", "must be 1–128 characters of A-Z a-z 0-9 . _ : -")
	}
	if len(w.Payload) > MaxBodyBytes {
		v.add("webhook.payload", "%d bytes; at most %d", len(w.Payload), MaxBodyBytes)
	}
	if len(w.Payload) == 0 {
		v.add("webhook.payload", "required (any JSON value)")
	}
	v.headers("webhook.headers", w.Headers, webhookHeaderNamePattern, webhookHeaderValuePattern)
}

// webhookURL checks webhook.url, given.
func (v *validator) webhookURL(raw string) {
	if u, err := url.Parse(raw); err != nil || !(strings.HasPrefix(raw, "https://") || strings.HasPrefix(raw, "http://")) || u.Hostname() == "" {
		v.add("webhook.url", "must be an absolute https URL with a host (http only where the function allows it for local testing)")
	} else if n := utf8.RuneCountInString(u.Hostname()); n > MaxHostChars {
		v.add("webhook.url", "a host of %d characters; at most %d", n, MaxHostChars)
	} else if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			v.add("webhook.url", "port must be from 1 to 65535")
		}
	}
}

// sameHeader returns a name of h before name in sorted order that differs
// from it only in case, or "".
func sameHeader(h map[string]string, name string) string {
	same := ""
	for k := range h {
		if k < name && strings.EqualFold(k, name) && (same == "" || k < same) {
			same = k
		}
	}
	return same
}

func (v *validator) has(member uint16) bool { return v.emailMembers&member != 0 }

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}
