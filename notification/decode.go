package notification

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The body is read once, token by token, with jsontext (the tokenizer of
// encoding/json/v2, which Go 1.27 ships in the standard library; the
// go-json-experiment module is the same code and aliases it there). The walk
// fills a Message and notes every structural fact the contract checks: which
// members are present, null or unknown, and the first value of a wrong type.
// [decoder.problems] then reports them in the order the checks are documented
// (docs/contract.md), so that a body breaking several rules gives the same
// reason whatever the order of its members.
//
// Two rules come from the tokenizer itself: a body that is not one JSON value
// is invalid JSON, and so is an object that names a member twice (RFC 7493
// §2.3) at any depth, payload and template data included; the names are
// compared after unescaping, so "a" and "\u0061" are the same name. Member
// names are matched exactly: "ID" is not "id" (encoding/json would match it
// case-insensitively).
//
// Invalid UTF-8 in a string is read as U+FFFD, as encoding/json does, also
// in the payload and template data kept as raw JSON.

// decodeOptions are the tokenizer's options: duplicate names are errors (the
// default), invalid UTF-8 is replaced, not rejected.
var decodeOptions = jsontext.AllowInvalidUTF8(true)

// msgDuplicateName is the problem of a member named twice in one object.
const msgDuplicateName = "duplicate member name: a JSON object may name a member only once (RFC 7493 §2.3; parsers disagree about which value wins)"

// Members of the contract's objects, matched exactly.
const (
	fieldUnknown = iota
	fieldVersion
	fieldID
	fieldChannel
	fieldCreatedAt
	fieldExpiresAt
	fieldMetadata
	fieldEmail
	fieldWebhook
	fieldChat
	fieldEvent
	fieldTenant
	fieldEventID
)

// Members of email, as bits of emailObject.present.
const (
	emailFrom = 1 << iota
	emailTo
	emailCc
	emailBcc
	emailReplyTo
	emailSubject
	emailText
	emailHTML
	emailTemplate
	emailConfigurationSet
	emailTags
	emailHeaders
)

// object holds the structural facts of one contract object.
type object struct {
	present   bool
	notObject bool     // present, but not an object (null included)
	nulls     []string // members whose value is null
	unknown   []string // members the contract does not define
}

// emailFacts are the facts of the email object beyond its own members.
type emailFacts struct {
	object
	present     uint16 // emailFrom | emailTo | …
	headerNulls []string
	tagNulls    []string
	template    object
}

type webhookFacts struct {
	object
	headerNulls []string
}

// decoder reads one body. Decoders are pooled, keeping the tokenizer's
// buffers; a decoder holds no reference to a body between calls.
type decoder struct {
	in      bytes.Buffer
	tok     jsontext.Decoder
	scratch []byte // unescaped strings
	facts
}

// facts are what one walk over a body finds.
type facts struct {
	err error // the first tokenizer error: invalid JSON or a duplicate name

	msg Message

	top        object // nulls and unknown members of the body
	hasVersion bool
	version    string // problem with version, if any
	hasChannel bool
	channel    string // problem with channel, if any
	created    string // problem with created_at, if any
	expires    string // problem with expires_at, if any
	metaNulls  []string
	email      emailFacts
	webhook    webhookFacts
	chat       object
	event      object
	// blank are the id fields given as "" (tenant, event_id, the endpoint
	// references), which a Go struct cannot tell from left out.
	blank       []string
	typeProblem *Problem // the first value of a wrong type, in body order
	timeErr     error    // a timestamp encoding/json's time.Time rejects
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// decode reads body and reports its problems to v. It returns the message
// when there are none.
func decode(body []byte, v *validator) *Message {
	d := decoders.Get().(*decoder)
	defer func() {
		d.in = bytes.Buffer{}
		d.tok.Reset(&d.in)
		d.facts = facts{}
		if cap(d.scratch) > 64<<10 {
			d.scratch = nil // pin no large text in the pool
		}
		decoders.Put(d)
	}()
	d.in = *bytes.NewBuffer(body)
	d.tok.Reset(&d.in, decodeOptions)
	d.body()
	if d.err != nil {
		v.problems = append(v.problems, tokenizerProblem(body, d.err))
		return nil
	}
	if !d.problems(v) {
		return nil
	}
	m := new(Message)
	*m = d.msg
	m.Version = Version
	v.emailMembers = d.email.present
	v.message(m)
	for _, f := range d.blank {
		v.add(f, "must not be empty (leave it out)")
	}
	return m
}

// tokenizerProblem explains a tokenizer error. A body encoding/json cannot
// read is reported as encoding/json reports it; otherwise the body is valid
// JSON that names a member twice.
func tokenizerProblem(body []byte, err error) Problem {
	var syn *json.SyntaxError
	if errors.As(json.Unmarshal(body, &struct{}{}), &syn) { // checks the whole body first
		return Problem{Message: "invalid JSON: " + syn.Error() + " (at byte " + strconv.FormatInt(syn.Offset, 10) + ")"}
	}
	if err == errNotObject {
		return Problem{Message: "invalid JSON: " + errNotObject.Error()}
	}
	var serr *jsontext.SyntacticError
	if errors.As(err, &serr) && errors.Is(serr.Err, jsontext.ErrDuplicateName) {
		field, logField := fieldPath(body, serr.JSONPointer)
		p := Problem{Field: field, Message: msgDuplicateName}
		if logField != field {
			p.logField = logField
		}
		return p
	}
	return Problem{Message: "invalid JSON: " + err.Error()}
}

// fieldPath turns the JSON Pointer (RFC 6901) of a value in body into the
// dotted path of [Problem.Field]: member names joined by ".", array
// elements as "[i]"; and the same path for logs, names that hold an "@"
// written "<address>" (logSafe).
func fieldPath(body []byte, ptr jsontext.Pointer) (field, logField string) {
	var node any
	_ = json.Unmarshal(body, &node) // a valid body: only its shape is needed
	var b, l strings.Builder
	for tok := range ptr.Tokens() {
		switch n := node.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			l.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n) {
				node = n[i]
			}
			continue
		case map[string]any:
			node = n[tok]
		default:
			node = nil
		}
		if b.Len() > 0 {
			b.WriteByte('.')
			l.WriteByte('.')
		}
		b.WriteString(tok)
		l.WriteString(logSafe(tok))
	}
	return b.String(), l.String()
}

