package chat_test

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/notification"
)

// A Teams answer of 200 is delivered only when it says so: a legacy
// connector's number of messages posted ("1", or more), a flow's own
// Response. A legacy connector's 200 with an error text is not delivered:
// a text naming a status is read as that status (429 rate-limited, 5xx,
// 400, 413), but never as one that says the webhook is gone (404, 410,
// 401: Teams answers 200 for what it deems retryable, so that callers do
// not disable the webhook), any other (a token service's exception, a JSON
// error envelope or response object, an empty body, 0) is
// teams_error_answer, retried; a flow's 200 with a JSON error envelope too.
func TestTeams200IsDeliveredOnlyWhenItSaysSo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name, hook, body string
		legacy           bool
		class            delivery.Class // "" for delivered
		permanent        bool
	}{
		{"legacy 1", "l1", "1", true, "", false},
		{"legacy 1 and a newline", "l2", "1\n", true, "", false},
		{"legacy 413 in the text", "l3", "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 413 with ContextId tcid=0,server=msgapi-production-eus-azsc2-4-170,cv=deadbeef.0..", true, "teams_too_large", true},
		{"legacy 404 in the text", "l4", "Microsoft Teams endpoint returned HTTP error 404 with ContextId MS-CV=x.", true, "teams_error_answer", false},
		{"legacy 401 in the text", "l4b", "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 401 with ContextId tcid=0", true, "teams_error_answer", false},
		{"legacy 410 in the text", "l4c", "Microsoft Teams endpoint returned HTTP error 410 with ContextId MS-CV=x.", true, "teams_error_answer", false},
		{"legacy 502 in the text", "l4d", "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 502 with ContextId tcid=0", true, "teams_http_5xx", false},
		{"legacy token issuer 401", "l4e", "Microsoft.Exchange.Security.TokenIssuer.Common.SubstrateTokenRequestException: Request 1;https://outlook.office.com;GlobalActor to https://localhost:444/sts/token/1 on server X failed with status code 401(Unauthorized)", true, "teams_error_answer", false},
		{"legacy response object", "l4f", `{"version":"1.1","content":{"headers":[{"key":"Content-Type","value":["text/plain; charset=utf-8"]}]},"statusCode":200,"reasonPhrase":"OK","headers":[],"trailingHeaders":[],"requestMessage":null,"isSuccessStatusCode":true}`, true, "teams_error_answer", false},
		{"legacy 2 messages", "l4g", "2", true, "", false},
		{"legacy 0 messages", "l4h", "0", true, "teams_error_answer", false},
		{"legacy 1.0", "l4i", "1.0", true, "teams_error_answer", false},
		{"legacy +1", "l4j", "+1", true, "teams_error_answer", false},
		{"legacy 429 in the text", "l5", "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 429 with ContextId tcid=1", true, "teams_rate_limited", false},
		{"legacy token service exception", "l6", "Microsoft.Teams.Connectors.TokenServiceException: Failed to acquire a token for the connector", true, "teams_error_answer", false},
		{"legacy JSON error envelope", "l7", `{"error": {"code": "ConnectorConfigurationNotFound", "message": "The connector configuration was not found."}}`, true, "teams_error_answer", false},
		{"legacy empty", "l8", "", true, "teams_error_answer", false},
		{"workflow JSON error envelope", "w1", `{"error": {"code": "InvalidTemplate", "message": "Unable to process template language expressions."}}`, false, "teams_error_answer", false},
		{"workflow Response action", "w2", `{"status": "posted"}`, false, "", false},
		{"workflow empty 200", "w3", "", false, "", false},
		{"workflow error null", "w4", `{"error": null}`, false, "", false},
	}
	for _, tt := range tests {
		u := b.teams.URL() + "/webhookb2/g@t/IncomingWebhook/" + tt.hook + "/o"
		hook := "webhookb2/g@t/IncomingWebhook/" + tt.hook + "/o"
		if !tt.legacy {
			u = b.teams.URL() + b.teams.Create(tt.hook, "sig")
			hook = tt.hook
		}
		b.teams.Answer(hook, http.StatusOK, tt.body)
		err := b.sender.Send(context.Background(), message(t, "t200", notification.Chat{Service: "teams", URL: u, Text: "x"}))
		if tt.class == "" {
			require.NoError(t, err, tt.name)
			continue
		}
		permanent, class, _ := delivery.Classify(err)
		require.Equal(t, tt.class, class, "%s: %v", tt.name, err)
		require.Equal(t, tt.permanent, permanent, tt.name)
		requireNoSecret(t, err, u)
	}
	// A legacy connector's URL of the older form (outlook.office.com/webhook/…)
	// is a legacy connector too: its 200 that is not "1" is not delivered,
	// and it is paced as one (a burst of 3, then one per 50 s).
	old := b.teams.URL() + "/webhook/g@t/IncomingWebhook/l9/o"
	b.teams.Answer("webhook/g@t/IncomingWebhook/l9/o", http.StatusOK, "Microsoft.Teams.Connectors.TokenServiceException: Failed to acquire a token")
	err := b.sender.Send(context.Background(), message(t, "old", notification.Chat{Service: "teams", URL: old, Text: "x"}))
	_, class, _ := delivery.Classify(err)
	require.Equal(t, delivery.Class("teams_error_answer"), class, "%v", err)
	b.teams.Unanswer("webhook/g@t/IncomingWebhook/l9/o")
	before := len(b.clock.Slept())
	for range 3 {
		require.NoError(t, b.sender.Send(context.Background(), message(t, "old", notification.Chat{Service: "teams", URL: old, Text: "x"})))
	}
	require.Equal(t, []time.Duration{50 * time.Second}, b.clock.Slept()[before:], "the 4th post of the burst waits 50 s")

	// The receiver's own answers: 202 from a workflow, "1" from a legacy
	// connector.
	require.NoError(t, b.sender.Send(context.Background(), message(t, "t202", notification.Chat{Service: "teams", URL: b.teams.URL() + b.teams.Create("wf-ok", "s"), Text: "x"})))
	require.NoError(t, b.sender.Send(context.Background(), message(t, "t1", notification.Chat{Service: "teams", URL: b.teams.URL() + "/webhookb2/a/IncomingWebhook/b/c", Text: "x"})))
}

