package notification_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

const (
	validSlack   = `{"version":1,"id":"c-1","channel":"chat","chat":{"service":"slack","url":"https://hooks.slack.com/services/T0/B0/XXXX","text":"Deploy finished"}}`
	validDiscord = `{"version":1,"id":"c-2","channel":"chat","chat":{"service":"discord","url":"https://discord.com/api/webhooks/1/tok","text":"Deploy finished"}}`
	validTeams   = `{"version":1,"id":"c-3","channel":"chat","chat":{"service":"teams","url":"https://prod-01.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?sig=s","text":"Deploy finished"}}`
)

// embed returns a Discord embeds array of one embed with the given member.
func embed(member string) string { return `[{` + member + `}]` }

func TestParseChat(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	withRich := func(body, name, rich string) string {
		return strings.Replace(body, `"text":"Deploy finished"`, `"text":"Deploy finished","`+name+`":`+rich, 1)
	}
	withoutText := func(body, name, rich string) string {
		return strings.Replace(body, `"text":"Deploy finished"`, `"`+name+`":`+rich, 1)
	}
	text := func(body string, n int) string {
		return strings.Replace(body, `"Deploy finished"`, `"`+strings.Repeat("é", n)+`"`, 1)
	}
	blocks := func(n int) string {
		b := make([]string, n)
		for i := range b {
			b[i] = `{"type":"divider"}`
		}
		return "[" + strings.Join(b, ",") + "]"
	}
	embeds := func(n int) string {
		b := make([]string, n)
		for i := range b {
			b[i] = `{"title":"t"}`
		}
		return "[" + strings.Join(b, ",") + "]"
	}
	fields := func(n int) string {
		b := make([]string, n)
		for i := range b {
			b[i] = `{"name":"n","value":"v"}`
		}
		return `"fields":[` + strings.Join(b, ",") + "]"
	}
	// Six embeds whose descriptions add up to 6,001 characters, each
	// within its own limit.
	over6000 := func() string {
		b := make([]string, 6)
		for i := range b {
			n := 1000
			if i == 5 {
				n = 1001
			}
			b[i] = `{"description":"` + strings.Repeat("d", n) + `"}`
		}
		return "[" + strings.Join(b, ",") + "]"
	}
	card := `{"type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"Deploy finished","wrap":true}]}`
	// cardOf is an Adaptive Card that makes text and card together n bytes
	// beside validTeams' text.
	cardOf := func(n int) string {
		pre, post := `{"type":"AdaptiveCard","body":[{"type":"TextBlock","text":"`, `"}]}`
		return pre + strings.Repeat("x", n-len("Deploy finished")-len(pre)-len(post)) + post
	}
	// Six embeds of 1,000 description characters each: 6,000 in all.
	exactly6000 := "[" + strings.Repeat(`{"description":"`+strings.Repeat("d", 1000)+`"},`, 5) + `{"description":"` + strings.Repeat("d", 1000) + `"}]`
	port := func(p string) string { return strings.Replace(validSlack, "hooks.slack.com", "hooks.slack.com:"+p, 1) }
	tests := []struct {
		name      string
		body      string
		wantField string
		goOnly    bool
	}{
		// Valid, each service.
		{name: "slack text", body: validSlack},
		{name: "discord text", body: validDiscord},
		{name: "teams text", body: validTeams},
		{name: "slack text and blocks", body: withRich(validSlack, "blocks", `[{"type":"section","text":{"type":"mrkdwn","text":"*Deploy* finished"}}]`)},
		{name: "slack blocks only", body: withoutText(validSlack, "blocks", `[{"type":"header","text":{"type":"plain_text","text":"Deploy"}}]`)},
		{name: "discord embeds only", body: withoutText(validDiscord, "embeds", `[{"title":"Deploy","description":"finished","color":5763719,"fields":[{"name":"env","value":"prod","inline":true}],"footer":{"text":"ci"},"author":{"name":"herald"}}]`)},
		{name: "teams card only", body: withoutText(validTeams, "card", card)},
		{name: "teams card and text", body: withRich(validTeams, "card", card)},
		{name: "teams legacy connector url", body: strings.Replace(validTeams, `https://prod-01.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?sig=s`, `https://acme.webhook.office.com/webhookb2/g@t/IncomingWebhook/x/y`, 1)},
		{name: "http url is the function's call", body: strings.Replace(validSlack, "https://", "http://", 1)},

		// Limits at their ends.
		{name: "slack text of 40,000 characters", body: text(validSlack, notification.MaxSlackTextChars)},
		{name: "slack text of 40,001 characters", body: text(validSlack, notification.MaxSlackTextChars+1), wantField: "chat.text"},
		{name: "discord content of 2,000 characters", body: text(validDiscord, notification.MaxDiscordContentChars)},
		{name: "discord content of 2,001 characters", body: text(validDiscord, notification.MaxDiscordContentChars+1), wantField: "chat.text"},
		{name: "teams text of 28,673 characters", body: text(validTeams, notification.MaxTeamsTextChars+1), wantField: "chat.text"},
		{name: "teams text of 14,337 two-byte characters is over 28 KB", body: text(validTeams, 14337), wantField: "chat.card", goOnly: true},
		{name: "teams text of 14,336 two-byte characters is exactly 28 KB", body: text(validTeams, 14336)},
		{name: "teams text and card of exactly 28 KB together", body: withRich(validTeams, "card", cardOf(notification.MaxTeamsMessageBytes))},
		{name: "teams text and card over 28 KB together, each under", body: withRich(validTeams, "card", cardOf(notification.MaxTeamsMessageBytes+1)), wantField: "chat.card", goOnly: true},
		{name: "embeds of 6,000 characters in all", body: withRich(validDiscord, "embeds", exactly6000)},
		{name: "url port 1", body: port("1")},
		{name: "url port 65535", body: port("65535")},
		{name: "url port 0", body: port("0"), wantField: "chat.url", goOnly: true},
		{name: "url port 65536", body: port("65536"), wantField: "chat.url", goOnly: true},
		{name: "50 slack blocks", body: withRich(validSlack, "blocks", blocks(50))},
		{name: "51 slack blocks", body: withRich(validSlack, "blocks", blocks(51)), wantField: "chat.blocks"},
		{name: "10 discord embeds", body: withRich(validDiscord, "embeds", embeds(10))},
		{name: "11 discord embeds", body: withRich(validDiscord, "embeds", embeds(11)), wantField: "chat.embeds"},
		{name: "embed title of 256", body: withRich(validDiscord, "embeds", embed(`"title":"`+strings.Repeat("t", 256)+`"`))},
		{name: "embed title of 257", body: withRich(validDiscord, "embeds", embed(`"title":"`+strings.Repeat("t", 257)+`"`)), wantField: "chat.embeds[0].title"},
		{name: "embed description of 4,097", body: withRich(validDiscord, "embeds", embed(`"description":"`+strings.Repeat("d", 4097)+`"`)), wantField: "chat.embeds[0].description"},
		{name: "embed of 25 fields", body: withRich(validDiscord, "embeds", embed(fields(25)))},
		{name: "embed of 26 fields", body: withRich(validDiscord, "embeds", embed(fields(26))), wantField: "chat.embeds[0].fields"},
		{name: "embed field value of 1,025", body: withRich(validDiscord, "embeds", embed(`"fields":[{"name":"n","value":"v"},{"name":"n","value":"`+strings.Repeat("v", 1025)+`"}]`)), wantField: "chat.embeds[0].fields[1].value"},
		{name: "embed field name of 257", body: withRich(validDiscord, "embeds", embed(`"fields":[{"name":"`+strings.Repeat("n", 257)+`","value":"v"}]`)), wantField: "chat.embeds[0].fields[0].name"},
		{name: "embed footer text of 2,049", body: withRich(validDiscord, "embeds", embed(`"footer":{"text":"`+strings.Repeat("f", 2049)+`"}`)), wantField: "chat.embeds[0].footer.text"},
		{name: "embed author name of 257", body: withRich(validDiscord, "embeds", embed(`"author":{"name":"`+strings.Repeat("a", 257)+`"}`)), wantField: "chat.embeds[0].author.name"},
		{name: "embeds of 6,001 characters in all", body: withRich(validDiscord, "embeds", over6000()), wantField: "chat.embeds", goOnly: true},

		// Shapes.
		{name: "no text and no rich form", body: strings.Replace(validSlack, `,"text":"Deploy finished"`, ``, 1), wantField: "chat.text"},
		{name: "empty text and no rich form", body: strings.Replace(validDiscord, `"Deploy finished"`, `""`, 1), wantField: "chat.text"},
		{name: "embeds with slack", body: withRich(validSlack, "embeds", embeds(1)), wantField: "chat.embeds"},
		{name: "card with discord", body: withRich(validDiscord, "card", card), wantField: "chat.card"},
		{name: "blocks with teams", body: withRich(validTeams, "blocks", blocks(1)), wantField: "chat.blocks"},
		{name: "blocks not an array", body: withRich(validSlack, "blocks", `{"type":"divider"}`), wantField: "chat.blocks"},
		{name: "blocks empty", body: withRich(validSlack, "blocks", `[]`), wantField: "chat.blocks"},
		{name: "block without type", body: withRich(validSlack, "blocks", `[{"text":"x"}]`), wantField: "chat.blocks[0].type"},
		{name: "block not an object", body: withRich(validSlack, "blocks", `["divider"]`), wantField: "chat.blocks[0]"},
		{name: "embeds empty", body: withRich(validDiscord, "embeds", `[]`), wantField: "chat.embeds"},
		{name: "embed fields not an array", body: withRich(validDiscord, "embeds", embed(`"fields":{"name":"n","value":"v"}`)), wantField: "chat.embeds[0].fields"},
		{name: "embed not an object", body: withRich(validDiscord, "embeds", `[null]`), wantField: "chat.embeds[0]"},
		{name: "embed title null", body: withRich(validDiscord, "embeds", embed(`"title":null`)), wantField: "chat.embeds[0].title"},
		{name: "embed footer a string", body: withRich(validDiscord, "embeds", embed(`"footer":"ci"`)), wantField: "chat.embeds[0].footer"},
		{name: "card not adaptive", body: withRich(validTeams, "card", `{"type":"MessageCard"}`), wantField: "chat.card.type"},
		{name: "card an array", body: withRich(validTeams, "card", `[`+card+`]`), wantField: "chat.card"},
		{name: "unknown service", body: strings.Replace(validSlack, `"slack"`, `"mattermost"`, 1), wantField: "chat.service"},
		{name: "missing service", body: strings.Replace(validSlack, `"service":"slack",`, ``, 1), wantField: "chat.service"},
		{name: "missing url", body: strings.Replace(validSlack, `"url":"https://hooks.slack.com/services/T0/B0/XXXX",`, ``, 1), wantField: "chat.url"},
		{name: "ftp url", body: strings.Replace(validSlack, "https://", "ftp://", 1), wantField: "chat.url"},
		{name: "url host of 253 characters", body: strings.Replace(validSlack, "hooks.slack.com", longHost(253), 1)},
		{name: "url host of 254 characters", body: strings.Replace(validSlack, "hooks.slack.com", longHost(254), 1), wantField: "chat.url"},
		{name: "url host of 2,100 characters and a port", body: strings.Replace(validSlack, "hooks.slack.com", longHost(2100)+":443", 1), wantField: "chat.url"},
		{name: "url port out of range", body: strings.Replace(validSlack, "hooks.slack.com", "hooks.slack.com:70000", 1), wantField: "chat.url", goOnly: true},
		{name: "unknown chat field", body: strings.Replace(validSlack, `"text"`, `"channel":"#ops","text"`, 1), wantField: "chat.channel"},
		{name: "text null", body: strings.Replace(validSlack, `"Deploy finished"`, `null`, 1), wantField: "chat.text"},
		{name: "text a number", body: strings.Replace(validSlack, `"Deploy finished"`, `7`, 1), wantField: "chat.text"},
		{name: "chat missing", body: `{"version":1,"id":"c","channel":"chat"}`, wantField: "chat"},
		{name: "chat with a webhook object", body: strings.Replace(validSlack, `"channel":"chat"`, `"channel":"chat","webhook":{}`, 1), wantField: "webhook"},
		{name: "webhook with a chat object", body: strings.Replace(validWebhook, `"channel":"webhook"`, `"channel":"webhook","chat":{}`, 1), wantField: "chat"},
		{name: "duplicate member in blocks", body: withRich(validSlack, "blocks", `[{"type":"divider","type":"section"}]`), wantField: "chat.blocks[0].type", goOnly: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := notification.Parse([]byte(tt.body))
			if tt.wantField == "" {
				require.NoError(t, err)
				require.Equal(t, notification.ChannelChat, m.Channel)
			} else {
				require.Error(t, err)
				require.Equal(t, tt.wantField, problemFields(t, err)[0], "error: %v", err)
			}
			require.Equal(t, tt.wantField == "" || tt.goOnly, schemaValid(t, schema, []byte(tt.body)), "the schema must agree with Parse")
		})
	}
}