// fail keeps the first tokenizer error.
func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// peek returns the kind of the next token, or 0 after an error.
func (d *decoder) peek() jsontext.Kind {
	if d.err != nil {
		return 0
	}
	k := d.tok.PeekKind()
	if k == 0 {
		_, err := d.tok.ReadToken() // reports why there is no token
		if err == nil {
			err = errors.New("jsontext: no token")
		}
		d.fail(err)
	}
	return k
}

// token reads a delimiter.
func (d *decoder) token() {
	if d.err != nil {
		return
	}
	if _, err := d.tok.ReadToken(); err != nil {
		d.fail(err)
	}
}

// value reads the next whole value; the bytes are the decoder's until the
// next read.
func (d *decoder) value() jsontext.Value {
	if d.err != nil {
		return nil
	}
	v, err := d.tok.ReadValue()
	if err != nil {
		d.fail(err)
		return nil
	}
	return v
}

// text returns the unescaped content of a JSON string value, valid until
// the next read.
func (d *decoder) text(v jsontext.Value) []byte {
	if len(v) < 2 {
		return nil
	}
	if bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
		return v[1 : len(v)-1]
	}
	// The tokenizer has checked the syntax; the only error left is invalid
	// UTF-8, replaced by U+FFFD as encoding/json does.
	d.scratch, _ = jsontext.AppendUnquote(d.scratch[:0], v)
	return d.scratch
}

// name reads a member name.
func (d *decoder) name() []byte { return d.text(d.value()) }

// members calls member for each member of the object whose '{' is next,
// with the member's name and the kind of its value; member reads the value.
// The name stays valid through that peek: the tokenizer reads a
// bytes.Buffer in place and never overwrites it ([jsontext.NewDecoder]), and
// an unescaped name is in scratch until the next text call.
func (d *decoder) members(member func(name []byte, kind jsontext.Kind)) {
	d.token()
	for d.peek() != '}' && d.err == nil {
		name := d.name()
		member(name, d.peek())
	}
	d.token()
}

// skip reads past a value that is not used.
func (d *decoder) skip() {
	if d.err == nil {
		if err := d.tok.SkipValue(); err != nil {
			d.fail(err)
		}
	}
}

// kindName is encoding/json's name of a JSON value kind in type errors.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "bool"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "null"
}

