package email

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
)

// TestSendRequestBody checks the JSON body SES receives.
func TestSendRequestBody(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		cfg     Config
		message string // contract v1 body
		want    string // SendEmail request body
	}{
		{
			name: "simple with every field; the message's configuration set wins",
			cfg:  Config{DefaultFrom: "default@example.com", ConfigurationSet: "default-set"},
			message: `{"version":1,"id":"order-42.confirm:v1","channel":"email","email":{
				"from":"Shop <shop@example.com>",
				"to":["a@example.com","Bob Example <bob@example.com>"],
				"cc":["c@example.com"],"bcc":["d@example.com"],
				"reply_to":["support@example.com"],
				"subject":"Your order 42","text":"Thanks!","html":"<p>Thanks!</p>",
				"configuration_set":"transactional",
				"tags":{"herald-id":"spoofed","campaign":"orders","a-first":"1"},
				"headers":{"X-Entity-Ref-ID":"42","List-Unsubscribe":"<https://example.com/u/42>"}}}`,
			want: `{
				"FromEmailAddress": "\"Shop\" <shop@example.com>",
				"Destination": {
					"ToAddresses": ["a@example.com", "\"Bob Example\" <bob@example.com>"],
					"CcAddresses": ["c@example.com"],
					"BccAddresses": ["d@example.com"]
				},
				"ReplyToAddresses": ["support@example.com"],
				"Content": {"Simple": {
					"Subject": {"Data": "Your order 42", "Charset": "UTF-8"},
					"Body": {
						"Text": {"Data": "Thanks!", "Charset": "UTF-8"},
						"Html": {"Data": "<p>Thanks!</p>", "Charset": "UTF-8"}
					},
					"Headers": [
						{"Name": "List-Unsubscribe", "Value": "<https://example.com/u/42>"},
						{"Name": "X-Entity-Ref-ID", "Value": "42"}
					]
				}},
				"ConfigurationSetName": "transactional",
				"EmailTags": [
					{"Name": "a-first", "Value": "1"},
					{"Name": "campaign", "Value": "orders"},
					{"Name": "herald-id", "Value": "order-42_dconfirm_cv1"}
				]
			}`,
		},
		{
			name: "text only, no configuration set anywhere",
			message: `{"version":1,"id":"n-2","channel":"email","email":{
				"from":"shop@example.com","bcc":["d@example.com"],"subject":"Hi","text":"Plain"}}`,
			want: `{
				"FromEmailAddress": "shop@example.com",
				"Destination": {"BccAddresses": ["d@example.com"]},
				"Content": {"Simple": {
					"Subject": {"Data": "Hi", "Charset": "UTF-8"},
					"Body": {"Text": {"Data": "Plain", "Charset": "UTF-8"}}
				}},
				"EmailTags": [{"Name": "herald-id", "Value": "n-2"}]
			}`,
		},
		{
			name: "template with data, default sender and configuration set",
			cfg:  Config{DefaultFrom: "Herald <noreply@example.com>", ConfigurationSet: "default-set"},
			message: `{"version":1,"id":"n-3","channel":"email","email":{
				"to":["jana@example.com"],
				"template":{"name":"welcome","data":{"name":"Jana","items":[1,2]}},
				"headers":{"X-Campaign":"spring"}}}`,
			want: `{
				"FromEmailAddress": "\"Herald\" <noreply@example.com>",
				"Destination": {"ToAddresses": ["jana@example.com"]},
				"Content": {"Template": {
					"TemplateName": "welcome",
					"TemplateData": "{\"name\":\"Jana\",\"items\":[1,2]}",
					"Headers": [{"Name": "X-Campaign", "Value": "spring"}]
				}},
				"ConfigurationSetName": "default-set",
				"EmailTags": [{"Name": "herald-id", "Value": "n-3"}]
			}`,
		},
		{
			name: "template without data",
			message: `{"version":1,"id":"n-4","channel":"email","email":{
				"from":"shop@example.com","to":["jana@example.com"],"template":{"name":"welcome"}}}`,
			want: `{
				"FromEmailAddress": "shop@example.com",
				"Destination": {"ToAddresses": ["jana@example.com"]},
				"Content": {"Template": {"TemplateName": "welcome", "TemplateData": "{}"}},
				"EmailTags": [{"Name": "herald-id", "Value": "n-4"}]
			}`,
		},
		{
			// SES v2 API reference, Destination: addresses must be 7-bit
			// ASCII, domains in Punycode, display names RFC 2047 encoded.
			name: "internationalized domain and display names",
			message: `{"version":1,"id":"n-5","channel":"email","email":{
				"from":"Müller & Söhne <noreply@example.com>",
				"to":["jana@bücher.example","Jana Nováková <jana@BÜCHER.example>"],
				"reply_to":["\"Doe, John\" <john@example.com>"],
				"subject":"Grüße aus Köln","html":"<p>Schöne Grüße</p>"}}`,
			want: `{
				"FromEmailAddress": "=?utf-8?b?TcO8bGxlciAmIFPDtmhuZQ==?= <noreply@example.com>",
				"Destination": {"ToAddresses": [
					"jana@xn--bcher-kva.example",
					"=?utf-8?q?Jana_Nov=C3=A1kov=C3=A1?= <jana@xn--bcher-kva.example>"
				]},
				"ReplyToAddresses": ["\"Doe, John\" <john@example.com>"],
				"Content": {"Simple": {
					"Subject": {"Data": "Grüße aus Köln", "Charset": "UTF-8"},
					"Body": {"Html": {"Data": "<p>Schöne Grüße</p>", "Charset": "UTF-8"}}
				}},
				"EmailTags": [{"Name": "herald-id", "Value": "n-5"}]
			}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, sesOK, tt.cfg)

			require.NoError(t, b.sender.Send(t.Context(), parse(t, tt.message)))

			bodies := b.srv.received()
			require.Len(t, bodies, 1)
			require.JSONEq(t, tt.want, string(bodies[0]))
		})
	}
}

// TestSendRefusesWithoutRequest checks the messages that fail before any
// request is made.
func TestSendRefusesWithoutRequest(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		cfg     Config
		message string
		class   delivery.Class
		text    string
	}{
		{
			name: "non-ASCII local part in to",
			message: `{"version":1,"id":"n-1","channel":"email","email":{
				"from":"shop@example.com","to":["ok@example.com","jörg@example.com"],"subject":"s","text":"t"}}`,
			class: ClassInvalidAddress,
			text:  "email_invalid_address: send email n-1: email.to[1]: the local part (before @) is not 7-bit ASCII",
		},
		{
			name: "non-ASCII local part in reply_to",
			message: `{"version":1,"id":"n-1","channel":"email","email":{
				"from":"shop@example.com","to":["ok@example.com"],"reply_to":["jörg@example.com"],"subject":"s","text":"t"}}`,
			class: ClassInvalidAddress,
			text:  "send email n-1: email.reply_to[0]: the local part",
		},
		{
			name: "non-ASCII local part in from",
			cfg:  Config{DefaultFrom: "default@example.com"},
			message: `{"version":1,"id":"n-1","channel":"email","email":{
				"from":"Jörg <jörg@example.com>","to":["ok@example.com"],"subject":"s","text":"t"}}`,
			class: ClassInvalidAddress,
			text:  "send email n-1: email.from: the local part",
		},
		{
			name: "no sender",
			message: `{"version":1,"id":"n-1","channel":"email","email":{
				"to":["ok@example.com"],"subject":"s","text":"t"}}`,
			class: ClassNoSender,
			text:  "email_no_sender: send email n-1: email.from is empty and no default sender is configured",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, sesOK, tt.cfg)

			err := b.sender.Send(t.Context(), parse(t, tt.message))

			requireOutcome(t, err, true, tt.class, 0)
			require.Contains(t, err.Error(), tt.text)
			require.NotContains(t, err.Error(), "jörg")
			require.Empty(t, b.srv.received())
		})
	}
}

func TestSendRefusesNonEmailMessage(t *testing.T) {
	t.Parallel()
	b := setup(t, sesOK, Config{})
	m := parse(t, `{"version":1,"id":"w-1","channel":"webhook","webhook":{
		"url":"https://example.com/hook","event_type":"x.y","payload":{}}}`)

	err := b.sender.Send(t.Context(), m)

	requireOutcome(t, err, true, delivery.ClassInvalidMessage, 0)
	require.Empty(t, b.srv.received())
}

func TestIDTagValue(t *testing.T) {
	t.Parallel()
	require.Equal(t, "order-42_dconfirm_cv1", IDTagValue("order-42.confirm:v1"))
	require.Equal(t, "A-z__0-9", IDTagValue("A-z_0-9"))
	require.Equal(t, "a_u20AC_b", IDTagValue("a€b"))
	// Distinct ids, distinct tags: receivers deduplicate on them.
	seen := map[string]string{}
	for _, id := range []string{"order.42", "order:42", "order_42", "order_d42", "order__42", "order-42", "order_c42"} {
		v := IDTagValue(id)
		require.Regexp(t, `^[A-Za-z0-9_-]+$`, v)
		prev, dup := seen[v]
		require.False(t, dup, "%q and %q share the tag %q", prev, id, v)
		seen[v] = id
	}
}

// nopAPI is an API that is never reached.
type nopAPI struct{}

func (nopAPI) SendEmail(context.Context, *sesv2.SendEmailInput, ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error) {
	return &sesv2.SendEmailOutput{}, nil
}

// BenchmarkBuildInput1KB measures building the SendEmail input of an email
// with a 1 KB text body, three recipients, a tag and a header.
func BenchmarkBuildInput1KB(b *testing.B) {
	s, err := NewSender(nopAPI{}, Config{ConfigurationSet: "transactional"})
	require.NoError(b, err)
	text := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing. ", 20)[:1024]
	m := parse(b, `{"version":1,"id":"order-42.confirm","channel":"email","email":{
		"from":"Shop <shop@example.com>","to":["a@example.com","Bob <bob@example.com>"],
		"cc":["c@example.com"],"subject":"Your order","text":"`+text+`",
		"tags":{"campaign":"orders"},"headers":{"X-Entity-Ref-ID":"42"}}}`)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()

	for b.Loop() {
		if _, err := s.buildInput(m); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseIDTagValue(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"order-42.confirm:v1", "A-z_0-9", "AZaz09-", "a€b", "order_d42", "__", "_", "x.y:z_", "日本"} {
		got, err := ParseIDTagValue(IDTagValue(id))
		require.NoError(t, err, id)
		require.Equal(t, id, got, "round trip of %q", id)
	}
	for _, bad := range []string{"a.b", "a b", "abc_", "a_x", "a_u", "a_u_", "a_uZZ_", "a_u110000_", "a_u41", "a_u41_", "a_u2E_", "a_u20ac_", "a_u020AC_", "a@b"} {
		_, err := ParseIDTagValue(bad)
		require.Error(t, err, "%q is no value IDTagValue writes", bad)
	}
	// Code points below 0x10 escape to one hex digit.
	for _, id := range []string{"a\tb", "\x01", "x\x0fy"} {
		v := IDTagValue(id)
		got, err := ParseIDTagValue(v)
		require.NoError(t, err, v)
		require.Equal(t, id, got)
	}
	require.Equal(t, "a_u9_b", IDTagValue("a\tb"))
}

// TestParseIDTagValueErrorsNameTheEscapesByte: each error points at the
// byte where the offending escape begins (its "_"), counted from 0.
func TestParseIDTagValueErrorsNameTheEscapesByte(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{
		"ab_u_":  "unfinished _u escape at byte 2",
		"_u":     "unfinished _u escape at byte 0",
		"abc_x":  "unknown escape _x at byte 3",
		"_y":     "unknown escape _y at byte 0",
		"a b":    "byte 1 is",
		"abcd_":  "ends in an unfinished _ escape",
		"a_u41_": "not in the canonical form",
	} {
		_, err := ParseIDTagValue(v)
		require.ErrorContains(t, err, want, v)
	}
}

func FuzzParseIDTagValue(f *testing.F) {
	for _, s := range []string{"order-42.confirm:v1", "a€b", "a_u20AC_b", "__d", "_c_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Every id round-trips; every accepted value is what IDTagValue writes.
		if utf8.ValidString(s) {
			got, err := ParseIDTagValue(IDTagValue(s))
			require.NoError(t, err)
			require.Equal(t, s, got)
		}
		if id, err := ParseIDTagValue(s); err == nil {
			require.Equal(t, s, IDTagValue(id))
		}
	})
}