func TestChatRoundTrip(t *testing.T) {
	t.Parallel()
	m := &notification.Message{
		Version: notification.Version, ID: "deploy-7", Channel: notification.ChannelChat,
		Chat: &notification.Chat{
			Service: notification.ChatDiscord, URL: "https://discord.com/api/webhooks/1/tok", Text: "Deploy finished",
			Embeds: json.RawMessage(`[{"title":"Deploy","fields":[{"name":"env","value":"prod"}]}]`),
		},
	}
	require.NoError(t, m.Validate())
	body, err := json.Marshal(m)
	require.NoError(t, err)
	got, err := notification.Parse(body)
	require.NoError(t, err)
	require.Equal(t, m, got)
	require.Equal(t, "discord.com", got.Host())
}

func TestChannels(t *testing.T) {
	t.Parallel()
	for _, c := range notification.Channels {
		require.True(t, c.Known(), c)
	}
	require.False(t, notification.Channel("sms").Known())
	require.False(t, notification.Channel("Chat").Known(), "names match exactly")
	// The schema's channel enum is the same list.
	var schema struct {
		Properties struct {
			Channel struct {
				Enum []notification.Channel `json:"enum"`
			} `json:"channel"`
		} `json:"properties"`
	}
	raw, err := os.ReadFile("notification.v1.schema.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &schema))
	require.Equal(t, notification.Channels, schema.Properties.Channel.Enum)
	_, err = notification.Parse([]byte(`{"version":1,"id":"x","channel":"sms"}`))
	require.ErrorContains(t, err, `(want "email", "webhook", "chat" or "event")`)
}

func TestHost(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		validSlack:   "hooks.slack.com",
		validTeams:   "prod-01.westeurope.logic.azure.com",
		validWebhook: "hooks.example.com",
		validEmail:   "",
	} {
		m, err := notification.Parse([]byte(body))
		require.NoError(t, err)
		require.Equal(t, want, m.Host())
	}
}

// TestRichFormOfAnotherService: a rich form on the wrong service's message
// names the service it belongs to, so a producer learns which one to use.
func TestRichFormOfAnotherService(t *testing.T) {
	t.Parallel()
	withRich := func(body, name, rich string) string {
		return strings.Replace(body, `"text":"Deploy finished"`, `"text":"Deploy finished","`+name+`":`+rich, 1)
	}
	for _, tt := range []struct{ body, want string }{
		{withRich(validSlack, "embeds", `[{"title":"t"}]`), `chat.embeds: only with service "discord"`},
		{withRich(validSlack, "card", `{"type":"AdaptiveCard"}`), `chat.card: only with service "teams"`},
		{withRich(validDiscord, "blocks", `[{"type":"divider"}]`), `chat.blocks: only with service "slack"`},
		{withRich(validTeams, "embeds", `[{"title":"t"}]`), `chat.embeds: only with service "discord"`},
	} {
		_, err := notification.Parse([]byte(tt.body))
		require.ErrorContains(t, err, tt.want)
	}
}