// mismatch notes a value of the wrong type (the first one counts) and skips it.
func (d *decoder) mismatch(field, want string, got jsontext.Kind) {
	if d.typeProblem == nil && d.err == nil {
		d.typeProblem = &Problem{Field: field, Message: "must be " + want + ", not a JSON " + kindName(got)}
	}
	d.skip()
}

// str reads a value bound for a string field: null leaves it empty (the
// object's null check reports it).
func (d *decoder) str(field string, k jsontext.Kind) string {
	switch k {
	case '"':
		return string(d.text(d.value()))
	case 'n':
		d.skip()
	default:
		d.mismatch(field, "a string", k)
	}
	return ""
}

// ref reads an optional id field, noting it in blank when given as "".
func (d *decoder) ref(field string, k jsontext.Kind) string {
	s := d.str(field, k)
	if s == "" && k == '"' {
		d.blank = append(d.blank, field)
	}
	return s
}

// list reads a value bound for a []string field.
func (d *decoder) list(field string, k jsontext.Kind) []string {
	switch k {
	case '[':
	case 'n':
		d.skip()
		return nil
	default:
		d.mismatch(field, "an array", k)
		return nil
	}
	d.token()
	l := []string{}
	for k := d.peek(); k != ']' && d.err == nil; k = d.peek() {
		l = append(l, d.str(field, k))
	}
	d.token()
	return l
}

// stringMap reads a value bound for a map[string]string field, noting members
// that are null.
func (d *decoder) stringMap(field string, k jsontext.Kind, nulls *[]string) map[string]string {
	switch k {
	case '{':
	case 'n':
		d.skip()
		return nil
	default:
		d.mismatch(field, "an object", k)
		return nil
	}
	m := map[string]string{}
	d.members(func(name []byte, k jsontext.Kind) {
		key := string(name)
		if k == 'n' {
			*nulls = append(*nulls, key)
		}
		m[key] = d.str(field, k)
	})
	return m
}

// raw reads any value, copied, its invalid UTF-8 replaced.
func (d *decoder) raw() json.RawMessage {
	v := d.value()
	if v == nil {
		return nil
	}
	if !utf8.Valid(v) {
		return validUTF8(v)
	}
	return json.RawMessage(bytes.Clone(v))
}

// validUTF8 returns v with each byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as encoding/json reads a string: the payload
// and template data herald passes on are UTF-8 JSON (RFC 8259 §8.1). The
// tokenizer has checked v's syntax, so such bytes are inside strings.
func validUTF8(v []byte) json.RawMessage {
	out := make([]byte, 0, len(v)+8)
	for len(v) > 0 {
		r, size := utf8.DecodeRune(v)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, v[:size]...)
		}
		v = v[size:]
	}
	return out
}

// note notes a member of obj whose value is null or whose name the contract
// does not define.
func (obj *object) note(name []byte, k jsontext.Kind, known bool) {
	if k == 'n' {
		obj.nulls = append(obj.nulls, string(name))
	}
	if !known {
		obj.unknown = append(obj.unknown, string(name))
	}
}

// open notes whether the value of an object member is an object; when it is
// not, the value is skipped.
func (d *decoder) open(obj *object, k jsontext.Kind) bool {
	obj.present = true
	if k != '{' {
		obj.notObject = true
		d.skip()
		return false
	}
	return true
}

func (d *decoder) body() {
	switch k := d.peek(); k {
	case '{':
	case 0:
		return
	default:
		// Not an object; but a body that is not JSON at all says so first.
		d.skip()
		d.end()
		if d.err == nil && k != 'n' { // null: "must be an object", as a member
			d.err = errNotObject
		}
		return
	}
	d.top.present = true
	d.members(func(name []byte, k jsontext.Kind) {
		code := topField(name)
		d.top.note(name, k, code != fieldUnknown)
		switch code {
		case fieldVersion:
			d.readVersion(k)
		case fieldID:
			d.msg.ID = d.str("id", k)
		case fieldChannel:
			d.readChannel(k)
		case fieldCreatedAt:
			d.msg.CreatedAt = d.timestamp(k, &d.created)
		case fieldExpiresAt:
			d.msg.ExpiresAt = d.timestamp(k, &d.expires)
		case fieldMetadata:
			d.msg.Metadata = d.stringMap("metadata", k, &d.metaNulls)
		case fieldEmail:
			d.msg.Email = d.readEmail(k)
		case fieldWebhook:
			d.msg.Webhook = d.readWebhook(k)
		case fieldChat:
			d.msg.Chat = d.readChat(k)
		case fieldEvent:
			d.msg.Event = d.readEvent(k)
		case fieldTenant:
			d.msg.Tenant = d.ref("tenant", k)
		case fieldEventID:
			d.msg.EventID = d.ref("event_id", k)
		default:
			d.skip()
		}
	})
	d.end()
}