// Workflows URLs of the commercial and US Government clouds, and legacy
// connectors' hosts, are Teams hosts; look-alikes are not.
func TestTeamsHostsOfEveryCloud(t *testing.T) {
	t.Parallel()
	s, err := chat.NewSender(chat.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a URL that passes the host check meets ctx's end before the request
	const path = "/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=s3cret"
	for _, host := range []string{
		"prod-12.westeurope.logic.azure.com",
		"default0123456789abcdef.01.environment.api.powerplatform.com",
		"prod-01.usgovvirginia.logic.azure.us",
		"default0123.01.environment.api.gov.powerplatform.microsoft.us",
		"default0123.01.environment.api.high.powerplatform.microsoft.us",
		"default0123.01.environment.api.appsplatform.us",
		"acme.webhook.office.com",
	} {
		_, class, _ := delivery.Classify(s.Send(ctx, message(t, "h", notification.Chat{Service: "teams", URL: "https://" + host + path, Text: "x"})))
		require.Equal(t, delivery.ClassDeadline, class, host)
	}
	for _, host := range []string{
		"logic.azure.us", "environment.api.appsplatform.us", "evil-logic.azure.us.example.com",
		"x.environment.api.gov.powerplatform.microsoft.us.evil.example", "x.logic.azure.cn",
	} {
		_, class, _ := delivery.Classify(s.Send(ctx, message(t, "h", notification.Chat{Service: "teams", URL: "https://" + host + path, Text: "x"})))
		require.Equal(t, delivery.Class("teams_host_not_allowed"), class, host)
	}
}
