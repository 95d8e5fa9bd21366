package notification_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// requireProblem checks that Parse rejects body with exactly one problem,
// of field, whose message contains msg.
func requireProblem(t *testing.T, body, field, msg string) {
	t.Helper()
	m, err := notification.Parse([]byte(body))
	require.Error(t, err, "body %s", body)
	require.Nil(t, m)
	require.Equal(t, []string{field}, problemFields(t, err), "error: %v", err)
	require.Contains(t, err.Error(), msg)
}

const duplicate = "duplicate member name"

// TestDuplicateMemberNames checks that an object naming a member twice is
// invalid at every level: parsers disagree about which value wins, so a
// value that passed one validator could be replaced by another. Names are
// compared after unescaping.
func TestDuplicateMemberNames(t *testing.T) {
	t.Parallel()
	email := func(members string) string {
		return `{"version":1,"id":"n-1","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"Hi","text":"Hello"` + members + `}}`
	}
	webhook := func(members string) string {
		return `{"version":1,"id":"n-2","channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"invoice.paid"` + members + `}}`
	}
	template := func(members string) string {
		return `{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"template":{"name":"reset"` + members + `}}}`
	}
	tests := []struct {
		name, body, field string
	}{
		// Top level.
		{"id twice", strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","id":"n-9"`, 1), "id"},
		{"id escaped", strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","\u0069d":"n-9"`, 1), "id"},
		{"version twice", strings.Replace(validEmail, `"version":1`, `"version":1,"version":2`, 1), "version"},
		{"channel twice", strings.Replace(validEmail, `"channel":"email"`, `"channel":"email","channel":"webhook"`, 1), "channel"},
		{"channel object twice", validEmail[:len(validEmail)-1] + `,"email":{"to":["evil@example.net"],"subject":"x","text":"y"}}`, "email"},
		{"unknown member twice", strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","x":1,"x":1`, 1), "x"},
		{"metadata twice", strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","metadata":{},"metadata":{}`, 1), "metadata"},
		{"expires_at escaped", strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","expires_at":"2026-12-01T00:00:00Z","expires\u005fat":"2099-12-01T00:00:00Z"`, 1), "expires_at"},
		// metadata.
		{"metadata member twice", strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","metadata":{"tenant":"acme","tenant":"evil"}`, 1), "metadata.tenant"},
		{"metadata member escaped", strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","metadata":{"tenant":"acme","\u0074enant":"evil"}`, 1), "metadata.tenant"},
		// email.
		{"email.to twice", email(`,"to":["evil@example.net"]`), "email.to"},
		{"email.subject escaped", email(`,"\u0073ubject":"Other"`), "email.subject"},
		{"email.from escaped with a surrogate-free escape", email(`,"fro\u006d":"evil@example.net"`), "email.from"},
		{"email.headers member twice", email(`,"headers":{"X-A":"1","X-A":"2"}`), "email.headers.X-A"},
		{"email.headers member escaped", email(`,"headers":{"X-A":"1","X-\u0041":"2"}`), "email.headers.X-A"},
		{"email.tags member twice", email(`,"tags":{"k":"a","k":"b"}`), "email.tags.k"},
		{"email.tags twice", email(`,"tags":{},"tags":{}`), "email.tags"},
		// email.template and its data.
		{"template name twice", template(`,"name":"other"`), "email.template.name"},
		{"template data member twice", template(`,"data":{"x":1,"x":2}`), "email.template.data.x"},
		{"template data member escaped", template(`,"data":{"x":1,"\u0078":2}`), "email.template.data.x"},
		{"template data nested", template(`,"data":{"a":{"b":[1,{"c":1,"c":2}]}}`), "email.template.data.a.b[1].c"},
		// webhook.
		{"webhook.url twice", webhook(`,"payload":{},"url":"https://evil.example.net/"`), "webhook.url"},
		{"webhook.url escaped", webhook(`,"payload":{},"\u0075rl":"https://evil.example.net/"`), "webhook.url"},
		{"webhook.payload twice", webhook(`,"payload":{},"payload":[]`), "webhook.payload"},
		{"webhook.headers member twice", webhook(`,"payload":{},"headers":{"Authorization":"a","Authorization":"b"}`), "webhook.headers.Authorization"},
		{"webhook.headers member escaped", webhook(`,"payload":{},"headers":{"X-A":"1","\u0058-A":"2"}`), "webhook.headers.X-A"},
		// webhook.payload, at any depth.
		{"payload member twice", webhook(`,"payload":{"amount":1,"amount":1000}`), "webhook.payload.amount"},
		{"payload member escaped", webhook(`,"payload":{"amount":1,"\u0061mount":1000}`), "webhook.payload.amount"},
		{"payload nested in an array", webhook(`,"payload":[{"a":1},{"b":1,"b":2}]`), "webhook.payload[1].b"},
		{"payload nested in the first array element", webhook(`,"payload":[{"b":1,"b":2}]`), "webhook.payload[0].b"},
		{"payload nested in arrays", webhook(`,"payload":[[0,{"c":1,"c":2}]]`), "webhook.payload[0][1].c"},
		{"payload deep", webhook(`,"payload":{"a":{"b":{"c":{"d":1,"d":1}}}}`), "webhook.payload.a.b.c.d"},
		{"payload empty name twice", webhook(`,"payload":{"":1,"":2}`), "webhook.payload."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireProblem(t, tt.body, tt.field, duplicate)
		})
	}
}

// TestDistinctNamesAreNotDuplicates checks that names differing in case or
// in characters that only look alike are two members, as JSON says.
func TestDistinctNamesAreNotDuplicates(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		strings.Replace(validWebhook, `{"a":1}`, `{"a":1,"A":2,"á":3,"a ":4}`, 1),
		strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","metadata":{"tenant":"a","Tenant":"b"}`, 1),
		strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","tags":{"k":"a","K":"b"}`, 1),
		// The same name in different objects.
		strings.Replace(validWebhook, `{"a":1}`, `{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}`, 1),
	} {
		_, err := notification.Parse([]byte(body))
		require.NoError(t, err, "body %s", body)
	}
}

// TestMemberNamesMatchExactly checks that a member name in another case is
// an unknown field, not the field (encoding/json matches struct fields
// case-insensitively, which would let "ID" or "URL" stand in for the field
// a schema validator checked).
func TestMemberNamesMatchExactly(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, field string }{
		{"ID beside id", strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","ID":"other"`, 1), "ID"},
		{"Channel beside channel", strings.Replace(validEmail, `"channel":"email"`, `"channel":"email","Channel":"webhook"`, 1), "Channel"},
		{"Email for email", strings.Replace(validEmail, `"email":{`, `"Email":{`, 1), "Email"},
		{"email.To beside to", strings.Replace(validEmail, `"to":`, `"To":["evil@example.net"],"to":`, 1), "email.To"},
		{"email.SUBJECT", strings.Replace(validEmail, `"subject":"Hi"`, `"subject":"Hi","SUBJECT":"x"`, 1), "email.SUBJECT"},
		{"webhook.URL beside url", strings.Replace(validWebhook, `"url":`, `"URL":"https://evil.example.net","url":`, 1), "webhook.URL"},
		{"webhook.Payload", strings.Replace(validWebhook, `"payload":`, `"Payload":1,"payload":`, 1), "webhook.Payload"},
		{"email.template.Name", `{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"template":{"name":"reset","Name":"other"}}}`, "email.template.Name"},
		// Long s (U+017F) folds to s in encoding/json's matching.
		{"long s", strings.Replace(validEmail, `"subject":"Hi"`, `"subject":"Hi","\u017fubject":"x"`, 1), "email.\u017fubject"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := notification.Parse([]byte(tt.body))
			require.Nil(t, m)
			require.Contains(t, problemFields(t, err), tt.field, "error: %v", err)
			require.Contains(t, err.Error(), tt.field+": unknown field")
		})
	}
}

// TestHeaderNamesDifferingInCase checks that two header names that differ
// only in case are rejected: header names are case-insensitive, so which
// value is sent would be the sender's choice.
func TestHeaderNamesDifferingInCase(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	for _, tt := range []struct {
		body   string
		fields []string
	}{
		{strings.Replace(validWebhook, `"payload"`, `"headers":{"X-Tenant":"acme","x-tenant":"evil"},"payload"`, 1), []string{"webhook.headers.x-tenant"}},
		{strings.Replace(validWebhook, `"payload"`, `"headers":{"x-a":"1","X-A":"2","X-a":"3"},"payload"`, 1), []string{"webhook.headers.X-a", "webhook.headers.x-a"}},
		{strings.Replace(validEmail, `"text":"Hello"`, `"text":"Hello","headers":{"List-Id":"a","LIST-ID":"b"}`, 1), []string{"email.headers.List-Id"}},
	} {
		_, err := notification.Parse([]byte(tt.body))
		require.Equal(t, tt.fields, problemFields(t, err), "error: %v", err)
		require.Contains(t, err.Error(), "case-insensitive")
		require.True(t, schemaValid(t, schema, []byte(tt.body)), "a rule JSON Schema cannot express")
	}
}

func TestIDOfDuplicatesAndExactNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ body, want string }{
		{`{"id":"a","id":"b"}`, ""},
		{`{"id":"a","\u0069d":"a"}`, ""},
		{`{"id":"a","id":7}`, ""},
		{`{"ID":"a"}`, ""},
		{`{"Id":"a","id":"b"}`, "b"},
		{`{"\u0069d":"a"}`, "a"},
		{`{"id":"a","webhook":{"payload":{"x":1,"x":2}}}`, "a"},
		{`{"id":"a"} {"id":"b"}`, ""},
		{`{"id":"a","x":[1,}`, ""},
		{`{"id":7,"id":"a","id":"b"}`, ""},
		{`{"id":"a","id":7,"id":"b"}`, ""},
	} {
		require.Equal(t, tt.want, notification.IDOf([]byte(tt.body)), "body %s", tt.body)
	}
}

// TestParseDoesNotAliasBody checks that the message owns its bytes.
func TestParseDoesNotAliasBody(t *testing.T) {
	t.Parallel()
	body := []byte(validWebhook)
	m, err := notification.Parse(body)
	require.NoError(t, err)
	for i := range body {
		body[i] = ' '
	}
	require.Equal(t, "n-2", m.ID)
	require.Equal(t, "https://hooks.example.com/x", m.Webhook.URL)
	require.JSONEq(t, `{"a":1}`, string(m.Webhook.Payload))
}

// TestProblemOrder checks the full reason of bodies that break several
// rules: the problems come in the documented order (structure first, names
// sorted within each rule, then the first wrong type, then values), whatever
// the order of the members in the body.
func TestProblemOrder(t *testing.T) {
	t.Parallel()
	tests := []struct{ body, want string }{
		{
			`{"zeta":1,"version":1,"alpha":null,"id":"x","channel":"email","webhook":{},"created_at":"yesterday","metadata":{"b":null,"a":null},"email":{"z":1,"y":null,"headers":{"X-B":null,"X-A":null},"template":{"q":1,"name":null}}}`,
			`invalid message: alpha: must not be null; alpha: unknown field; zeta: unknown field; webhook: not allowed when channel is "email"; created_at: must be an RFC 3339 timestamp like 2026-11-30T09:15:00Z; metadata.a: must be a string, not null; metadata.b: must be a string, not null; email.y: must not be null; email.y: unknown field; email.z: unknown field; email.headers.X-A: must be a string, not null; email.headers.X-B: must be a string, not null; email.template.name: must not be null; email.template.q: unknown field`,
		},
		{
			`{"version":1,"id":7,"channel":"webhook","webhook":{"url":"https://h.example.com","event_type":"x","payload":1,"headers":{"X-A":1}}}`,
			`invalid message: id: must be a string, not a JSON number`,
		},
		{
			`{"version":1,"id":"x","channel":"email","email":{"to":["b@example.org","a@@b"],"subject":"s","text":"t","tags":{"b":"x y","a":"x y"},"headers":{"Bcc":"x","X-A":"\r"}}}`,
			`invalid message: email.to[1]: not an RFC 5322 mailbox: mail: missing '@' or angle-addr; email.tags.a: tag names and values must be 1–256 characters of A-Z a-z 0-9 _ -; email.tags.b: tag names and values must be 1–256 characters of A-Z a-z 0-9 _ -; email.headers.X-A: must not contain CR or LF; email.headers.Bcc: not a header a producer may set (allowed: X-*, List-*, In-Reply-To, References, Auto-Submitted, Precedence, Keywords, Comments, Importance, Priority)`,
		},
	}
	for _, tt := range tests {
		_, err := notification.Parse([]byte(tt.body))
		require.EqualError(t, err, tt.want)
	}
}

// TestParseWholeBody checks that the body is one JSON value: anything but
// whitespace after it is invalid JSON.
func TestParseWholeBody(t *testing.T) {
	t.Parallel()
	for _, body := range []string{validEmail + `{}`, validEmail + ` x`, validEmail + `,`, validEmail + `]`, `[1] [2]`} {
		_, err := notification.Parse([]byte(body))
		require.ErrorContains(t, err, "invalid JSON", "body %s", body)
	}
	_, err := notification.Parse([]byte(" \n\t" + validEmail + "\r\n "))
	require.NoError(t, err)
}

// TestTimestampAsEncodingJSONReadsIt checks that a timestamp is read as
// encoding/json's time.Time reads it, from the JSON string as written: an
// escaped character that unescapes to a valid timestamp is rejected.
func TestTimestampAsEncodingJSONReadsIt(t *testing.T) {
	t.Parallel()
	body := strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","created_at":"2026\u002d11-30T09:15:00Z"`, 1)
	_, err := notification.Parse([]byte(body))
	require.ErrorContains(t, err, "parsing time")
	m, err := notification.Parse([]byte(strings.Replace(validEmail, `"id":"n-1"`, `"id":"n-1","created_at":"2026-11-30T09:15:00+01:00"`, 1)))
	require.NoError(t, err)
	require.Equal(t, "2026-11-30T08:15:00Z", m.CreatedAt.UTC().Format(time.RFC3339))
}

// TestSameHeaderNamesTheFirstSpelling: of three spellings of one header
// name, each later one is reported as the same header as the first in
// sorted order.
func TestSameHeaderNamesTheFirstSpelling(t *testing.T) {
	t.Parallel()
	body := `{"version":1,"id":"n-1","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"Hi","text":"Hello","headers":{"x-a":"3","X-a":"2","X-A":"1"}}}`
	_, err := notification.Parse([]byte(body))
	require.Equal(t, []string{"email.headers.X-a", "email.headers.x-a"}, problemFields(t, err))
	require.Equal(t, 2, strings.Count(err.Error(), `the same header as "X-A"`), "%v", err)
}

// TestInvalidJSONSaysWhereAndWhy: a body cut short is reported with the
// tokenizer's own reason and byte offset.
func TestInvalidJSONSaysWhereAndWhy(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"version":1,`, `{"version":1,"id":"n-1"`, `{"version"`} {
		_, err := notification.Parse([]byte(body))
		require.ErrorContains(t, err, "invalid JSON: ", body)
		require.ErrorContains(t, err, "(at byte", body)
		require.NotContains(t, err.Error(), "no token", body)
	}
}
