package endpoint_test

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/webhook"
)

func valid() endpoint.Endpoint {
	return endpoint.Endpoint{
		Tenant:      "acme",
		Kind:        endpoint.KindWebhook,
		URL:         "https://hooks.acme.example.com/herald",
		Description: "Acme's billing receiver",
		EventTypes:  []string{"invoice.paid", "customer.*"},
		Headers:     map[string]string{"Authorization": "Bearer s3cr3t", "X-Team": "billing"},
		RateLimit:   10,
		Metadata:    map[string]string{"plan": "pro"},
	}
}

// requireField asserts that err is a *FieldError naming field, and that its
// text quotes no secret of the endpoint.
func requireField(t *testing.T, err error, field string, secrets ...string) {
	t.Helper()
	var fe *endpoint.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, field, fe.Field, "error: %v", err)
	require.NotEmpty(t, fe.Reason)
	for _, s := range secrets {
		require.NotContains(t, err.Error(), s)
	}
}

func TestValidateAcceptsAWellFormedEndpointOfEachKind(t *testing.T) {
	t.Parallel()
	require.NoError(t, endpoint.Validate(valid()))
	for kind, u := range map[endpoint.Kind]string{
		endpoint.KindSlack:   "https://hooks.slack.com/services/T000/B000/XXXX",
		endpoint.KindDiscord: "https://discord.com/api/webhooks/123/tok",
		endpoint.KindTeams:   "https://prod-12.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?sig=x",
	} {
		e := valid()
		e.Kind, e.URL = kind, u
		require.NoError(t, endpoint.Validate(e), kind)
	}
	e := valid()
	e.EventTypes, e.Headers, e.Metadata, e.RateLimit, e.Description = nil, nil, nil, 0, ""
	require.NoError(t, endpoint.Validate(e), "only tenant, kind and url are required")
	e.URL = "https://[2606:4700::1111]:8443/hook" // a public IPv6 literal
	require.NoError(t, endpoint.Validate(e))
	e.URL = "https://1.1.1.1/hook"
	require.NoError(t, endpoint.Validate(e))
}

func TestValidateTenant(t *testing.T) {
	t.Parallel()
	for _, tenant := range []string{"", "ac me", "acme/1", "acmé", "a\x00", strings.Repeat("a", endpoint.MaxTenantChars+1), "acme#1"} {
		e := valid()
		e.Tenant = tenant
		requireField(t, endpoint.Validate(e), "tenant")
	}
	for _, tenant := range []string{"a", "acme-1", "org:acme.eu_1", strings.Repeat("a", endpoint.MaxTenantChars)} {
		e := valid()
		e.Tenant = tenant
		require.NoError(t, endpoint.Validate(e), tenant)
	}
}

func TestValidateKind(t *testing.T) {
	t.Parallel()
	for _, kind := range []endpoint.Kind{"", "email", "Webhook", "SLACK", "sms"} {
		e := valid()
		e.Kind = kind
		requireField(t, endpoint.Validate(e), "kind")
	}
}

