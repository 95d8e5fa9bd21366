package email

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/notification"
)

// IDTag is the name of the SES message tag that carries the notification id
// on every email, so that SES events (bounces, complaints, deliveries) can be
// matched to the notification.
const IDTag = "herald-id"

// charset is the charset of every subject and body: Go strings are UTF-8.
const charset = "UTF-8"

// IDTagValue returns id as an SES message tag value (SES v2 API reference,
// MessageTag "Value": A-Z a-z 0-9 _ -). Notification ids may also hold "."
// and ":", so the value escapes with "_": "_" → "__", "." → "_d",
// ":" → "_c". Distinct ids give distinct values, so receivers can
// deduplicate on the tag; the escape is reversible.
func IDTagValue(id string) string {
	var b strings.Builder
	b.Grow(len(id) + 4)
	for _, r := range id {
		switch r {
		case '_':
			b.WriteString("__")
		case '.':
			b.WriteString("_d")
		case ':':
			b.WriteString("_c")
		default:
			if 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' {
				b.WriteRune(r)
			} else { // outside the contract's id alphabet; kept distinct all the same
				fmt.Fprintf(&b, "_u%X_", r)
			}
		}
	}
	return b.String()
}

// ParseIDTagValue returns the notification id that [IDTagValue] escaped
// into v, the value of the [IDTag] message tag an SES event carries back
// (mail.tags["herald-id"]). It fails on a value IDTagValue cannot produce:
// a character outside A-Z a-z 0-9 _ -, an unknown or unfinished "_" escape,
// a "_uHEX_" escape that is not a valid Unicode code point, or a value that
// is not the one IDTagValue writes for the id it decodes to (so that each id
// has exactly one tag value).
func ParseIDTagValue(v string) (string, error) {
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-':
			b.WriteByte(c)
		case c != '_':
			return "", fmt.Errorf("%s tag value: byte %d is %q, outside A-Z a-z 0-9 _ -", IDTag, i, c)
		case i+1 == len(v):
			return "", fmt.Errorf("%s tag value: ends in an unfinished _ escape", IDTag)
		default:
			i++
			switch v[i] {
			case '_':
				b.WriteByte('_')
			case 'd':
				b.WriteByte('.')
			case 'c':
				b.WriteByte(':')
			case 'u':
				end := strings.IndexByte(v[i+1:], '_')
				if end < 1 {
					return "", fmt.Errorf("%s tag value: unfinished _u escape at byte %d", IDTag, i-1)
				}
				hex := v[i+1 : i+1+end]
				r, err := strconv.ParseUint(hex, 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					return "", fmt.Errorf("%s tag value: _u%s_ is not a code point escape", IDTag, hex)
				}
				b.WriteRune(rune(r))
				i += end + 1
			default:
				return "", fmt.Errorf("%s tag value: unknown escape _%c at byte %d", IDTag, v[i], i-1)
			}
		}
	}
	id := b.String()
	// One value per id: "_u41_" or "_u2E_" decode, but IDTagValue writes
	// "A" and "_d" for them.
	if IDTagValue(id) != v {
		return "", fmt.Errorf("%s tag value: not in the canonical form IDTagValue writes", IDTag)
	}
	return id, nil
}

// buildInput returns the SendEmail request for m. It fails with a
// *delivery.PermanentError when m cannot be sent: no email (ClassInvalidMessage),
// no sender (ClassNoSender) or a mailbox SES cannot carry (ClassInvalidAddress).
//
// It relies on notification.Parse having checked the rest: mailboxes parse,
// no CR or LF, at most 50 recipients, tag and template name rules.
func (s *Sender) buildInput(m *notification.Message) (*sesv2.SendEmailInput, error) {
	e := m.Email
	if e == nil {
		return nil, delivery.Permanent(delivery.ClassInvalidMessage,
			fmt.Errorf("send email %s: the message has no email object", m.ID))
	}

	from := s.defaultFrom
	if e.From != "" {
		f, err := formatMailbox(e.From)
		if err != nil {
			return nil, addressError(m.ID, "email.from", err)
		}
		from = f
	}
	if from == "" {
		return nil, delivery.Permanent(ClassNoSender,
			fmt.Errorf("send email %s: email.from is empty and no default sender is configured", m.ID))
	}

	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(from),
		Destination:      &types.Destination{},
		Content:          content(e),
		EmailTags:        emailTags(m.ID, e.Tags),
	}
	for _, list := range []struct {
		field string
		addrs []string
		dst   *[]string
	}{
		{"email.to", e.To, &in.Destination.ToAddresses},
		{"email.cc", e.Cc, &in.Destination.CcAddresses},
		{"email.bcc", e.Bcc, &in.Destination.BccAddresses},
		{"email.reply_to", e.ReplyTo, &in.ReplyToAddresses},
	} {
		if len(list.addrs) == 0 {
			continue // nil, so that the field is left out of the request
		}
		out := make([]string, len(list.addrs))
		for i, a := range list.addrs {
			f, err := formatMailbox(a)
			if err != nil {
				return nil, addressError(m.ID, fmt.Sprintf("%s[%d]", list.field, i), err)
			}
			out[i] = f
		}
		*list.dst = out
	}
	switch {
	case e.ConfigurationSet != "":
		in.ConfigurationSetName = aws.String(e.ConfigurationSet)
	case s.cfg.ConfigurationSet != "":
		in.ConfigurationSetName = aws.String(s.cfg.ConfigurationSet)
	}
	return in, nil
}

// addressError is the failure of the mailbox in field; it names the field,
// not the address.
func addressError(id, field string, err error) error {
	return delivery.Permanent(ClassInvalidAddress, fmt.Errorf("send email %s: %s: %w", id, field, err))
}

// content is the Simple message or the Template of e.
func content(e *notification.Email) *types.EmailContent {
	headers := messageHeaders(e.Headers)
	if t := e.Template; t != nil {
		data := "{}" // SES requires TemplateData; an empty object renders the template as is
		if len(t.Data) > 0 {
			data = string(t.Data)
		}
		return &types.EmailContent{Template: &types.Template{
			TemplateName: aws.String(t.Name),
			TemplateData: aws.String(data),
			Headers:      headers,
		}}
	}
	body := &types.Body{}
	if e.Text != "" {
		body.Text = utf8Content(e.Text)
	}
	if e.HTML != "" {
		body.Html = utf8Content(e.HTML)
	}
	return &types.EmailContent{Simple: &types.Message{
		Subject: utf8Content(e.Subject),
		Body:    body,
		Headers: headers,
	}}
}

func utf8Content(s string) *types.Content {
	return &types.Content{Data: aws.String(s), Charset: aws.String(charset)}
}

// messageHeaders returns h sorted by name, or nil when h is empty.
func messageHeaders(h map[string]string) []types.MessageHeader {
	if len(h) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(h))
	out := make([]types.MessageHeader, len(names))
	for i, k := range names {
		out[i] = types.MessageHeader{Name: aws.String(k), Value: aws.String(h[k])}
	}
	return out
}

// emailTags returns the message's tags sorted by name, then IDTag. A tag of
// the message named IDTag is replaced, as SES allows each name once.
func emailTags(id string, tags map[string]string) []types.MessageTag {
	names := make([]string, 0, len(tags))
	for k := range tags {
		if k != IDTag {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	out := make([]types.MessageTag, 0, len(names)+1)
	for _, k := range names {
		out = append(out, types.MessageTag{Name: aws.String(k), Value: aws.String(tags[k])})
	}
	return append(out, types.MessageTag{Name: aws.String(IDTag), Value: aws.String(IDTagValue(id))})
}