// errNotObject marks a body that is valid JSON but not an object.
var errNotObject = errors.New("the body must be a JSON object")

// end checks that nothing follows the body's value.
func (d *decoder) end() {
	if d.err != nil {
		return
	}
	if _, err := d.tok.ReadToken(); err == nil {
		d.fail(errors.New("jsontext: a second value after the body"))
	} else if !errors.Is(err, io.EOF) {
		d.fail(err)
	}
}

func topField(name []byte) int {
	switch string(name) {
	case "version":
		return fieldVersion
	case "id":
		return fieldID
	case "channel":
		return fieldChannel
	case "created_at":
		return fieldCreatedAt
	case "expires_at":
		return fieldExpiresAt
	case "metadata":
		return fieldMetadata
	case "email":
		return fieldEmail
	case "webhook":
		return fieldWebhook
	case "chat":
		return fieldChat
	case "event":
		return fieldEvent
	case "tenant":
		return fieldTenant
	case "event_id":
		return fieldEventID
	}
	return fieldUnknown
}

// readVersion checks version: the number 1 in any JSON spelling (1, 1.0,
// 1e0), as the schema's {"const": 1}.
func (d *decoder) readVersion(k jsontext.Kind) {
	d.hasVersion = true
	const notNumber = "must be the number 1"
	if k != '0' {
		d.version = notNumber
		d.skip()
		return
	}
	v := d.value()
	if string(v) == "1" {
		return
	}
	f, err := strconv.ParseFloat(string(v), 64)
	switch {
	case err != nil: // out of float64's range
		d.version = notNumber
	case f != Version:
		d.version = "unsupported version " + string(v) + " (this function reads version " + strconv.Itoa(Version) + ")"
	}
}