func TestValidateURLRefusesWhatASenderWouldRefuse(t *testing.T) {
	t.Parallel()
	for name, u := range map[string]string{
		"empty":                     "",
		"plain http":                "http://hooks.acme.example.com/x?token=SECRET",
		"HTTP upper case":           "HTTP://hooks.acme.example.com/x?token=SECRET",
		"ftp":                       "ftp://hooks.acme.example.com/x?token=SECRET",
		"relative":                  "/x?token=SECRET",
		"no host":                   "https:///x?token=SECRET",
		"opaque":                    "https:SECRET",
		"userinfo":                  "https://user:SECRET@hooks.acme.example.com/x",
		"user only":                 "https://SECRET@hooks.acme.example.com/x",
		"fragment":                  "https://hooks.acme.example.com/x#SECRET",
		"empty fragment":            "https://hooks.acme.example.com/x?SECRET#",
		"loopback":                  "https://127.0.0.1/x?SECRET",
		"loopback high":             "https://127.255.0.9:8443/x?SECRET",
		"private 10":                "https://10.1.2.3/x?SECRET",
		"private 172.16":            "https://172.16.0.1/x?SECRET",
		"private 192.168":           "https://192.168.1.1/x?SECRET",
		"metadata service":          "https://169.254.169.254/latest/meta-data?SECRET",
		"this network":              "https://0.0.0.0/x?SECRET",
		"carrier NAT":               "https://100.64.0.1/x?SECRET",
		"IPv6 loopback":             "https://[::1]/x?SECRET",
		"IPv6 unique local":         "https://[fd00:ec2::254]/x?SECRET",
		"IPv6 link-local with zone": "https://[fe80::1%25eth0]/x?SECRET",
		"IPv4-mapped loopback":      "https://[::ffff:127.0.0.1]/x?SECRET",
		"IPv4-mapped private hex":   "https://[::ffff:a00:1]/x?SECRET",
		"IPv4-mapped metadata":      "https://[::ffff:169.254.169.254]/x?SECRET",
		"NAT64 of loopback":         "https://[64:ff9b::7f00:1]/x?SECRET",
		"decimal IPv4":              "https://2130706433/x?SECRET",
		"hex IPv4":                  "https://0x7f.1/x?SECRET",
		"short IPv4":                "https://127.1/x?SECRET",
		"octal-looking IPv4":        "https://0177.0.0.1/x?SECRET",
		"too long":                  "https://hooks.acme.example.com/" + strings.Repeat("a", endpoint.MaxURLBytes) + "?SECRET",
		"space in host":             "https://hooks acme.example.com/x?SECRET",
	} {
		e := valid()
		e.URL = u
		err := endpoint.Validate(e)
		requireField(t, err, "url", "SECRET")
		if strings.Contains(name, "IPv4-mapped") || name == "loopback" || name == "metadata service" {
			require.Contains(t, err.Error(), "blocked destination", name)
		}
	}
}

func TestValidateURLRulesOfTheDeployment(t *testing.T) {
	t.Parallel()
	local := endpoint.URLRules{AllowHTTP: true, AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, ChatAllowHosts: []string{"127.0.0.1", ".chat.test"}}
	e := valid()
	e.URL = "http://127.0.0.1:8080/hook"
	requireField(t, endpoint.Validate(e), "url")
	require.NoError(t, local.Validate(e), "http to an allowed network is fine for the local stack")
	e.URL = "http://10.0.0.1/hook"
	requireField(t, local.Validate(e), "url") // not in AllowCIDRs
	e.Kind, e.URL = endpoint.KindSlack, "http://127.0.0.1:9000/services/T/B/X"
	require.NoError(t, local.Validate(e), "a chat allow host")
	e.URL = "https://x.chat.test/services/T/B/X"
	require.NoError(t, local.Validate(e), "a chat allow suffix")
	e.URL = "https://chat.test/services/T/B/X"
	requireField(t, local.Validate(e), "url") // ".chat.test" is names under it only
}

func TestValidateChatURLNamesTheServicesHost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind endpoint.Kind
		url  string
	}{
		{endpoint.KindSlack, "https://hooks.slack.com.evil.example/services/T/B/SECRET"},
		{endpoint.KindSlack, "https://discord.com/api/webhooks/1/SECRET"},     // another service's host
		{endpoint.KindDiscord, "https://hooks.slack.com/services/T/B/SECRET"}, // another service's host
		{endpoint.KindDiscord, "https://evil.example/api/webhooks/1/SECRET"},
		{endpoint.KindTeams, "https://example.com/workflows/SECRET"},
		{endpoint.KindTeams, "http://prod-1.westus.logic.azure.com/workflows/SECRET"}, // plain http
		{endpoint.KindSlack, "https://user:SECRET@hooks.slack.com/services/T/B/X"},
		{endpoint.KindSlack, "https://127.0.0.1/services/T/B/SECRET"},
	} {
		e := valid()
		e.Kind, e.URL = c.kind, c.url
		requireField(t, endpoint.Validate(e), "url", "SECRET")
	}
	e := valid()
	e.Kind, e.URL = endpoint.KindSlack, "https://HOOKS.SLACK.COM./services/T/B/X"
	require.NoError(t, endpoint.Validate(e), "host case and a trailing dot do not matter")
}

func TestValidateDescription(t *testing.T) {
	t.Parallel()
	e := valid()
	e.Description = strings.Repeat("é", endpoint.MaxDescriptionChars)
	require.NoError(t, endpoint.Validate(e), "characters, not bytes")
	for _, d := range []string{strings.Repeat("a", endpoint.MaxDescriptionChars+1), "bad \xff utf-8"} {
		e.Description = d
		requireField(t, endpoint.Validate(e), "description")
	}
}

