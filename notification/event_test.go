package notification_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

const (
	validEvent = `{"version":1,"id":"evt_1","channel":"event","event":{"tenant":"acme","type":"invoice.paid","payload":{"amount":42}}}`
	epID       = "ep_01jh0000000000000000000000"
	// validEndpointWebhook and validEndpointChat are deliveries the fan-out
	// makes for one endpoint.
	validEndpointWebhook = `{"version":1,"id":"msg_abc","channel":"webhook","tenant":"acme","event_id":"evt_1","webhook":{"endpoint":"` + epID + `","event_type":"invoice.paid","payload":{"amount":42}}}`
	validEndpointChat    = `{"version":1,"id":"msg_abd","channel":"chat","tenant":"acme","event_id":"evt_1","chat":{"endpoint":"` + epID + `","text":"invoice.paid for acme: {}"}}`
)

// TestParseEvents: the event channel and deliveries that name a registered
// endpoint, each kind of bad input several ways; the JSON Schema agrees
// with Parse on every body.
func TestParseEvents(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	ev := func(old, new string) string { return strings.Replace(validEvent, old, new, 1) }
	hook := func(old, new string) string { return strings.Replace(validEndpointWebhook, old, new, 1) }
	chat := func(old, new string) string { return strings.Replace(validEndpointChat, old, new, 1) }
	tests := []struct {
		name       string
		body       string
		wantField  string
		goOnly     bool
		unreadable bool
	}{
		{name: "valid event", body: validEvent},
		{name: "event for one endpoint", body: ev(`"payload"`, `"endpoint":"`+epID+`","payload"`)},
		{name: "event payload an array", body: ev(`{"amount":42}`, `[1,"two"]`)},
		{name: "event payload a string", body: ev(`{"amount":42}`, `"paid"`)},
		{name: "event payload a number", body: ev(`{"amount":42}`, `0`)},
		{name: "tenant of the id alphabet, 128 characters", body: ev(`"acme"`, `"`+strings.Repeat("a.b_c:d-", 16)+`"`)},
		{name: "type of 128 characters", body: ev(`"invoice.paid"`, `"`+strings.Repeat("t", 128)+`"`)},
		{name: "event with created_at, expires_at and metadata", body: ev(`"channel":"event"`, `"channel":"event","created_at":"2026-12-05T01:00:00Z","expires_at":"2026-12-06T01:00:00Z","metadata":{"request":"r1"}`)},

		// missing or bad tenant
		{name: "tenant missing", body: ev(`"tenant":"acme",`, ``), wantField: "event.tenant"},
		{name: "tenant empty", body: ev(`"tenant":"acme"`, `"tenant":""`), wantField: "event.tenant"},
		{name: "tenant with a space", body: ev(`"acme"`, `"ac me"`), wantField: "event.tenant"},
		{name: "tenant with a slash", body: ev(`"acme"`, `"acme/eu"`), wantField: "event.tenant"},
		{name: "tenant of 129 characters", body: ev(`"acme"`, `"`+strings.Repeat("a", 129)+`"`), wantField: "event.tenant"},
		{name: "tenant a number", body: ev(`"acme"`, `7`), wantField: "event.tenant"},
		{name: "tenant null", body: ev(`"acme"`, `null`), wantField: "event.tenant"},
		{name: "tenant non-ASCII", body: ev(`"acme"`, `"äcme"`), wantField: "event.tenant"},

		// bad type: alphabet and length
		{name: "type missing", body: ev(`"type":"invoice.paid",`, ``), wantField: "event.type"},
		{name: "type empty", body: ev(`"invoice.paid"`, `""`), wantField: "event.type"},
		{name: "type with a colon", body: ev(`"invoice.paid"`, `"invoice:paid"`), wantField: "event.type"},
		{name: "type with a wildcard", body: ev(`"invoice.paid"`, `"invoice.*"`), wantField: "event.type"},
		{name: "type with a space", body: ev(`"invoice.paid"`, `"invoice paid"`), wantField: "event.type"},
		{name: "type of 129 characters", body: ev(`"invoice.paid"`, `"`+strings.Repeat("t", 129)+`"`), wantField: "event.type"},
		{name: "type an array", body: ev(`"invoice.paid"`, `["invoice.paid"]`), wantField: "event.type"},

		// payload
		{name: "payload missing", body: ev(`,"payload":{"amount":42}`, ``), wantField: "event.payload"},
		{name: "payload null", body: ev(`{"amount":42}`, `null`), wantField: "event.payload"},
		{name: "payload not JSON", body: ev(`{"amount":42}`, `{amount:42}`), unreadable: true},
		{name: "payload with a member named twice", body: ev(`{"amount":42}`, `{"a":1,"a":2}`), wantField: "event.payload.a", goOnly: true},
		{name: "payload over MaxBodyBytes", body: ev(`{"amount":42}`, `"`+strings.Repeat("a", notification.MaxBodyBytes)+`"`), wantField: "event.payload", goOnly: true},

		// malformed endpoint id
		{name: "event endpoint without prefix", body: ev(`"payload"`, `"endpoint":"01jh0000000000000000000000","payload"`), wantField: "event.endpoint"},
		{name: "event endpoint too short", body: ev(`"payload"`, `"endpoint":"ep_01jh","payload"`), wantField: "event.endpoint"},
		{name: "event endpoint too long", body: ev(`"payload"`, `"endpoint":"`+epID+`0","payload"`), wantField: "event.endpoint"},
		{name: "event endpoint upper-case", body: ev(`"payload"`, `"endpoint":"ep_01JH0000000000000000000000","payload"`), wantField: "event.endpoint"},
		{name: "event endpoint with a U (not Crockford)", body: ev(`"payload"`, `"endpoint":"ep_01ju0000000000000000000000","payload"`), wantField: "event.endpoint"},
		{name: "event endpoint beyond 128 bits", body: ev(`"payload"`, `"endpoint":"ep_81jh0000000000000000000000","payload"`), wantField: "event.endpoint"},
		{name: "event endpoint with a dash", body: ev(`"payload"`, `"endpoint":"ep_01jh000000000000000000000-","payload"`), wantField: "event.endpoint"},
		{name: "event endpoint empty", body: ev(`"payload"`, `"endpoint":"","payload"`), wantField: "event.endpoint"},

		// the event object itself
		{name: "event object missing", body: `{"version":1,"id":"e","channel":"event"}`, wantField: "event"},
		{name: "event object null", body: `{"version":1,"id":"e","channel":"event","event":null}`, wantField: "event"},
		{name: "event object an array", body: `{"version":1,"id":"e","channel":"event","event":[]}`, wantField: "event"},
		{name: "event unknown field", body: ev(`"payload"`, `"url":"https://x.example","payload"`), wantField: "event.url"},
		{name: "event with a webhook object", body: ev(`"channel":"event"`, `"channel":"event","webhook":{}`), wantField: "webhook"},
		{name: "webhook with an event object", body: strings.Replace(validWebhook, `"channel":"webhook"`, `"channel":"webhook","event":{}`, 1), wantField: "event"},
		{name: "event with a top-level tenant", body: ev(`"channel":"event"`, `"channel":"event","tenant":"acme"`), wantField: "tenant"},

		// deliveries to a registered endpoint
		{name: "webhook delivery to an endpoint", body: validEndpointWebhook},
		{name: "webhook delivery to an endpoint without event_id", body: hook(`"event_id":"evt_1",`, ``)},
		{name: "chat delivery to an endpoint", body: validEndpointChat},
		{name: "chat delivery text of 40,000 characters", body: chat(`"invoice.paid for acme: {}"`, `"`+strings.Repeat("x", notification.MaxChatTextChars)+`"`)},

		// both url and endpoint, neither
		{name: "webhook url and endpoint", body: hook(`"endpoint"`, `"url":"https://h.example.com","endpoint"`), wantField: "webhook.endpoint"},
		{name: "webhook endpoint and url after it", body: hook(`"event_type"`, `"url":"https://h.example.com","event_type"`), wantField: "webhook.endpoint"},
		{name: "webhook neither url nor endpoint", body: hook(`"endpoint":"`+epID+`",`, ``), wantField: "webhook.url"},
		{name: "inline webhook without url", body: strings.Replace(validWebhook, `"url":"https://hooks.example.com/x",`, ``, 1), wantField: "webhook.url"},
		{name: "chat endpoint and url", body: chat(`"text"`, `"url":"https://hooks.slack.com/services/T/B/x","text"`), wantField: "chat.url"},
		{name: "chat endpoint and service", body: chat(`"text"`, `"service":"slack","text"`), wantField: "chat.service"},
		{name: "chat neither url nor endpoint", body: `{"version":1,"id":"c","channel":"chat","chat":{"service":"slack","text":"hi"}}`, wantField: "chat.url"},
		{name: "chat nothing", body: `{"version":1,"id":"c","channel":"chat","chat":{"text":"hi"}}`, wantField: "chat.service"},

		// malformed endpoint references
		{name: "webhook endpoint lower prefix missing", body: hook(epID, "EP_01jh0000000000000000000000"), wantField: "webhook.endpoint"},
		{name: "webhook endpoint too short", body: hook(epID, "ep_1"), wantField: "webhook.endpoint"},
		{name: "webhook endpoint with a slash", body: hook(epID, "ep_01jh00000000000000000000/0"), wantField: "webhook.endpoint"},
		{name: "webhook endpoint empty", body: hook(epID, ""), wantField: "webhook.url"},
		{name: "webhook endpoint a number", body: hook(`"`+epID+`"`, `7`), wantField: "webhook.endpoint"},
		{name: "chat endpoint too long", body: chat(epID, epID+"00"), wantField: "chat.endpoint"},
		{name: "chat endpoint with a space", body: chat(epID, "ep_01jh 000000000000000000000"), wantField: "chat.endpoint"},

		// what a delivery to an endpoint may not carry
		{name: "webhook endpoint with headers", body: hook(`"payload"`, `"headers":{"X-A":"1"},"payload"`), wantField: "webhook.headers"},
		{name: "chat endpoint with blocks", body: chat(`"text"`, `"blocks":[{"type":"section"}],"text"`), wantField: "chat.blocks"},
		{name: "chat endpoint with a card", body: chat(`"text"`, `"card":{"type":"AdaptiveCard"},"text"`), wantField: "chat.card"},
		{name: "chat endpoint without text", body: chat(`,"text":"invoice.paid for acme: {}"`, ``), wantField: "chat.text"},
		{name: "chat endpoint text of 40,001 characters", body: chat(`"invoice.paid for acme: {}"`, `"`+strings.Repeat("x", notification.MaxChatTextChars+1)+`"`), wantField: "chat.text"},

		// tenant and event_id
		{name: "webhook endpoint without tenant", body: hook(`"tenant":"acme",`, ``), wantField: "tenant"},
		{name: "chat endpoint without tenant", body: chat(`"tenant":"acme",`, ``), wantField: "tenant"},
		{name: "delivery tenant empty", body: hook(`"tenant":"acme"`, `"tenant":""`), wantField: "tenant"},
		{name: "delivery tenant malformed", body: hook(`"tenant":"acme"`, `"tenant":"a b"`), wantField: "tenant"},
		{name: "delivery tenant of 129 characters", body: chat(`"tenant":"acme"`, `"tenant":"`+strings.Repeat("t", 129)+`"`), wantField: "tenant"},
		{name: "delivery event_id malformed", body: hook(`"evt_1"`, `"evt 1"`), wantField: "event_id"},
		{name: "delivery event_id empty", body: hook(`"evt_1"`, `""`), wantField: "event_id"},
		{name: "delivery event_id a number", body: hook(`"evt_1"`, `1`), wantField: "event_id"},
		{name: "inline webhook with a tenant", body: strings.Replace(validWebhook, `"channel":"webhook"`, `"channel":"webhook","tenant":"acme"`, 1), wantField: "tenant"},
		{name: "inline webhook with an event_id", body: strings.Replace(validWebhook, `"channel":"webhook"`, `"channel":"webhook","event_id":"evt_1"`, 1), wantField: "event_id"},
		{name: "email with a tenant", body: strings.Replace(validEmail, `"channel":"email"`, `"channel":"email","tenant":"acme"`, 1), wantField: "tenant"},
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
				if !tt.unreadable {
					require.Equal(t, tt.wantField, problemFields(t, err)[0], "error: %v", err)
				}
			}
			require.Equal(t, valid || tt.goOnly, schemaValid(t, schema, []byte(tt.body)), "the schema must agree with Parse")
		})
	}
}

