package notification_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// TestParseExactLimits: a value exactly at a contract limit is accepted and
// one past it rejected, naming the field, for every limit of v1.
func TestParseExactLimits(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	recipients := func(n int) string {
		to := make([]string, n)
		for i := range to {
			to[i] = fmt.Sprintf(`"r%d@example.org"`, i)
		}
		// split over to, cc and bcc: the limit counts all three
		third := n / 3
		return `"to":[` + strings.Join(to[:third], ",") + `],"cc":[` + strings.Join(to[third:2*third], ",") + `],"bcc":[` + strings.Join(to[2*third:], ",") + `]`
	}
	email := func(fields string) string {
		return `{"version":1,"id":"n-1","channel":"email","email":{"from":"a@example.com",` + fields + `}}`
	}
	text := func(n int) string { return `"subject":"s","text":"` + strings.Repeat("a", n) + `"` }
	html := func(n int) string { return `"subject":"s","html":"` + strings.Repeat("a", n) + `"` }
	payload := func(n int) string { // a JSON string of n bytes, quotes included
		return `{"version":1,"id":"n-1","channel":"webhook","webhook":{"url":"https://h.example.com","event_type":"x","payload":"` + strings.Repeat("a", n-2) + `"}}`
	}
	const one = `"to":["b@example.org"]`
	for _, tc := range []struct {
		name, body string
		wantField  string // "" accepted
		goOnly     bool   // the JSON Schema cannot express the rule
	}{
		{name: "50 recipients", body: email(recipients(notification.MaxRecipients) + `,` + text(1))},
		{name: "51 recipients", body: email(recipients(notification.MaxRecipients+1) + `,` + text(1)), wantField: "email.to", goOnly: true},
		{name: "text of the maximum size", body: email(one + `,` + text(notification.MaxBodyBytes))},
		{name: "text a byte over", body: email(one + `,` + text(notification.MaxBodyBytes+1)), wantField: "email.text"},
		{name: "html of the maximum size", body: email(one + `,` + html(notification.MaxBodyBytes))},
		{name: "html a byte over", body: email(one + `,` + html(notification.MaxBodyBytes+1)), wantField: "email.html"},
		{name: "payload of the maximum size", body: payload(notification.MaxBodyBytes)},
		{name: "payload a byte over", body: payload(notification.MaxBodyBytes + 1), wantField: "webhook.payload", goOnly: true},
		{name: "subject of the maximum length", body: email(one + `,"subject":"` + strings.Repeat("ä", notification.MaxSubjectLength) + `","text":"t"`)},
		{name: "subject a character over", body: email(one + `,"subject":"` + strings.Repeat("ä", notification.MaxSubjectLength+1) + `","text":"t"`), wantField: "email.subject"},
		{name: "id of the maximum length", body: strings.Replace(email(one+`,`+text(1)), `"n-1"`, `"`+strings.Repeat("i", notification.MaxIDLength)+`"`, 1)},
		{name: "id a character over", body: strings.Replace(email(one+`,`+text(1)), `"n-1"`, `"`+strings.Repeat("i", notification.MaxIDLength+1)+`"`, 1), wantField: "id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := notification.Parse([]byte(tc.body))
			if tc.wantField == "" {
				require.NoError(t, err)
				require.NotNil(t, m)
			} else {
				require.Nil(t, m)
				require.Equal(t, tc.wantField, problemFields(t, err)[0], "error: %v", err)
			}
			require.Equal(t, tc.wantField == "" || tc.goOnly, schemaValid(t, schema, []byte(tc.body)), "the schema must agree with Parse")
		})
	}
}

// TestParseWebhookPortRange: an explicit port is accepted from 1 to 65535
// (RFC 6335's range of TCP ports) and rejected outside it.
func TestParseWebhookPortRange(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	body := func(host string) string {
		return `{"version":1,"id":"n-1","channel":"webhook","webhook":{"url":"https://` + host + `/x","event_type":"x","payload":{}}}`
	}
	for host, ok := range map[string]bool{
		"h.example.com:1":                    true,
		"h.example.com:8443":                 true,
		"h.example.com:65535":                true,
		"h.example.com:0":                    false,
		"h.example.com:65536":                false,
		"h.example.com:99999999999999999999": false,
	} {
		_, err := notification.Parse([]byte(body(host)))
		if ok {
			require.NoError(t, err, host)
			require.True(t, schemaValid(t, schema, []byte(body(host))), host)
		} else {
			require.Equal(t, "webhook.url", problemFields(t, err)[0], host)
		}
	}
}

// TestParseTemplateDataIsOptional: a template email may leave out data, and
// data, when given, must be an object.
func TestParseTemplateDataIsOptional(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	for body, wantField := range map[string]string{
		`{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"template":{"name":"reset"}}}`:            "",
		`{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"template":{"name":"reset","data":{}}}}`:  "",
		`{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"template":{"name":"reset","data":[1]}}}`: "email.template.data",
		`{"version":1,"id":"t","channel":"email","email":{"to":["b@example.org"],"template":{"name":"reset","data":"x"}}}`: "email.template.data",
	} {
		_, err := notification.Parse([]byte(body))
		if wantField == "" {
			require.NoError(t, err, body)
		} else {
			require.Equal(t, wantField, problemFields(t, err)[0], body)
		}
		require.Equal(t, wantField == "", schemaValid(t, schema, []byte(body)), body)
	}
}

// TestParseNonObjects: a body that is JSON but not an object is refused as
// a whole (no field named); a channel object that is not an object names
// its field.
func TestParseNonObjects(t *testing.T) {
	t.Parallel()
	_, err := notification.Parse([]byte(`[1,2]`))
	require.ErrorContains(t, err, "the body must be a JSON object")
	require.Equal(t, []string{""}, problemFields(t, err))
	_, err = notification.Parse([]byte(`{"version":1,"id":"n-1","channel":"email","email":5}`))
	require.ErrorContains(t, err, "email: must be an object")
}
