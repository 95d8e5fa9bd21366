package notification

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of contract v1.
const (
	// MaxRecipients is the most To+Cc+Bcc addresses of one email: the SES v2
	// SendEmail limit of 50 recipients per message.
	MaxRecipients = 50
	// MaxIDLength is the longest notification id.
	MaxIDLength = 128
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
)

// Problem is one reason a body is not a valid message.
type Problem struct {
	// Field is the JSON path of the offending value ("email.to[1]"); empty
	// for the body as a whole.
	Field string
	// Message says what is wrong with it.
	Message string
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
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

// Parse decodes and validates one SQS message body.
//
// It returns the message, or an *InvalidError naming every field that breaks
// the contract: invalid JSON, an unknown version or channel, a missing
// required field, an unknown field, a wrong type, or a value out of its range.
func Parse(body []byte) (*Message, error) {
	var v validator
	m := v.parse(body)
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

type validator struct {
	problems []Problem
	// present holds the members of the channel's object, so that an empty
	// string given is told apart from a field left out, as the schema does.
	present map[string]json.RawMessage
}

func (v *validator) add(field, format string, args ...any) {
	v.problems = append(v.problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

var (
	topFields      = []string{"version", "id", "channel", "created_at", "expires_at", "metadata", "email", "webhook"}
	emailFields    = []string{"from", "to", "cc", "bcc", "reply_to", "subject", "text", "html", "template", "configuration_set", "tags", "headers"}
	webhookFields  = []string{"url", "event_type", "payload", "headers"}
	templateFields = []string{"name", "data"}
)

func (v *validator) parse(body []byte) *Message {
	top, ok := v.object("", body)
	if !ok {
		return nil
	}
	// Version and channel decide which rules apply, so they are checked first.
	if !v.version(top["version"]) {
		return nil
	}
	ch, ok := v.channel(top["channel"])
	if !ok {
		return nil
	}
	v.knownFields("", top, topFields)
	for _, other := range []Channel{ChannelEmail, ChannelWebhook} {
		if _, present := top[string(other)]; present && other != ch {
			v.add(string(other), "not allowed when channel is %q", ch)
		}
	}
	for _, f := range []string{"created_at", "expires_at"} {
		if raw, present := top[f]; present {
			v.timestamp(f, raw)
		}
	}
	v.noNullMembers("metadata", top["metadata"])
	obj, present := top[string(ch)]
	if !present {
		v.add(string(ch), "required when channel is %q", ch)
	} else if fields, ok := v.object(string(ch), obj); ok {
		v.present = fields
		switch ch {
		case ChannelEmail:
			v.knownFields("email", fields, emailFields)
			v.noNullMembers("email.headers", fields["headers"])
			v.noNullMembers("email.tags", fields["tags"])
			if raw, present := fields["template"]; present {
				if tf, ok := v.object("email.template", raw); ok {
					v.knownFields("email.template", tf, templateFields)
				}
			}
		case ChannelWebhook:
			v.knownFields("webhook", fields, webhookFields)
			v.noNullMembers("webhook.headers", fields["headers"])
		}
	}
	if len(v.problems) > 0 {
		return nil
	}

	// version is checked above; json.Number shadows Message.Version so
	// that 1.0 and 1e0, the number 1 in JSON as in the schema, decode too.
	var w struct {
		Message
		Version json.Number `json:"version"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		v.decodeError(err)
		return nil
	}
	m := w.Message
	m.Version = Version
	v.message(&m)
	return &m
}

// object decodes raw as a JSON object, rejecting null members: contract v1
// has no nullable field, and encoding/json would silently accept null.
func (v *validator) object(field string, raw []byte) (map[string]json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			v.add(field, "invalid JSON: %v (at byte %d)", err, syn.Offset)
		case field == "":
			v.add(field, "invalid JSON: the body must be a JSON object")
		default:
			v.add(field, "must be an object")
		}
		return nil, false
	}
	if fields == nil { // the literal null
		v.add(field, "must be an object")
		return nil, false
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if bytes.Equal(bytes.TrimSpace(fields[k]), []byte("null")) {
			v.add(join(field, k), "must not be null")
		}
	}
	return fields, true
}

// noNullMembers flags null values in a string map, which encoding/json
// would turn into empty strings.
func (v *validator) noNullMembers(field string, raw json.RawMessage) {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return // not an object: the typed decode names it
	}
	for _, k := range slices.Sorted(maps.Keys(members)) {
		if bytes.Equal(bytes.TrimSpace(members[k]), []byte("null")) {
			v.add(field+"."+k, "must be a string, not null")
		}
	}
}

func (v *validator) version(raw json.RawMessage) bool {
	if raw == nil {
		v.add("version", "required (want %d)", Version)
		return false
	}
	var n any
	if err := json.Unmarshal(raw, &n); err != nil {
		v.add("version", "must be the number %d", Version)
		return false
	}
	f, ok := n.(float64)
	if !ok {
		v.add("version", "must be the number %d", Version)
		return false
	}
	if f != Version {
		v.add("version", "unsupported version %s (this function reads version %d)", bytes.TrimSpace(raw), Version)
		return false
	}
	return true
}

func (v *validator) channel(raw json.RawMessage) (Channel, bool) {
	if raw == nil {
		v.add("channel", `required ("email" or "webhook")`)
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		v.add("channel", `must be a string ("email" or "webhook")`)
		return "", false
	}
	switch ch := Channel(s); ch {
	case ChannelEmail, ChannelWebhook:
		return ch, true
	}
	v.add("channel", `unknown channel %q (want "email" or "webhook")`, s)
	return "", false
}

func (v *validator) knownFields(prefix string, fields map[string]json.RawMessage, known []string) {
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !contains(known, k) {
			v.add(join(prefix, k), "unknown field")
		}
	}
}

func (v *validator) timestamp(field string, raw json.RawMessage) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		v.add(field, "must be an RFC 3339 timestamp string")
		return
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil || !rfc3339Pattern.MatchString(s) {
		v.add(field, "must be an RFC 3339 timestamp like 2026-11-30T09:15:00Z")
	}
}

// decodeError turns encoding/json's type errors into a Problem naming the field.
func (v *validator) decodeError(err error) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		v.add(strings.TrimPrefix(te.Field, "Message."), "must be %s, not a JSON %s", jsonKind(te.Type.Kind().String()), te.Value)
		return
	}
	v.add("", "%v", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	case "string":
		return "a string"
	case "int", "int64", "float64":
		return "a number"
	case "bool":
		return "a boolean"
	}
	return "of another type"
}

func (v *validator) message(m *Message) {
	if m.ID == "" {
		v.add("id", "required: 1–%d characters of A-Z a-z 0-9 . _ : -", MaxIDLength)
	} else if !idPattern.MatchString(m.ID) {
		v.add("id", "must be 1–%d characters of A-Z a-z 0-9 . _ : -", MaxIDLength)
	}
	switch m.Channel {
	case ChannelEmail:
		v.email(m.Email)
	case ChannelWebhook:
		v.webhook(m.Webhook)
	}
}

func (v *validator) email(e *Email) {
	if v.has("from") {
		v.mailbox("email.from", e.From)
	}
	for _, list := range []struct {
		field string
		addrs []string
	}{{"email.to", e.To}, {"email.cc", e.Cc}, {"email.bcc", e.Bcc}, {"email.reply_to", e.ReplyTo}} {
		for i, a := range list.addrs {
			v.mailbox(fmt.Sprintf("%s[%d]", list.field, i), a)
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
		}{{"subject", v.has("subject")}, {"text", v.has("text")}, {"html", v.has("html")}} {
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
	if v.has("configuration_set") && !templateNamePattern.MatchString(e.ConfigurationSet) {
		v.add("email.configuration_set", "must be 1–64 characters of A-Z a-z 0-9 _ -")
	}
	for _, k := range slices.Sorted(maps.Keys(e.Tags)) {
		if !tagPattern.MatchString(k) || !tagPattern.MatchString(e.Tags[k]) {
			v.add("email.tags."+k, "tag names and values must be 1–256 characters of A-Z a-z 0-9 _ -")
		}
	}
	v.headers("email.headers", e.Headers, emailHeaderNamePattern, emailHeaderValuePattern)
	for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
		if emailHeaderNamePattern.MatchString(k) && !safeEmailHeader.MatchString(k) {
			v.add("email.headers."+k, "not a header a producer may set (allowed: X-*, List-*, In-Reply-To, References, Auto-Submitted, Precedence, Keywords, Comments, Importance, Priority)")
		}
	}
}

func (v *validator) mailbox(field, s string) {
	if strings.ContainsAny(s, "\r\n") {
		v.add(field, "must not contain CR or LF")
		return
	}
	if hiddenPattern.MatchString(s) {
		v.add(field, "must not contain control or invisible formatting characters")
		return
	}
	if _, err := mail.ParseAddress(s); err != nil {
		v.add(field, "not an RFC 5322 mailbox: %v", err)
	}
}

func (v *validator) headers(field string, h map[string]string, name, value *regexp.Regexp) {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		switch {
		case !name.MatchString(k):
			v.add(field+"."+k, "not a valid header name")
		case strings.ContainsAny(h[k], "\r\n"):
			v.add(field+"."+k, "must not contain CR or LF")
		case !value.MatchString(h[k]):
			v.add(field+"."+k, "not a valid header value (printable characters only)")
		}
	}
}

func (v *validator) webhook(w *Webhook) {
	if w.URL == "" {
		v.add("webhook.url", "required: an absolute https URL")
	} else if u, err := url.Parse(w.URL); err != nil || !(strings.HasPrefix(w.URL, "https://") || strings.HasPrefix(w.URL, "http://")) || u.Hostname() == "" {
		v.add("webhook.url", "must be an absolute https URL with a host (http only where the function allows it for local testing)")
	} else if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			v.add("webhook.url", "port must be from 1 to 65535")
		}
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

func (v *validator) has(field string) bool {
	_, ok := v.present[field]
	return ok
}

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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// IDOf returns the id of a body that may be invalid, when the body is a JSON
// object whose "id" is a valid id, so that the reason and logs of an invalid
// message still name it; it returns "" otherwise.
func IDOf(body []byte) string {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &probe) != nil {
		return ""
	}
	var id string
	if json.Unmarshal(probe.ID, &id) != nil || !idPattern.MatchString(id) {
		return ""
	}
	return id
}
