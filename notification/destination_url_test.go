package notification_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// TestDestinationURL: a webhook's and a chat webhook's URL are the
// notification's destination URL, whole (the circuit and the pacer key on
// it); an email has none; Host keeps only its host name.
func TestDestinationURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body, url, host string
	}{
		{`{"version":1,"id":"w","channel":"webhook","webhook":{"url":"https://Hooks.Example.com:8443/a/b?x=1","event_type":"t","payload":{}}}`,
			"https://Hooks.Example.com:8443/a/b?x=1", "Hooks.Example.com"},
		{`{"version":1,"id":"c","channel":"chat","chat":{"service":"slack","url":"https://hooks.slack.com/services/T0/B0/secret","text":"x"}}`,
			"https://hooks.slack.com/services/T0/B0/secret", "hooks.slack.com"},
		{`{"version":1,"id":"e","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"t"}}`,
			"", ""},
	}
	for _, tt := range tests {
		m, err := notification.Parse([]byte(tt.body))
		require.NoError(t, err, tt.body)
		require.Equal(t, tt.url, m.DestinationURL())
		require.Equal(t, tt.host, m.Host())
	}
}