func TestValidateEventTypeFilter(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		filter []string
		field  string
	}{
		{[]string{"*"}, "event_types[0]"},
		{[]string{"invoice.paid", "*"}, "event_types[1]"},
		{[]string{""}, "event_types[0]"},
		{[]string{"invoice paid"}, "event_types[0]"},
		{[]string{"invoice.paid", "invoice:paid"}, "event_types[1]"},
		{[]string{"invoice*"}, "event_types[0]"},
		{[]string{"invoice.*.paid"}, "event_types[0]"},
		{[]string{"*.paid"}, "event_types[0]"},
		{[]string{".*"}, "event_types[0]"},
		{[]string{"invoice.**"}, "event_types[0]"},
		{[]string{"a.b", "c", "a.b"}, "event_types[2]"},
		{[]string{strings.Repeat("a", endpoint.MaxEventTypeChars+1)}, "event_types[0]"},
		{[]string{strings.Repeat("a", endpoint.MaxEventTypeChars-1) + ".*"}, "event_types[0]"},
		{slices.Repeat([]string{"x"}, endpoint.MaxEventTypes+1), "event_types"},
	} {
		e := valid()
		e.EventTypes = c.filter
		requireField(t, endpoint.Validate(e), c.field)
	}
	e := valid()
	e.EventTypes = []string{"*"}
	require.ErrorContains(t, endpoint.Validate(e), "leave event_types empty", "the error says how to receive every type")
	many := make([]string, endpoint.MaxEventTypes)
	for i := range many {
		many[i] = fmt.Sprintf("t%d.*", i)
	}
	e.EventTypes = many
	require.NoError(t, endpoint.Validate(e))
	e.EventTypes = []string{strings.Repeat("a", endpoint.MaxEventTypeChars), "A-b_c.D", "billing.invoice.*"}
	require.NoError(t, endpoint.Validate(e))
}

func TestValidateEventType(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"invoice.paid", "a", "A_b-c.9", strings.Repeat("x", endpoint.MaxEventTypeChars)} {
		require.NoError(t, endpoint.ValidateEventType(s), s)
	}
	for _, s := range []string{"", "invoice.*", "*", "a b", "a:b", "é", strings.Repeat("x", endpoint.MaxEventTypeChars+1)} {
		requireField(t, endpoint.ValidateEventType(s), "type")
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		filter []string
		typ    string
		want   bool
	}{
		{nil, "invoice.paid", true},
		{[]string{}, "anything", true},
		{[]string{"invoice.paid"}, "invoice.paid", true},
		{[]string{"invoice.paid"}, "invoice.paid.late", false},
		{[]string{"invoice.paid"}, "Invoice.paid", false},
		{[]string{"invoice.paid"}, "invoice.pai", false},
		{[]string{"invoice.*"}, "invoice.paid", true},
		{[]string{"invoice.*"}, "invoice.paid.late", true},
		{[]string{"invoice.*"}, "invoice", false},
		{[]string{"invoice.*"}, "invoice.", false},
		{[]string{"invoice.*"}, "invoices.paid", false},
		{[]string{"invoice.*"}, "billing.invoice.paid", false},
		{[]string{"customer.created", "invoice.*"}, "invoice.void", true},
		{[]string{"customer.created", "invoice.*"}, "customer.deleted", false},
		{[]string{"billing.invoice.*"}, "billing.invoice.paid", true},
		{[]string{"billing.invoice.*"}, "billing.refund", false},
		// Only "<type>.*" is a wildcard: other entries match exactly.
		{[]string{"invoice*"}, "invoices.paid", false},
		{[]string{"invoice*"}, "invoice*", true},
		{[]string{"*"}, "invoice.paid", false},
	} {
		require.Equal(t, c.want, endpoint.Matches(c.filter, c.typ), "%v %q", c.filter, c.typ)
	}
}

func TestValidateHeadersRefusesHeadersHeraldOrTheConnectionOwn(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"Connection", "connection", "CONNECTION", "Keep-Alive", "keep-alive", "TE", "te", "Trailer",
		"Transfer-Encoding", "transfer-encoding", "Upgrade", "UPGRADE",
		"Proxy-Connection", "Proxy-Authorization", "proxy-authenticate", "PROXY-Foo",
		"Host", "host", "Content-Length", "content-length", "Content-Type", "CONTENT-TYPE", "Content-Encoding",
		"Expect", "User-Agent", "user-agent",
		"webhook-id", "Webhook-Id", "WEBHOOK-TIMESTAMP", "webhook-signature", "Webhook-Signature", "webhook-future",
		"herald-event-type", "Herald-Event-Type", "HERALD-anything",
	} {
		e := valid()
		e.Headers = map[string]string{"X-Ok": "1", name: "SECRET-VALUE"}
		requireField(t, endpoint.Validate(e), "headers."+name, "SECRET-VALUE")
	}
}