// wantChannels lists the channels for problems: "email", "webhook", "chat"
// or "event".
var wantChannels = func() string {
	q := make([]string, len(Channels))
	for i, c := range Channels {
		q[i] = strconv.Quote(string(c))
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}()

func (d *decoder) readChannel(k jsontext.Kind) {
	d.hasChannel = true
	switch k {
	case '"':
	case 'n': // read as "" by encoding/json
		d.skip()
		d.channel = `unknown channel "" (want ` + wantChannels + `)`
		return
	default:
		d.channel = `must be a string (` + wantChannels + `)`
		d.skip()
		return
	}
	s := d.text(d.value())
	if c := Channel(s); c.Known() {
		d.msg.Channel = c
		return
	}
	d.channel = "unknown channel " + strconv.Quote(logSafe(string(s))) + ` (want ` + wantChannels + `)`
}

// timestamp reads created_at or expires_at, setting *problem when it is not
// an RFC 3339 timestamp string.
func (d *decoder) timestamp(k jsontext.Kind, problem *string) *time.Time {
	const (
		notString = "must be an RFC 3339 timestamp string"
		notRFC    = "must be an RFC 3339 timestamp like 2026-11-30T09:15:00Z"
	)
	switch k {
	case '"':
	case 'n':
		*problem = notRFC // null reads as ""
		d.skip()
		return nil
	default:
		*problem = notString
		d.skip()
		return nil
	}
	v := d.value()
	t := new(time.Time)
	// time.Time reads the JSON string as written (escapes included), as
	// encoding/json's decode of the field would.
	terr := t.UnmarshalJSON(v)
	s := d.text(v)
	if !rfc3339Pattern.Match(s) {
		*problem = notRFC
	} else if terr != nil {
		if _, err := time.Parse(time.RFC3339, string(s)); err != nil {
			*problem = notRFC
		} else if d.timeErr == nil {
			d.timeErr = terr
		}
	}
	return t
}

func emailField(name []byte) int {
	switch string(name) {
	case "from":
		return emailFrom
	case "to":
		return emailTo
	case "cc":
		return emailCc
	case "bcc":
		return emailBcc
	case "reply_to":
		return emailReplyTo
	case "subject":
		return emailSubject
	case "text":
		return emailText
	case "html":
		return emailHTML
	case "template":
		return emailTemplate
	case "configuration_set":
		return emailConfigurationSet
	case "tags":
		return emailTags
	case "headers":
		return emailHeaders
	}
	return fieldUnknown
}

func (d *decoder) readEmail(k jsontext.Kind) *Email {
	f := &d.email
	if !d.open(&f.object, k) {
		return nil
	}
	e := new(Email)
	d.members(func(name []byte, k jsontext.Kind) {
		code := emailField(name)
		f.note(name, k, code != fieldUnknown)
		f.present |= uint16(code)
		switch code {
		case emailFrom:
			e.From = d.str("email.from", k)
		case emailTo:
			e.To = d.list("email.to", k)
		case emailCc:
			e.Cc = d.list("email.cc", k)
		case emailBcc:
			e.Bcc = d.list("email.bcc", k)
		case emailReplyTo:
			e.ReplyTo = d.list("email.reply_to", k)
		case emailSubject:
			e.Subject = d.str("email.subject", k)
		case emailText:
			e.Text = d.str("email.text", k)
		case emailHTML:
			e.HTML = d.str("email.html", k)
		case emailTemplate:
			e.Template = d.readTemplate(k)
		case emailConfigurationSet:
			e.ConfigurationSet = d.str("email.configuration_set", k)
		case emailTags:
			e.Tags = d.stringMap("email.tags", k, &f.tagNulls)
		case emailHeaders:
			e.Headers = d.stringMap("email.headers", k, &f.headerNulls)
		default:
			d.skip()
		}
	})
	return e
}

func (d *decoder) readTemplate(k jsontext.Kind) *Template {
	f := &d.email.template
	if !d.open(f, k) {
		return nil
	}
	t := new(Template)
	d.members(func(name []byte, k jsontext.Kind) {
		switch string(name) {
		case "name":
			f.note(name, k, true)
			t.Name = d.str("email.template.name", k)
		case "data":
			f.note(name, k, true)
			t.Data = d.raw()
		default:
			f.note(name, k, false)
			d.skip()
		}
	})
	return t
}

func (d *decoder) readWebhook(k jsontext.Kind) *Webhook {
	f := &d.webhook
	if !d.open(&f.object, k) {
		return nil
	}
	w := new(Webhook)
	d.members(func(name []byte, k jsontext.Kind) {
		switch string(name) {
		case "url":
			f.note(name, k, true)
			w.URL = d.str("webhook.url", k)
		case "endpoint":
			f.note(name, k, true)
			w.Endpoint = d.ref("webhook.endpoint", k)
		case "event_type":
			f.note(name, k, true)
			w.EventType = d.str("webhook.event_type", k)
		case "payload":
			f.note(name, k, true)
			w.Payload = d.raw()
		case "headers":
			f.note(name, k, true)
			w.Headers = d.stringMap("webhook.headers", k, &f.headerNulls)
		default:
			f.note(name, k, false)
			d.skip()
		}
	})
	return w
}

func (d *decoder) readChat(k jsontext.Kind) *Chat {
	f := &d.chat
	if !d.open(f, k) {
		return nil
	}
	c := new(Chat)
	d.members(func(name []byte, k jsontext.Kind) {
		switch string(name) {
		case "service":
			f.note(name, k, true)
			c.Service = ChatService(d.str("chat.service", k))
		case "url":
			f.note(name, k, true)
			c.URL = d.str("chat.url", k)
		case "endpoint":
			f.note(name, k, true)
			c.Endpoint = d.ref("chat.endpoint", k)
		case "text":
			f.note(name, k, true)
			c.Text = d.str("chat.text", k)
		case "blocks":
			f.note(name, k, true)
			c.Blocks = d.raw()
		case "embeds":
			f.note(name, k, true)
			c.Embeds = d.raw()
		case "card":
			f.note(name, k, true)
			c.Card = d.raw()
		default:
			f.note(name, k, false)
			d.skip()
		}
	})
	return c
}

func (d *decoder) readEvent(k jsontext.Kind) *Event {
	f := &d.event
	if !d.open(f, k) {
		return nil
	}
	e := new(Event)
	d.members(func(name []byte, k jsontext.Kind) {
		switch string(name) {
		case "tenant":
			f.note(name, k, true)
			e.Tenant = d.str("event.tenant", k)
		case "type":
			f.note(name, k, true)
			e.Type = d.str("event.type", k)
		case "payload":
			f.note(name, k, true)
			e.Payload = d.raw()
		case "endpoint":
			f.note(name, k, true)
			e.Endpoint = d.ref("event.endpoint", k)
		default:
			f.note(name, k, false)
			d.skip()
		}
	})
	return e
}

// channelObject returns the facts of the object of channel c.
func (d *decoder) channelObject(c Channel) *object {
	switch c {
	case ChannelEmail:
		return &d.email.object
	case ChannelWebhook:
		return &d.webhook.object
	case ChannelEvent:
		return &d.event
	}
	return &d.chat
}

// problems reports the structural problems to v, in the documented order:
// null members, version, channel (either stops the check), unknown members,
// the other channel's object, timestamps, metadata, the channel's object;
// then the first value of a wrong type. It reports whether there were none.
func (d *decoder) problems(v *validator) bool {
	if !d.top.present {
		v.add("", "must be an object") // the literal null
		return false
	}
	v.names("", d.top.nulls, "must not be null")
	switch {
	case !d.hasVersion:
		v.add("version", "required (want %d)", Version)
		return false
	case d.version != "":
		v.add("version", "%s", d.version)
		return false
	case !d.hasChannel:
		v.add("channel", "required (%s)", wantChannels)
		return false
	case d.channel != "":
		v.add("channel", "%s", d.channel)
		return false
	}
	ch := d.msg.Channel
	v.names("", d.top.unknown, "unknown field")
	for _, other := range Channels {
		if other != ch && d.channelObject(other).present {
			v.add(string(other), "not allowed when channel is %q", ch)
		}
	}
	if d.created != "" {
		v.add("created_at", "%s", d.created)
	}
	if d.expires != "" {
		v.add("expires_at", "%s", d.expires)
	}
	v.names("metadata", d.metaNulls, "must be a string, not null")
	obj := d.channelObject(ch)
	switch {
	case !obj.present:
		v.add(string(ch), "required when channel is %q", ch)
	case obj.notObject:
		v.add(string(ch), "must be an object")
	default:
		v.names(string(ch), obj.nulls, "must not be null")
		v.names(string(ch), obj.unknown, "unknown field")
		if ch == ChannelEmail {
			v.names("email.headers", d.email.headerNulls, "must be a string, not null")
			v.names("email.tags", d.email.tagNulls, "must be a string, not null")
			if t := &d.email.template; t.notObject {
				v.add("email.template", "must be an object")
			} else if t.present {
				v.names("email.template", t.nulls, "must not be null")
				v.names("email.template", t.unknown, "unknown field")
			}
		} else if ch == ChannelWebhook {
			v.names("webhook.headers", d.webhook.headerNulls, "must be a string, not null")
		}
	}
	if len(v.problems) > 0 {
		return false
	}
	if d.timeErr != nil {
		v.add("", "%v", d.timeErr)
		return false
	}
	if d.typeProblem != nil {
		v.problems = append(v.problems, *d.typeProblem)
		return false
	}
	return true
}

// names reports one problem for each name, in sorted order.
func (v *validator) names(prefix string, names []string, msg string) {
	slices.Sort(names)
	for _, n := range names {
		v.problems = append(v.problems, nameProblem(prefix, n, msg))
	}
}

// IDOf returns the id of a body that may be invalid, when the body is a JSON
// object with exactly one member named "id" (matched exactly, after
// unescaping) whose value is a valid id, so that the reason and logs of an
// invalid message still name it; it returns "" otherwise, and for a body
// that is not JSON.
func IDOf(body []byte) string {
	d := new(decoder)
	d.in = *bytes.NewBuffer(body)
	d.tok.Reset(&d.in, decodeOptions, jsontext.AllowDuplicateNames(true))
	if d.peek() != '{' {
		return ""
	}
	var id string
	n := 0
	d.members(func(name []byte, k jsontext.Kind) {
		if string(name) == "id" && k == '"' {
			n++
			id = string(d.text(d.value()))
			return
		}
		if string(name) == "id" {
			n++
			id = ""
		}
		d.skip()
	})
	d.end()
	if d.err != nil || n != 1 || !idPattern.MatchString(id) {
		return ""
	}
	return id
}
