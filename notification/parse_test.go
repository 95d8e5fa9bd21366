package notification_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

const casesDir = "../testdata/cases"

// compileSchema loads the shipped JSON Schema with format assertions on, as
// a producer's validator would.
func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile("notification.v1.schema.json")
	require.NoError(t, err)
	return s
}

func schemaValid(t testing.TB, s *jsonschema.Schema, body []byte) bool {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return false // not JSON: the schema cannot accept it either
	}
	return s.Validate(doc) == nil
}

// problemFields returns the fields an *InvalidError names.
func problemFields(t testing.TB, err error) []string {
	t.Helper()
	var inv *notification.InvalidError
	require.True(t, errors.As(err, &inv), "want *InvalidError, got %T: %v", err, err)
	fields := make([]string, len(inv.Problems))
	for i, p := range inv.Problems {
		fields[i] = p.Field
	}
	return fields
}

const validEmail = `{"version":1,"id":"n-1","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"Hi","text":"Hello"}}`
const validWebhook = `{"version":1,"id":"n-2","channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"invoice.paid","payload":{"a":1}}}`

func TestParse(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	many := make([]string, 51)
	for i := range many {
		many[i] = `"r@example.org"`
	}
	tests := []struct {
		name string
		body string
		// wantField is the field the first problem names; "" for a valid body.
		wantField string
		// goOnly marks a rule the JSON Schema cannot express (it accepts the body).
		goOnly bool
		// unreadable marks a body rejected before any field (not JSON, not
		// an object): no field is named.
		unreadable bool
	}{
		{name: "valid email", body: validEmail},
		{name: "valid webhook", body: validWebhook},
		{name: "valid template email", body: `{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"template":{"name":"reset","data":{"x":1}}}}`},
		{name: "times and metadata with a null payload", body: `{"version":1,"id":"a.b:c_d-e","channel":"webhook","created_at":"2026-11-30T09:00:00Z","expires_at":"2026-12-01T09:00:00+01:00","metadata":{"tenant":"acme"},"webhook":{"url":"https://h.example.com","event_type":"x","payload":null}}`, wantField: "webhook.payload"},
		{name: "payload may be any non-null JSON", body: `{"version":1,"id":"p","channel":"webhook","webhook":{"url":"https://h.example.com","event_type":"x","payload":[1,"two"]}}`},
		{name: "not JSON", body: `{"version":1,`, unreadable: true},
		{name: "not an object", body: `[1,2]`, unreadable: true},
		{name: "missing version", body: `{"id":"x","channel":"email"}`, wantField: "version"},
		{name: "version as string", body: `{"version":"1","id":"x","channel":"email"}`, wantField: "version"},
		{name: "future version", body: strings.Replace(validEmail, `"version":1`, `"version":2`, 1), wantField: "version"},
		{name: "missing channel", body: `{"version":1,"id":"x"}`, wantField: "channel"},
		{name: "unknown channel", body: `{"version":1,"id":"x","channel":"sms","sms":{}}`, wantField: "channel"},
		{name: "missing id", body: strings.Replace(validEmail, `"id":"n-1",`, ``, 1), wantField: "id"},
		{name: "id with space", body: strings.Replace(validEmail, `"n-1"`, `"n 1"`, 1), wantField: "id"},
		{name: "id too long", body: strings.Replace(validEmail, `"n-1"`, `"`+strings.Repeat("a", 129)+`"`, 1), wantField: "id"},
		{name: "unknown top-level field", body: strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","priority":5`, 1), wantField: "priority"},
		{name: "unknown email field", body: strings.Replace(validEmail, `"subject"`, `"attachments":[],"subject"`, 1), wantField: "email.attachments"},
		{name: "other channel's object", body: strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","webhook":{}`, 1), wantField: "webhook"},
		{name: "channel object missing", body: `{"version":1,"id":"x","channel":"webhook"}`, wantField: "webhook"},
		{name: "channel object null", body: `{"version":1,"id":"x","channel":"webhook","webhook":null}`, wantField: "webhook"},
		{name: "bad created_at", body: strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","created_at":"yesterday"`, 1), wantField: "created_at"},
		{name: "metadata value not a string", body: strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","metadata":{"n":1}`, 1), wantField: "metadata"},
		{name: "to not an array", body: strings.Replace(validEmail, `["b@example.org"]`, `"b@example.org"`, 1), wantField: "email.to"},
		{name: "to null", body: strings.Replace(validEmail, `["b@example.org"]`, `null`, 1), wantField: "email.to"},
		{name: "no recipient", body: strings.Replace(validEmail, `"to":["b@example.org"],`, ``, 1), wantField: "email.to"},
		{name: "51 recipients", body: strings.Replace(validEmail, `["b@example.org"]`, `[`+strings.Join(many[:26], ",")+`],"cc":[`+strings.Join(many[26:], ",")+`]`, 1), wantField: "email.to", goOnly: true},
		{name: "recipient not a mailbox", body: strings.Replace(validEmail, `"b@example.org"`, `"b@@example.org"`, 1), wantField: "email.to[0]", goOnly: true},
		{name: "recipient with CRLF", body: strings.Replace(validEmail, `"b@example.org"`, `"b@example.org\r\nBcc: x@evil.example"`, 1), wantField: "email.to[0]"},
		{name: "empty from", body: strings.Replace(validEmail, `"a@example.com"`, `""`, 1), wantField: "email.from"},
		{name: "subject with LF", body: strings.Replace(validEmail, `"Hi"`, `"Hi\nBcc: x@evil.example"`, 1), wantField: "email.subject"},
		{name: "no subject", body: strings.Replace(validEmail, `"subject":"Hi",`, ``, 1), wantField: "email.subject"},
		{name: "no body", body: strings.Replace(validEmail, `,"text":"Hello"`, ``, 1), wantField: "email.text"},
		{name: "template and subject", body: `{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"subject":"x","template":{"name":"reset"}}}`, wantField: "email.subject"},
		{name: "template and empty subject", body: `{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"subject":"","template":{"name":"reset"}}}`, wantField: "email.subject"},
		{name: "template data not an object", body: `{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"template":{"name":"reset","data":[1]}}}`, wantField: "email.template.data"},
		{name: "template unknown field", body: `{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"template":{"name":"reset","lang":"de"}}}`, wantField: "email.template.lang"},
		{name: "bad tag value", body: strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","tags":{"k":"a b"}`, 1), wantField: "email.tags.k"},
		{name: "header value with CR", body: strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","headers":{"X-A":"1\rX-B: 2"}`, 1), wantField: "email.headers.X-A"},
		{name: "header name with colon", body: strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","headers":{"X:A":"1"}`, 1), wantField: "email.headers.X:A"},
		{name: "webhook http url is the function's call (https only by default)", body: strings.Replace(validWebhook, `https://`, `http://`, 1)},
		{name: "webhook ftp url", body: strings.Replace(validWebhook, `https://`, `ftp://`, 1), wantField: "webhook.url"},
		{name: "webhook relative url", body: strings.Replace(validWebhook, `https://hooks.example.com/x`, `/x`, 1), wantField: "webhook.url"},
		{name: "webhook missing payload", body: strings.Replace(validWebhook, `,"payload":{"a":1}`, ``, 1), wantField: "webhook.payload"},
		{name: "webhook missing event_type", body: strings.Replace(validWebhook, `"event_type":"invoice.paid",`, ``, 1), wantField: "webhook.event_type"},
		{name: "version 1.0 is the number 1", body: strings.Replace(validEmail, `"version":1`, `"version":1.0`, 1)},
		{name: "version 1e0 is the number 1", body: strings.Replace(validEmail, `"version":1`, `"version":1e0`, 1)},
		{name: "metadata value null", body: strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","metadata":{"a":null}`, 1), wantField: "metadata.a"},
		{name: "email header value null", body: strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","headers":{"X-A":null}`, 1), wantField: "email.headers.X-A"},
		{name: "webhook header value null", body: strings.Replace(validWebhook, `"payload"`, `"headers":{"X-A":null},"payload"`, 1), wantField: "webhook.headers.X-A"},
		{name: "email header name over 126", body: strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","headers":{"X-`+strings.Repeat("a", 125)+`":"1"}`, 1), wantField: "email.headers.X-" + strings.Repeat("a", 125)},
		{name: "email header value non-ASCII", body: strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","headers":{"X-A":"ü"}`, 1), wantField: "email.headers.X-A"},
		{name: "email header value empty", body: strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","headers":{"X-A":""}`, 1), wantField: "email.headers.X-A"},
		{name: "webhook header name not a token", body: strings.Replace(validWebhook, `"payload"`, `"headers":{"X(A)":"1"},"payload"`, 1), wantField: "webhook.headers.X(A)"},
		{name: "webhook header value control character", body: strings.Replace(validWebhook, `"payload"`, `"headers":{"X-A":"a\u0001b"},"payload"`, 1), wantField: "webhook.headers.X-A"},
		{name: "webhook url upper-case scheme", body: strings.Replace(validWebhook, `https://`, `HTTPS://`, 1), wantField: "webhook.url"},
		{name: "webhook url without host", body: strings.Replace(validWebhook, `https://hooks.example.com/x`, `https://:1/x`, 1), wantField: "webhook.url"},
		// A host name is at most 253 characters (RFC 1035 §2.3.4, RFC 1123
		// §2.1); a longer one can never resolve, and its origin would be a
		// store key over DynamoDB's 2,048-byte partition key.
		{name: "webhook url host of 253 characters", body: strings.Replace(validWebhook, `hooks.example.com`, longHost(253), 1)},
		{name: "webhook url host of 253 characters, a port and userinfo", body: strings.Replace(validWebhook, `hooks.example.com`, `u:p@`+longHost(253)+`:8443`, 1)},
		{name: "webhook url host of 254 characters", body: strings.Replace(validWebhook, `hooks.example.com`, longHost(254), 1), wantField: "webhook.url"},
		{name: "webhook url host of 254 characters and a port", body: strings.Replace(validWebhook, `hooks.example.com`, longHost(254)+`:8443`, 1), wantField: "webhook.url"},
		{name: "webhook url host of 3,000 characters", body: strings.Replace(validWebhook, `hooks.example.com`, longHost(3000), 1), wantField: "webhook.url"},
		{name: "webhook url IPv6 host", body: strings.Replace(validWebhook, `hooks.example.com`, `[2001:db8::1]:8443`, 1)},
		{name: "webhook url port out of range", body: strings.Replace(validWebhook, `hooks.example.com`, `hooks.example.com:99999`, 1), wantField: "webhook.url", goOnly: true},
		{name: "timestamp lower-case t", body: strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","expires_at":"2026-11-30t09:15:00Z"`, 1), wantField: "expires_at"},
		{name: "timestamp leap second", body: strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","expires_at":"2026-12-31T23:59:60Z"`, 1), wantField: "expires_at"},
		{name: "timestamp comma fraction", body: strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","expires_at":"2026-11-30T09:15:00,5Z"`, 1), wantField: "expires_at"},
		{name: "timestamp one-digit hour", body: strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","created_at":"2026-11-30T9:15:00Z"`, 1), wantField: "created_at"},
		{name: "email header that adds recipients", body: strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","headers":{"Bcc":"x@evil.example"}`, 1), wantField: "email.headers.Bcc", goOnly: true},
		{name: "email list header allowed", body: strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","headers":{"list-unsubscribe":"<mailto:u@example.com>","X-Campaign":"c1"}`, 1)},
		{name: "subject with a zero-width space", body: strings.Replace(validEmail, `"Hi"`, `"Hi\u200bthere"`, 1), wantField: "email.subject"},
		{name: "subject with a NUL", body: strings.Replace(validEmail, `"Hi"`, `"Hi\u0000"`, 1), wantField: "email.subject"},
		{name: "subject of 999 characters", body: strings.Replace(validEmail, `"Hi"`, `"`+strings.Repeat("ä", 999)+`"`, 1), wantField: "email.subject"},
		{name: "display name with a bidi override", body: strings.Replace(validEmail, `"b@example.org"`, `"Bob \u202e <b@example.org>"`, 1), wantField: "email.to[0]"},
		{name: "text over MaxBodyBytes", body: strings.Replace(validEmail, `"Hello"`, `"`+strings.Repeat("a", notification.MaxBodyBytes+1)+`"`, 1), wantField: "email.text"},
		{name: "payload over MaxBodyBytes", body: strings.Replace(validWebhook, `{"a":1}`, `"`+strings.Repeat("a", notification.MaxBodyBytes)+`"`, 1), wantField: "webhook.payload", goOnly: true},
		{name: "webhook event_type wrong type", body: strings.Replace(validWebhook, `"invoice.paid"`, `7`, 1), wantField: "webhook.event_type"},
		{name: "metadata of 16 members", body: withMetadata(validWebhook, metadata(16, 8, 8))},
		{name: "metadata of 17 members", body: withMetadata(validWebhook, metadata(17, 8, 8)), wantField: "metadata"},
		{name: "metadata name of 64 characters", body: withMetadata(validEmail, metadata(1, 64, 1))},
		{name: "metadata name of 65 characters", body: withMetadata(validEmail, metadata(1, 65, 1)), wantField: "metadata"},
		{name: "metadata name of 64 two-byte characters", body: withMetadata(validEmail, `{"`+strings.Repeat("é", 64)+`":"v"}`)},
		{name: "metadata name of 65 two-byte characters", body: withMetadata(validEmail, `{"`+strings.Repeat("é", 65)+`":"v"}`), wantField: "metadata"},
		{name: "metadata value of 256 characters", body: withMetadata(validWebhook, metadata(3, 5, 256))},
		{name: "metadata value of 257 characters", body: withMetadata(validWebhook, metadata(3, 5, 257)), wantField: "metadata.k0000"},
		{name: "metadata value of 256 four-byte characters", body: withMetadata(validEmail, `{"trace":"`+strings.Repeat("😀", 256)+`"}`)},
		{name: "metadata value of 257 four-byte characters", body: withMetadata(validEmail, `{"trace":"`+strings.Repeat("😀", 257)+`"}`), wantField: "metadata.trace"},
		{name: "metadata of a 10 KiB value", body: withMetadata(validWebhook, `{"blob":"`+strings.Repeat("x", 10<<10)+`"}`), wantField: "metadata.blob"},
		{name: "empty metadata", body: withMetadata(validWebhook, `{}`)},
		// Metadata is written into operators' log lines: no control or
		// invisible formatting characters, which a JSON log escapes to 6
		// bytes each or which reorder what the operator reads (bidi
		// controls, CVE-2021-42574), in a name or a value.
		{name: "metadata value with NUL", body: withMetadata(validWebhook, `{"trace":"a\u0000b"}`), wantField: "metadata.trace"},
		{name: "metadata value with BEL", body: withMetadata(validWebhook, `{"trace":"a\u0007b"}`), wantField: "metadata.trace"},
		{name: "metadata value with a newline", body: withMetadata(validEmail, `{"trace":"a\nb"}`), wantField: "metadata.trace"},
		{name: "metadata value with a C1 control", body: withMetadata(validEmail, `{"trace":"a\u0085b"}`), wantField: "metadata.trace"},
		{name: "metadata value with a right-to-left override", body: withMetadata(validEmail, `{"tenant":"acme\u202Egpj.exe"}`), wantField: "metadata.tenant"},
		{name: "metadata value with a zero-width space", body: withMetadata(validEmail, `{"tenant":"ac\u200Bme"}`), wantField: "metadata.tenant"},
		{name: "metadata value of 256 control characters", body: withMetadata(validEmail, `{"t":"`+strings.Repeat(`\u0001`, 256)+`"}`), wantField: "metadata.t"},
		{name: "metadata name with a byte order mark", body: withMetadata(validWebhook, `{"\uFEFFtrace":"v"}`), wantField: "metadata"},
		{name: "metadata name with DEL", body: withMetadata(validWebhook, `{"tr\u007Face":"v"}`), wantField: "metadata"},
		{name: "metadata value of visible non-ASCII", body: withMetadata(validEmail, `{"tenant":"Zürich — 東京 😀","tab-free":"a b"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := notification.Parse([]byte(tt.body))
			valid := tt.wantField == "" && !tt.unreadable
			if valid {
				require.NoError(t, err)
				require.NotNil(t, m)
			} else {
				require.Error(t, err)
				require.Nil(t, m)
				require.Equal(t, tt.wantField, problemFields(t, err)[0], "error: %v", err)
			}
			require.Equal(t, valid || tt.goOnly, schemaValid(t, schema, []byte(tt.body)), "the schema must agree with Parse")
		})
	}
}

// longHost is a host name of n characters: labels of 63 "a" and dots.
func longHost(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strings.Repeat("a", min(63, n-b.Len())))
	}
	return b.String()[:n]
}

// metadata is a metadata object of n members, names of keyLen characters
// (k0000, k0001, … padded with x) and values of valueLen.
func metadata(n, keyLen, valueLen int) string {
	parts := make([]string, n)
	for i := range parts {
		k := fmt.Sprintf("k%04d", i)
		k += strings.Repeat("x", max(keyLen-len(k), 0))
		parts[i] = fmt.Sprintf("%q:%q", k[:keyLen], strings.Repeat("v", valueLen))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// withMetadata adds "metadata": m to body, a message object.
func withMetadata(body, m string) string {
	return strings.Replace(body, `{"version":1,`, `{"version":1,"metadata":`+m+`,`, 1)
}

// TestSchemaHostLimitIsGos: the JSON Schema's URL patterns bound a host
// name (or an IPv6 literal) with notification.MaxHostChars.
func TestSchemaHostLimitIsGos(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("notification.v1.schema.json")
	require.NoError(t, err)
	bound := fmt.Sprintf("{1,%d}", notification.MaxHostChars)
	require.Equal(t, 4, strings.Count(string(raw), bound), "webhook.url and chat.url, each a name or a bracketed literal")
}

// TestSchemaMetadataLimitsAreGos: the JSON Schema bounds metadata with
// the Go constants.
func TestSchemaMetadataLimitsAreGos(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("notification.v1.schema.json")
	require.NoError(t, err)
	var schema struct {
		Properties struct {
			Metadata struct {
				MaxProperties int `json:"maxProperties"`
				PropertyNames struct {
					MaxLength int    `json:"maxLength"`
					Pattern   string `json:"pattern"`
				} `json:"propertyNames"`
				AdditionalProperties struct {
					MaxLength int    `json:"maxLength"`
					Pattern   string `json:"pattern"`
				} `json:"additionalProperties"`
			} `json:"metadata"`
		} `json:"properties"`
		Defs struct {
			Email struct {
				Properties struct {
					Subject struct {
						Pattern string `json:"pattern"`
					} `json:"subject"`
				} `json:"properties"`
			} `json:"email"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(raw, &schema))
	m := schema.Properties.Metadata
	require.Equal(t, notification.MaxMetadataEntries, m.MaxProperties)
	require.Equal(t, notification.MaxMetadataKeyChars, m.PropertyNames.MaxLength)
	require.Equal(t, notification.MaxMetadataValueChars, m.AdditionalProperties.MaxLength)
	// Names and values refuse the characters a subject refuses (Go's
	// hiddenChars, for both).
	visible := schema.Defs.Email.Properties.Subject.Pattern
	require.NotEmpty(t, visible)
	require.Equal(t, visible, m.PropertyNames.Pattern)
	require.Equal(t, visible, m.AdditionalProperties.Pattern)
}

// TestSamples checks every shared sample against expected.tsv, with both the
// Go validator and the JSON Schema.
func TestSamples(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	f, err := os.Open(filepath.Join(casesDir, "expected.tsv"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	n := 0
	for sc.Scan() {
		file, outcome, ok := strings.Cut(sc.Text(), "\t")
		require.True(t, ok, "line %q", sc.Text())
		n++
		t.Run(file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(casesDir, file))
			require.NoError(t, err)
			_, perr := notification.Parse(body)
			svalid := schemaValid(t, schema, body)
			if !strings.HasPrefix(outcome, "dead-lettered") {
				require.NoError(t, perr)
				require.True(t, svalid, "schema rejects %s", file)
				return
			}
			require.Error(t, perr)
			require.False(t, svalid, "schema accepts poison %s", file)
			// "reason names email.to" / "reason: invalid JSON"
			want := outcome[strings.LastIndex(outcome, " ")+1:]
			if strings.Contains(outcome, "invalid JSON") {
				want = "invalid JSON"
			}
			require.Contains(t, perr.Error(), want)
		})
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 15, n, "every sample is listed")
}

func TestMessageRoundTrip(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := &notification.Message{
		Version:   notification.Version,
		ID:        "order-42",
		Channel:   notification.ChannelWebhook,
		ExpiresAt: &exp,
		Webhook: &notification.Webhook{
			URL: "https://hooks.example.com/orders", EventType: "order.shipped",
			Payload: json.RawMessage(`{"order":42}`),
		},
	}
	require.NoError(t, m.Validate())
	body, err := json.Marshal(m)
	require.NoError(t, err)
	got, err := notification.Parse(body)
	require.NoError(t, err)
	require.Equal(t, m, got)
	require.True(t, got.Expired(exp))
	require.False(t, got.Expired(exp.Add(-time.Second)))
}

func TestValidateRejectsBuiltMessage(t *testing.T) {
	t.Parallel()
	m := &notification.Message{Version: 1, ID: "x", Channel: notification.ChannelEmail, Email: &notification.Email{Subject: "s", Text: "t"}}
	err := m.Validate()
	require.Equal(t, []string{"email.to"}, problemFields(t, err))
}

func TestIDOfNamesInvalidMessages(t *testing.T) {
	t.Parallel()
	require.Equal(t, "poison-types", notification.IDOf([]byte(`{"version":1,"id":"poison-types","channel":"email","email":{"to":123}}`)))
	require.Equal(t, "", notification.IDOf([]byte(`{"version":1,"id":"bad id"}`)), "not a valid id")
	require.Equal(t, "", notification.IDOf([]byte(`{"version":1,"id":7}`)))
	require.Equal(t, "", notification.IDOf([]byte(`{"version":1,"id":"x"`)), "not JSON")
}