func TestValidateHeadersRefusesMalformedNamesAndValues(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "X Team", "X-Team:", "X-Tëam", "X-(Team)", "X\r\nInjected", strings.Repeat("x", 129)} {
		e := valid()
		e.Headers = map[string]string{name: "SECRET-VALUE"}
		requireField(t, endpoint.Validate(e), "headers", "SECRET-VALUE")
	}
	for _, value := range []string{"SECRET\r\nX-Injected: 1", "SECRET\n", "SECRET\x00", "SECRET\x7f", " SECRET", "SECRET\t", "\xffSECRET"} {
		e := valid()
		e.Headers = map[string]string{"X-Token": value}
		requireField(t, endpoint.Validate(e), "headers.X-Token", "SECRET")
	}
	e := valid()
	e.Headers = map[string]string{"X-Token": "SECRET", "x-token": "SECRET"}
	requireField(t, endpoint.Validate(e), "headers.x-token", "SECRET")
	e.Headers = map[string]string{"X-Token": "a\tb é", "X-Empty": ""}
	require.NoError(t, endpoint.Validate(e), "tab inside, non-ASCII text and an empty value are field values")
}

func TestValidateHeadersBounds(t *testing.T) {
	t.Parallel()
	e := valid()
	e.Headers = map[string]string{}
	for i := range endpoint.MaxHeaders {
		e.Headers[fmt.Sprintf("X-H%d", i)] = "v"
	}
	require.NoError(t, endpoint.Validate(e))
	e.Headers["X-One-More"] = "v"
	requireField(t, endpoint.Validate(e), "headers")
	e.Headers = map[string]string{"X-Big": strings.Repeat("v", endpoint.MaxHeaderBytes-len("X-Big"))}
	require.NoError(t, endpoint.Validate(e))
	e.Headers = map[string]string{"X-Big": strings.Repeat("v", endpoint.MaxHeaderBytes-len("X-Big")+1)}
	requireField(t, endpoint.Validate(e), "headers")
}

func TestValidateRateLimit(t *testing.T) {
	t.Parallel()
	for _, r := range []float64{-1, -0.001, endpoint.MaxRateLimit + 0.5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		e := valid()
		e.RateLimit = r
		requireField(t, endpoint.Validate(e), "rate_limit")
	}
	for _, r := range []float64{0, 0.5, 1, endpoint.MaxRateLimit} {
		e := valid()
		e.RateLimit = r
		require.NoError(t, endpoint.Validate(e), r)
	}
}

func TestValidateMetadata(t *testing.T) {
	t.Parallel()
	e := valid()
	e.Metadata = map[string]string{}
	for i := range endpoint.MaxMetadataEntries {
		e.Metadata[fmt.Sprint("k", i)] = strings.Repeat("é", endpoint.MaxMetadataValueChars)
	}
	e.Metadata["k0"] = ""
	delete(e.Metadata, "k1")
	e.Metadata[strings.Repeat("k", endpoint.MaxMetadataKeyChars)] = "v"
	require.NoError(t, endpoint.Validate(e))
	e.Metadata["one-more"] = "v"
	requireField(t, endpoint.Validate(e), "metadata")
	for _, c := range []struct {
		m     map[string]string
		field string
	}{
		{map[string]string{"": "v"}, "metadata"},
		{map[string]string{strings.Repeat("k", endpoint.MaxMetadataKeyChars+1): "v"}, "metadata"},
		{map[string]string{"k\xff": "v"}, "metadata"},
		{map[string]string{"plan": strings.Repeat("v", endpoint.MaxMetadataValueChars+1)}, "metadata.plan"},
		{map[string]string{"plan": "\xff"}, "metadata.plan"},
	} {
		e.Metadata = c.m
		requireField(t, endpoint.Validate(e), c.field)
	}
}

