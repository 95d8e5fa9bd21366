package config

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoadEndpointsAPI: the three required variables are named when
// missing; the URL rules' exceptions are read as for the deliver function.
func TestLoadEndpointsAPI(t *testing.T) {
	t.Parallel()
	_, err := LoadEndpointsAPI(func(string) string { return "" })
	require.ErrorContains(t, err, "HERALD_STORE_TABLE: required")
	require.ErrorContains(t, err, "HERALD_ENDPOINT_KEY_ID: required")
	require.ErrorContains(t, err, "HERALD_EVENT_QUEUE_URL: required")

	env := map[string]string{
		"HERALD_STORE_TABLE": "herald-store", "HERALD_ENDPOINT_KEY_ID": "alias/herald-endpoints",
		"HERALD_EVENT_QUEUE_URL": "https://sqs.example/q", "HERALD_WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
		"HERALD_WEBHOOK_ALLOW_HTTP": "true", "HERALD_CHAT_ALLOW_HOSTS": "chat.test",
	}
	c, err := LoadEndpointsAPI(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "herald-store", c.StoreTable)
	require.Equal(t, "alias/herald-endpoints", c.EndpointKeyID)
	require.Equal(t, "https://sqs.example/q", c.EventQueueURL)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, c.WebhookAllowCIDRs)
	require.True(t, c.WebhookAllowHTTP)
	require.Equal(t, []string{"chat.test"}, c.ChatAllowHosts)

	env["HERALD_WEBHOOK_ALLOW_CIDRS"] = "nonsense"
	_, err = LoadEndpointsAPI(func(k string) string { return env[k] })
	require.ErrorContains(t, err, "HERALD_WEBHOOK_ALLOW_CIDRS")
}
