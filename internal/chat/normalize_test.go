package chat_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/chat"
)

// TestNormalizeURLOneWebhookOneForm: spellings of one webhook that differ
// in the case of the scheme or host, a trailing dot, the default port,
// the case of an escape's hex digits or an escaped unreserved character
// normalize to one form; what names another webhook (the path's or
// query's case, an escaped slash, another port) stays apart.
func TestNormalizeURLOneWebhookOneForm(t *testing.T) {
	t.Parallel()
	for want, spellings := range map[string][]string{
		"https://hooks.slack.com/services/T0/B0/XyZ": {
			"https://hooks.slack.com/services/T0/B0/XyZ",
			"HTTPS://HOOKS.SLACK.COM/services/T0/B0/XyZ",
			"https://Hooks.Slack.Com:443/services/T0/B0/XyZ",
			"https://hooks.slack.com./services/T0/B0/XyZ",
			"https://hooks.slack.com..:443/services/T0/B0/XyZ",
			"https://hooks.slack.com/services/T0/B0/%58y%5A",
			"https://hooks.slack.com/%73ervices/T0/B0/XyZ#fragment",
		},
		"https://discord.com/api/webhooks/123/tok-en_~.x": {
			"https://discord.com/api/webhooks/123/tok%2Den%5F%7E%2Ex",
			"https://DISCORD.com:443/api/webhooks/123/tok-en_~.x",
		},
		"https://example.webhook.office.com/webhookb2/a%2Fb": {
			"https://example.webhook.office.com/webhookb2/a%2fb",
			"https://example.webhook.office.com./webhookb2/a%2Fb",
		},
		"https://prod-01.westus.logic.azure.com:8443/workflows/x?api-version=2016-06-01&sig=A%2BB": {
			"https://prod-01.westus.logic.azure.com:8443/workflows/x?api-version=2016-06-01&sig=A%2bB",
			"https://PROD-01.westus.logic.azure.com.:8443/workflows/x?api-version=2016-06-01&sig=A%2BB",
		},
		"http://127.0.0.1:8080/hook": {"http://127.0.0.1:8080/hook", "HTTP://127.0.0.1:8080/hook"},
		"http://127.0.0.1/hook":      {"http://127.0.0.1:80/hook", "http://127.0.0.1/hook"},
		"https://[::1]/x":            {"https://[::1]:443/x", "https://[::1]/x"},
		"https://[::1]:8443/x":       {"https://[::1]:8443/x", "https://[0:0::1]:8443/x", "https://[0000:0:0:0:0:0:0:1]:8443/x"},
		"https://[2001:db8::1]/x":    {"https://[2001:DB8::1]/x", "https://[2001:db8:0:0:0:0:0:1]:443/x"},
		// A zone keeps its case (interface names are case-sensitive) and
		// its escape, so that the form parses again.
		"http://[fe80::1%25en0]:8080/x":  {"http://[fe80::1%25en0]:8080/x", "HTTP://[FE80::1%25en0]:8080/x", "http://[fe80:0::1%25en0]:8080/x"},
		"http://[fe80::1%25En0]/x":       {"http://[FE80::1%25En0]:80/x"},
		"https://[::ffff:127.0.0.1]/x":   {"https://[::FFFF:127.0.0.1]/x"},
		"https://user:PW@chat.example/x": {"https://us%65r:PW@CHAT.example/x"},
		"https://chat.example/a%00b":     {"https://chat.example/a%00b"},
		"https://chat.example/":          {"https://chat.example", "https://chat.example:443", "https://CHAT.example./"},
	} {
		for _, s := range spellings {
			got, err := chat.NormalizeURL(s)
			require.NoError(t, err, s)
			require.Equal(t, want, got, s)
			again, err := chat.NormalizeURL(got)
			require.NoError(t, err, "the form of %s parses again", s)
			require.Equal(t, got, again, "the form of %s is its own form", s)
		}
	}

	apart := [][2]string{
		{"https://hooks.slack.com/services/T0/B0/xyz", "https://hooks.slack.com/services/T0/B0/XYZ"}, // the token's case
		{"https://example.office.com/a%2Fb", "https://example.office.com/a/b"},                       // an escaped slash is not a slash
		{"https://chat.example:8443/x", "https://chat.example/x"},
		{"http://chat.example/x", "https://chat.example/x"},
		{"http://[fe80::1%25en0]/x", "http://[fe80::1%25EN0]/x"}, // zones are case-sensitive
		{"http://[fe80::1%25en0]/x", "http://[fe80::1%25en1]/x"},
		{"https://user:pw@chat.example/x", "https://user:PW@chat.example/x"},
		{"https://chat.example/x?a=1&b=2", "https://chat.example/x?b=2&a=1"},
	}
	for _, p := range apart {
		a, err := chat.NormalizeURL(p[0])
		require.NoError(t, err)
		b, err := chat.NormalizeURL(p[1])
		require.NoError(t, err)
		require.NotEqual(t, a, b, "%s and %s are two webhooks", p[0], p[1])
	}

	for _, bad := range []string{"", "hooks.slack.com/services/x", "/relative", "https://", "mailto:a@example.com", "https://hooks.slack.com/%zz/secret-token\x7f"} {
		_, err := chat.NormalizeURL(bad)
		require.Error(t, err, "%q", bad)
		if bad != "" {
			require.NotContains(t, err.Error(), "secret-token", "the error never holds the URL")
		}
	}
}

// TestDestinationOfAnIPv6ZoneHost: a chat webhook on an allowed IPv6 host
// with a zone has a key of its own, one for each spelling; the zone's
// escape once made its normalized form unparseable, so it had none.
func TestDestinationOfAnIPv6ZoneHost(t *testing.T) {
	t.Parallel()
	a, err := chat.Destination("teams", "http://[fe80::1%25en0]:8080/workflows/x")
	require.NoError(t, err)
	b, err := chat.Destination("teams", "HTTP://[FE80:0::1%25en0]:8080/workflows/x")
	require.NoError(t, err)
	require.Equal(t, a, b)
	other, err := chat.Destination("teams", "http://[fe80::1%25en1]:8080/workflows/x")
	require.NoError(t, err)
	require.NotEqual(t, a, other)
}