// TestEventRoundTrip: an event and an endpoint delivery parse into their
// fields and marshal back to what Parse reads again.
func TestEventRoundTrip(t *testing.T) {
	t.Parallel()
	m, err := notification.Parse([]byte(strings.Replace(validEvent, `"payload"`, `"endpoint":"`+epID+`","payload"`, 1)))
	require.NoError(t, err)
	require.Equal(t, notification.ChannelEvent, m.Channel)
	require.Equal(t, &notification.Event{Tenant: "acme", Type: "invoice.paid", Payload: json.RawMessage(`{"amount":42}`), Endpoint: epID}, m.Event)
	require.NoError(t, m.Validate())

	d, err := notification.Parse([]byte(validEndpointWebhook))
	require.NoError(t, err)
	require.Equal(t, "acme", d.Tenant)
	require.Equal(t, "evt_1", d.EventID)
	require.Equal(t, epID, d.Webhook.Endpoint)
	require.Empty(t, d.Webhook.URL)
	require.Empty(t, d.Host(), "a delivery to an endpoint names no URL")
	require.NoError(t, d.Validate())

	c, err := notification.Parse([]byte(validEndpointChat))
	require.NoError(t, err)
	require.Equal(t, epID, c.Chat.Endpoint)
	require.NoError(t, c.Validate())
}

// TestIDRules: the exported id rules, which the endpoint store and the
// fan-out share with the contract.
func TestIDRules(t *testing.T) {
	t.Parallel()
	require.True(t, notification.ValidEndpointID(epID))
	require.False(t, notification.ValidEndpointID("ep_"+strings.Repeat("0", 25)))
	require.True(t, notification.ValidEventType("invoice.paid"))
	require.False(t, notification.ValidEventType("invoice.*"))
	require.True(t, notification.ValidTenant("acme:eu"))
	require.False(t, notification.ValidTenant(""))
	require.Equal(t, notification.MaxSlackTextChars, notification.ChatTextLimit(notification.ChatSlack))
	require.Equal(t, notification.MaxDiscordContentChars, notification.ChatTextLimit(notification.ChatDiscord))
	require.Equal(t, notification.MaxTeamsTextChars, notification.ChatTextLimit(notification.ChatTeams))
}
