package notification_test

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// TestInvalidUTF8InPayloadReadsAsReplacement: invalid UTF-8 in a string
// reads as U+FFFD everywhere, the webhook payload and template data
// included, which herald passes on: the JSON it sends is UTF-8 (RFC 8259
// §8.1), so that a receiver's strict parser does not refuse every attempt.
func TestInvalidUTF8InPayloadReadsAsReplacement(t *testing.T) {
	t.Parallel()
	m, err := notification.Parse([]byte("{\"version\":1,\"id\":\"n\",\"channel\":\"webhook\",\"webhook\":{\"url\":\"https://hooks.example.com/x\",\"event_type\":\"e\",\"payload\":{\"name\":\"Jan\xff\xfe\",\"k\xc3\":[\"\xed\xa0\x80\"]}}}"))
	require.NoError(t, err)
	require.True(t, utf8.Valid(m.Webhook.Payload), "%q", m.Webhook.Payload)
	require.JSONEq(t, `{"name":"Jan\ufffd\ufffd","k\ufffd":["\ufffd\ufffd\ufffd"]}`, string(m.Webhook.Payload))

	m, err = notification.Parse([]byte("{\"version\":1,\"id\":\"t\",\"channel\":\"email\",\"email\":{\"to\":[\"b@example.org\"],\"template\":{\"name\":\"reset\",\"data\":{\"n\":\"\xff\"}}}}"))
	require.NoError(t, err)
	require.True(t, utf8.Valid(m.Email.Template.Data), "%q", m.Email.Template.Data)
}
