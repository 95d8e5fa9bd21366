//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/testkit/chattest"
)

// Chat notifications through the deliver handler, the local event source
// mapping and LocalStack: one of each service delivered in the exact shape
// its receiver requires; a removed Slack webhook, a deleted Discord webhook
// and a disabled Teams workflow dead-lettered on their first receive with a
// class naming the reason; three posts to one Slack webhook in one batch
// paced a second apart, none refused; no webhook URL path or query in any
// log line or dead letter's attributes.
func TestChatThroughTheHandler(t *testing.T) {
	t.Parallel()
	rs := chattest.NewReceivers()
	t.Cleanup(rs.Close)
	e := setup(t, options{deliver: func(_ *env, c *config.Deliver, o *app.DeliverOptions) {
		c.ChatAllowHosts = []string{"127.0.0.1"} // the receivers stand in for the services' hosts
		o.WebhookTLS = rs.TLSConfig()
	}})

	delivered := map[string]string{} // id → body sent
	for _, f := range []string{"chat-slack-deploy.json", "chat-discord-deploy.json", "chat-teams-deploy.json"} {
		b := rs.Route(sample(t, f))
		var m struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(b), &m))
		delivered[m.ID] = b
	}
	// Removed and deleted webhooks, with credentials that must not leak.
	rs.Slack.Remove("SLACKSECRETgone")
	goneSlack := chatMessage("gone-slack", "slack", rs.Slack.URL()+"/services/T0/B0/SLACKSECRETgone")
	goneDiscord := chatMessage("gone-discord", "discord", rs.Discord.URL()+"/api/webhooks/99/DISCORDSECRETgone")
	rs.Teams.Create("wfgone", "TEAMSSECRETgone")
	rs.Teams.Disable("wfgone")
	goneTeams := chatMessage("gone-teams", "teams", rs.Teams.URL()+"/workflows/wfgone/triggers/manual/paths/invoke?api-version=2016-06-01&sig=TEAMSSECRETgone")
	// Three to one Slack webhook, in one batch.
	var burst []string
	for i := range 3 {
		burst = append(burst, chatMessage(fmt.Sprintf("burst-%d", i), "slack", rs.Slack.URL()+"/services/T0/B1/SLACKSECRETburst"))
	}
	var all []string
	for _, b := range delivered {
		all = append(all, b)
	}
	all = append(all, goneSlack, goneDiscord, goneTeams)
	all = append(all, burst...)
	e.send(all...)

	e.pollUntil(60*time.Second, func() bool {
		n := 0
		for _, l := range e.logs.all() {
			if o, _ := l["outcome"].(string); o == "delivered" || o == "dead_lettered" {
				n++
			}
		}
		return n >= len(all)
	})

	for id := range delivered {
		require.Equal(t, []string{"delivered"}, e.logs.outcomes(id), id)
	}
	for i := range 3 {
		require.Equal(t, []string{"delivered"}, e.logs.outcomes(fmt.Sprintf("burst-%d", i)))
	}
	// The exact shapes.
	slackGot := rs.Slack.Received()
	require.Len(t, slackGot, 4)
	require.JSONEq(t, `{"text":"Deploy 1042 of billing finished","blocks":[{"type":"header","text":{"type":"plain_text","text":"Deploy 1042"}},{"type":"section","text":{"type":"mrkdwn","text":"*billing* is live in `+"`prod`"+` — Société Générale d’Exemple notified"}}]}`,
		string(bodyOf(slackGot, "XXXXXXXXXXXXXXXXXXXXXXXX")))
	discordGot := rs.Discord.Received()
	require.Len(t, discordGot, 1)
	require.JSONEq(t, `{"content":"Deploy 1042 finished @everyone","embeds":[{"title":"billing","description":"Deploy 1042 is live","color":5763719,"fields":[{"name":"env","value":"prod","inline":true},{"name":"version","value":"2026.11.30-1","inline":true}],"footer":{"text":"herald"}}],"allowed_mentions":{"parse":[]}}`,
		string(discordGot[0].Body))
	teamsGot := rs.Teams.Received()
	require.Len(t, teamsGot, 1)
	require.JSONEq(t, `{"type":"message","summary":"Deploy 1042 finished","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"Deploy **1042** of billing finished","wrap":true},{"type":"FactSet","facts":[{"title":"env","value":"prod"}]}]}}]}`,
		string(teamsGot[0].Body))

	// Paced, not refused: the three posts to one webhook a second apart.
	var at []time.Time
	for _, r := range slackGot {
		if r.Hook == "SLACKSECRETburst" {
			at = append(at, r.At)
		}
	}
	require.Len(t, at, 3)
	// Turns a second apart; arrivals differ from turns by the network's
	// jitter (the first post also opens the connection).
	for i := 1; i < len(at); i++ {
		require.GreaterOrEqual(t, at[i].Sub(at[i-1]), 500*time.Millisecond, "no burst to one Slack webhook")
	}
	require.GreaterOrEqual(t, at[2].Sub(at[0]), 1500*time.Millisecond)
	require.Equal(t, []int{404}, rs.Slack.Refused(), "only the removed webhook's post was refused")

	// Permanent errors: dead-lettered on the first receive, the body as sent.
	want := map[string]struct {
		body  string
		class delivery.Class
	}{
		"gone-slack":   {goneSlack, "slack_no_service"},
		"gone-discord": {goneDiscord, "discord_unknown_webhook"},
		"gone-teams":   {goneTeams, "teams_not_found"},
	}
	dl := e.deadLetters()
	require.Len(t, dl, 3)
	for _, d := range dl {
		r := reasonOf(t, d)
		w, ok := want[r.NotificationID]
		require.True(t, ok, "%+v", r)
		require.Equal(t, w.class, r.ErrorClass)
		require.Equal(t, "permanent_failure", r.Outcome)
		require.Equal(t, 1, r.Attempts, "dead-lettered on the first receive")
		require.Equal(t, "chat", r.Channel)
		require.Equal(t, w.body, d.Body, "the dead letter keeps the producer's message as it is")
		for k, v := range d.Attributes {
			require.NotContains(t, v, "SECRET", "attribute %s", k)
		}
	}
	// No credential in any log line.
	for _, l := range e.logs.all() {
		line, _ := json.Marshal(l)
		for _, secret := range []string{"SECRET", "XXXXXXXXXXXXXXXXXXXXXXXX", "/services/", "/api/webhooks/", "sig="} {
			require.NotContains(t, string(line), secret, "a log line names a webhook URL's credential")
		}
	}
	require.True(t, e.queueEmpty())
}

func chatMessage(id, service, url string) string {
	return fmt.Sprintf(`{"version":1,"id":%q,"channel":"chat","chat":{"service":%q,"url":%q,"text":"Deploy %s"}}`, id, service, url, id)
}

// bodyOf returns the body of the post to the webhook hook.
func bodyOf(got []chattest.Received, hook string) []byte {
	for _, r := range got {
		if r.Hook == hook {
			return r.Body
		}
	}
	return nil
}
