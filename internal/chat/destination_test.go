package chat_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/notification"
)

// One webhook has one key however its URL is written; another webhook,
// token or host has another; no key holds any part of the URL.
func TestDestinationKeysAWebhookNotAURL(t *testing.T) {
	t.Parallel()
	same := map[notification.ChatService][]string{
		"discord": {
			"https://discord.com/api/webhooks/123456/tokSecret7Q",
			"https://discord.com/api/v10/webhooks/123456/tokSecret7Q",
			"https://discord.com/api/v6/webhooks/123456/tokSecret7Q?wait=true",
			"https://discordapp.com/api/webhooks/123456/tokSecret7Q",
			"https://canary.discord.com/api/v9/webhooks/123456/tokSecret7Q/slack",
			"https://DISCORD.com./api/webhooks/123456/tokSecret7Q/",
		},
		"slack": {
			"https://hooks.slack.com/services/T1/B1/xSecret7Q",
			"https://HOOKS.slack.com./services/T1/B1/xSecret7Q",
			"https://hooks.slack.com:443/services/T1/B1/xSecret7Q",
			"https://hooks.slack.com/services/T1/B1/%78Secret7Q", // %78 is x, unreserved
		},
		"teams": {
			"https://prod-1.westeurope.logic.azure.com/workflows/w1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=sSecret7Q&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0",
			"https://prod-1.westeurope.logic.azure.com/workflows/w1/triggers/manual/paths/invoke?sv=1.0&sp=%2Ftriggers%2Fmanual%2Frun&sig=sSecret7Q&api-version=2016-06-01",
			"https://PROD-1.westeurope.logic.azure.com:443/workflows/w1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=sSecret7Q&sp=%2ftriggers%2fmanual%2frun&sv=1.0",
			"https://prod-1.westeurope.logic.azure.com:443/workflows/w1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=sSecret7Q&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0",
			"https://PROD-1.westeurope.logic.azure.com./workflows/w1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=sSecret7Q&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0",
		},
	}
	seen := map[string]bool{}
	for svc, urls := range same {
		var first string
		for _, u := range urls {
			key, err := chat.Destination(svc, u)
			require.NoError(t, err, u)
			require.True(t, chat.IsDestination(key), key)
			require.True(t, strings.HasPrefix(key, "chat:"+string(svc)+":"), key)
			for _, part := range []string{"123456", "Secret7Q", "T1", "B1", "w1", "discord.com", "slack.com", "logic"} {
				require.NotContains(t, key, part)
			}
			if first == "" {
				first = key
			}
			require.Equal(t, first, key, u)
		}
		require.False(t, seen[first])
		seen[first] = true
	}
	other := []struct {
		svc notification.ChatService
		url string
	}{
		{"discord", "https://discord.com/api/webhooks/123456/tokOther"},
		{"discord", "https://discord.com/api/webhooks/654321/tokSecret7Q"},
		{"discord", "https://127.0.0.1:8443/api/webhooks/123456/tokSecret7Q"}, // a relay is another destination
		{"discord", "https://127.0.0.1:8444/api/webhooks/123456/tokSecret7Q"}, // and another port another relay
		{"teams", "https://prod-1.westeurope.logic.azure.com:8443/workflows/w1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=sSecret7Q&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0"},
		{"slack", "https://hooks.slack.com/services/T1/B1/xOther"},
		{"slack", "https://hooks.slack.com/services/T1/B2/xSecret7Q"},
		{"teams", "https://prod-1.westeurope.logic.azure.com/workflows/w1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=other"},
		{"teams", "https://prod-2.westeurope.logic.azure.com/workflows/w1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=sSecret7Q&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0"},
		{"slack", "https://discord.com/api/webhooks/123456/tokSecret7Q"}, // the service is part of the key
	}
	for _, o := range other {
		key, err := chat.Destination(o.svc, o.url)
		require.NoError(t, err)
		require.False(t, seen[key], "%s %s", o.svc, o.url)
		seen[key] = true
	}
	for _, bad := range []struct {
		svc notification.ChatService
		url string
	}{{"irc", "https://discord.com/api/webhooks/1/t"}, {"slack", "::not a url"}, {"slack", "/services/T/B/x"}} {
		_, err := chat.Destination(bad.svc, bad.url)
		require.Error(t, err, bad.url)
		require.NotContains(t, err.Error(), "/services/")
	}
	for _, k := range []string{"chat:slack:" + strings.Repeat("0", 31), "chat:slack:" + strings.Repeat("0", 33), "chat:irc:" + strings.Repeat("0", 32), "https://hooks.slack.com", " chat:slack:" + strings.Repeat("0", 32)} {
		require.False(t, chat.IsDestination(k), k)
	}
	require.Equal(t, notification.ChatDiscord, chat.ServiceOfHost("ptb.discord.com"))
	require.Equal(t, notification.ChatTeams, chat.ServiceOfHost("x.environment.api.appsplatform.us"))
	require.Equal(t, notification.ChatService(""), chat.ServiceOfHost("hooks.example.com"))
}