func TestNewIDIsAULIDOfTheCreationTime(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	prev := ""
	for range 200 {
		id := endpoint.NewID()
		require.True(t, endpoint.ValidID(id), id)
		require.Len(t, id, len(endpoint.IDPrefix)+26)
		require.False(t, seen[id])
		seen[id] = true
		// Ids of later milliseconds sort later: compare the time part.
		require.GreaterOrEqual(t, id[:13], prev[:min(len(prev), 13)])
		prev = id
	}
	for _, bad := range []string{"", "ep_", "ep_8zzzzzzzzzzzzzzzzzzzzzzzzz", "ep_01ARZ3NDEKTSV4RRFFQ69G5FAV", "ep_01arz3ndektsv4rrffq69g5fa", "ep_01arz3ndektsv4rrffq69g5fau", "evt_01arz3ndektsv4rrffq69g5fav"} {
		require.False(t, endpoint.ValidID(bad), bad)
	}
	require.True(t, endpoint.ValidID("ep_01arz3ndektsv4rrffq69g5fav"))
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	a, b := endpoint.NewSecret(now), endpoint.NewSecret(now)
	require.Len(t, a.Key, endpoint.SecretBytes)
	require.NotEqual(t, a.Key, b.Key)
	require.Equal(t, 1, a.Version)
	require.Equal(t, now, a.CreatedAt)
	require.True(t, a.Until.IsZero())
	require.True(t, strings.HasPrefix(a.String(), webhook.SecretPrefix))
	key, err := webhook.DecodeSecret(a.String())
	require.NoError(t, err)
	require.Equal(t, a.Key, key, "the String form decodes to the key")
}

func TestFieldErrorIsMatchedWithErrorsAs(t *testing.T) {
	t.Parallel()
	e := valid()
	e.Kind = "x"
	err := fmt.Errorf("create: %w", endpoint.Validate(e))
	var fe *endpoint.FieldError
	require.True(t, errors.As(err, &fe))
}

func TestSecretsAreNotPrintedOrLogged(t *testing.T) {
	t.Parallel()
	e := valid()
	e.Kind, e.URL = endpoint.KindSlack, "https://hooks.slack.com/services/T1/B1/CHATTOKEN"
	e.Secrets = []endpoint.Secret{endpoint.NewSecret(time.Now())}
	key := e.Secrets[0].String()
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		out := fmt.Sprintf(verb, e)
		require.NotContains(t, out, key[len(webhook.SecretPrefix):], verb)
		require.NotContains(t, out, fmt.Sprintf("%x", e.Secrets[0].Key), verb)
		for _, leak := range []string{"CHATTOKEN", "s3cr3t", "T1/B1"} {
			require.NotContains(t, out, leak, verb)
		}
		require.Contains(t, out, "hooks.slack.com", verb)
		out = fmt.Sprintf(verb, e.Secrets)
		require.NotContains(t, out, key[len(webhook.SecretPrefix):], verb)
		require.Contains(t, out, "redacted", verb)
	}
	var buf strings.Builder
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("endpoint", "endpoint", e, "secret", e.Secrets[0])
	for _, leak := range []string{key[len(webhook.SecretPrefix):], "CHATTOKEN", "s3cr3t", "T1/B1"} {
		require.NotContains(t, buf.String(), leak)
	}
	slog.New(slog.NewTextHandler(&buf, nil)).Info("endpoint", "endpoint", e, "secret", e.Secrets[0], "secrets", e.Secrets)
	for _, leak := range []string{key[len(webhook.SecretPrefix):], "CHATTOKEN", "s3cr3t", "T1/B1"} {
		require.NotContains(t, buf.String(), leak)
	}
	require.Contains(t, buf.String(), `"tenant":"acme"`)
	require.Contains(t, buf.String(), `"host":"hooks.slack.com"`)
}

func TestActiveSecrets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	cur, prev, old := endpoint.NewSecret(now), endpoint.NewSecret(now), endpoint.NewSecret(now)
	cur.Version, prev.Version, old.Version = 3, 2, 1
	prev.Until, old.Until = now.Add(time.Second), now
	e := endpoint.Endpoint{Secrets: []endpoint.Secret{cur, prev, old}}
	require.Equal(t, []endpoint.Secret{cur, prev}, e.ActiveSecrets(now), "a secret stops at its Until")
	require.Equal(t, []endpoint.Secret{cur}, e.ActiveSecrets(now.Add(time.Second)))
	require.Empty(t, endpoint.Endpoint{}.ActiveSecrets(now))
}
