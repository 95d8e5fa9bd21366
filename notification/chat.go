package notification

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ChatService names the chat service a chat notification goes to.
type ChatService string

// The chat services of contract v1.
const (
	// ChatSlack is a Slack incoming webhook
	// (https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks).
	ChatSlack ChatService = "slack"
	// ChatDiscord is a Discord webhook, run with "Execute Webhook"
	// (https://discord.com/developers/docs/resources/webhook#execute-webhook).
	ChatDiscord ChatService = "discord"
	// ChatTeams is a Microsoft Teams channel's Workflows webhook ("When a
	// Teams webhook request is received") or legacy incoming webhook
	// (https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook).
	ChatTeams ChatService = "teams"
)

// ChatServices are the chat services, in the order the contract lists them.
var ChatServices = []ChatService{ChatSlack, ChatDiscord, ChatTeams}

// Chat is a message posted to a chat service's incoming webhook: a Slack or
// Discord channel, a Microsoft Teams channel.
//
// Text and the service's own rich form are both optional, but one of them is
// required: Slack Blocks, Discord Embeds or a Teams Card, passed on as given.
// The rich form of another service is not allowed.
type Chat struct {
	// Service is "slack", "discord" or "teams".
	Service ChatService `json:"service"`
	// URL is the incoming webhook's absolute https URL. Its path (Slack,
	// Discord) or query (Teams Workflows) is the webhook's credential: herald
	// names only its host in logs and reasons.
	URL string `json:"url,omitempty"`
	// Endpoint is a registered chat endpoint's id (ep_…), instead of
	// Service and URL: herald reads them from the endpoint store.
	Endpoint string `json:"endpoint,omitempty"`
	// Text is the plain text: Slack "text", Discord "content", the
	// TextBlock of a Teams Adaptive Card (with Card: the message's summary).
	// At most MaxSlackTextChars, MaxDiscordContentChars or
	// MaxTeamsTextChars characters.
	Text string `json:"text,omitempty"`
	// Blocks is the Slack Block Kit "blocks" array, 1–MaxSlackBlocks
	// objects, each with a string "type". Slack only.
	Blocks json.RawMessage `json:"blocks,omitempty"`
	// Embeds is the Discord "embeds" array, 1–MaxDiscordEmbeds embed
	// objects within Discord's embed limits. Discord only.
	Embeds json.RawMessage `json:"embeds,omitempty"`
	// Card is a Microsoft Teams Adaptive Card: an object whose "type" is
	// "AdaptiveCard". Teams only.
	Card json.RawMessage `json:"card,omitempty"`
}

// Limits of chat notifications, from each service's documentation. Text
// lengths count Unicode code points.
const (
	// MaxSlackTextChars is the longest Slack text: Slack truncates a
	// message's text beyond 40,000 characters (changelog 2018-04,
	// "Truncating really long messages"; chat.postMessage), so a longer one
	// would arrive cut.
	MaxSlackTextChars = 40000
	// MaxSlackBlocks is the most blocks of one Slack message (Block Kit:
	// "up to 50 blocks in each message").
	MaxSlackBlocks = 50
	// MaxDiscordContentChars is the longest Discord message content
	// (Execute Webhook, "content": up to 2000 characters).
	MaxDiscordContentChars = 2000
	// MaxDiscordEmbeds is the most embeds of one Discord message (Execute
	// Webhook, "embeds": up to 10).
	MaxDiscordEmbeds = 10
	// MaxDiscordEmbedChars is the most characters of every embed's title,
	// description, field names and values, footer text and author name
	// together (Discord "Embed Limits": 6000).
	MaxDiscordEmbedChars = 6000
	// MaxTeamsMessageBytes is the largest message a Teams webhook takes:
	// 28 KB ("The message size limit is 28 KB"). The Teams sender checks
	// the request body it builds against it; the contract checks Text and
	// Card, the parts the producer writes.
	MaxTeamsMessageBytes = 28 << 10
	// MaxTeamsTextChars bounds Teams text; the whole message is bounded by
	// MaxTeamsMessageBytes as well.
	MaxTeamsTextChars = MaxTeamsMessageBytes
	// MaxChatTextChars is the longest text of a chat delivery to a
	// registered endpoint (chat.endpoint): the longest of any service's,
	// MaxSlackTextChars; the fan-out cuts each to its service's limit.
	MaxChatTextChars = MaxSlackTextChars
)

// discordEmbedLimits are Discord's per-field embed limits ("Embed Limits"):
// characters of each, and the most fields of one embed.
var discordEmbedLimits = struct {
	title, description, fieldName, fieldValue, footerText, authorName, fields int
}{256, 4096, 256, 1024, 2048, 256, 25}

// chatRich is the name of each service's rich form in a chat object.
var chatRich = map[ChatService]string{ChatSlack: "blocks", ChatDiscord: "embeds", ChatTeams: "card"}

func (c *Chat) rich() map[string]json.RawMessage {
	return map[string]json.RawMessage{"blocks": c.Blocks, "embeds": c.Embeds, "card": c.Card}
}

func (v *validator) chat(c *Chat) {
	if c.Endpoint != "" {
		v.chatEndpoint(c)
		return
	}
	switch c.Service {
	case ChatSlack, ChatDiscord, ChatTeams:
	default:
		v.add("chat.service", `unknown chat service %q (want "slack", "discord" or "teams")`, logSafe(string(c.Service)))
		return
	}
	if c.URL == "" {
		v.add("chat.url", "required: the incoming webhook's absolute https URL (or chat.endpoint, a registered endpoint's id, instead of service and url)")
	} else if u, err := url.Parse(c.URL); err != nil || !(strings.HasPrefix(c.URL, "https://") || strings.HasPrefix(c.URL, "http://")) || u.Hostname() == "" {
		v.add("chat.url", "must be an absolute https URL with a host (http only where the function allows it for local testing)")
	} else if n := utf8.RuneCountInString(u.Hostname()); n > MaxHostChars {
		v.add("chat.url", "a host of %d characters; at most %d", n, MaxHostChars)
	} else if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			v.add("chat.url", "port must be from 1 to 65535")
		}
	}
	own := chatRich[c.Service]
	rich := c.rich()
	for _, name := range []string{"blocks", "embeds", "card"} {
		if name != own && len(rich[name]) > 0 {
			v.add("chat."+name, "only with service %q", serviceOf(name))
		}
	}
	if c.Text == "" && len(rich[own]) == 0 {
		v.add("chat.text", "chat.text or chat.%s is required", own)
	}
	max := ChatTextLimit(c.Service)
	if n := utf8.RuneCountInString(c.Text); n > max {
		v.add("chat.text", "%d characters; %s allows at most %d", n, c.Service, max)
	}
	switch c.Service {
	case ChatSlack:
		if len(c.Blocks) > 0 {
			v.slackBlocks(c.Blocks)
		}
	case ChatDiscord:
		if len(c.Embeds) > 0 {
			v.discordEmbeds(c.Embeds)
		}
	case ChatTeams:
		if len(c.Card) > 0 {
			v.teamsCard(c.Card)
		}
		if n := len(c.Text) + len(c.Card); n > MaxTeamsMessageBytes {
			v.add("chat.card", "text and card are %d bytes; a Teams message is at most %d", n, MaxTeamsMessageBytes)
		}
	}
}

// chatEndpoint checks a chat delivery to a registered endpoint: the store
// knows its service and URL, so neither is given, and its text, the only
// form (the fan-out writes it), is at most the longest text of any service
// (the fan-out cuts it to its endpoint's service).
func (v *validator) chatEndpoint(c *Chat) {
	v.endpointRef("chat.endpoint", c.Endpoint)
	for _, f := range []struct {
		name string
		set  bool
	}{{"service", c.Service != ""}, {"url", c.URL != ""}, {"blocks", len(c.Blocks) > 0}, {"embeds", len(c.Embeds) > 0}, {"card", len(c.Card) > 0}} {
		if f.set {
			v.add("chat."+f.name, "not allowed with chat.endpoint")
		}
	}
	switch n := utf8.RuneCountInString(c.Text); {
	case n == 0:
		v.add("chat.text", "required with chat.endpoint")
	case n > MaxChatTextChars:
		v.add("chat.text", "%d characters; at most %d", n, MaxChatTextChars)
	}
}

// ChatTextLimit returns the most characters of service s's text
// (MaxSlackTextChars, MaxDiscordContentChars, MaxTeamsTextChars), 0 for an
// unknown service.
func ChatTextLimit(s ChatService) int {
	return map[ChatService]int{ChatSlack: MaxSlackTextChars, ChatDiscord: MaxDiscordContentChars, ChatTeams: MaxTeamsTextChars}[s]
}

func serviceOf(rich string) ChatService {
	for s, name := range chatRich {
		if name == rich {
			return s
		}
	}
	return ""
}

func (v *validator) slackBlocks(raw json.RawMessage) {
	var blocks []json.RawMessage
	if !isJSONArray(raw) || json.Unmarshal(raw, &blocks) != nil {
		v.add("chat.blocks", "must be an array of block objects")
		return
	}
	switch {
	case len(blocks) == 0:
		v.add("chat.blocks", "must hold at least one block")
	case len(blocks) > MaxSlackBlocks:
		v.add("chat.blocks", "%d blocks; Slack allows at most %d", len(blocks), MaxSlackBlocks)
	}
	for i, raw := range blocks {
		b, ok := jsonObject(raw)
		if !ok {
			v.add(fmt.Sprintf("chat.blocks[%d]", i), "must be a block object")
			continue
		}
		if typ, ok := jsonString(b["type"]); !ok || typ == "" {
			v.add(fmt.Sprintf("chat.blocks[%d].type", i), "required: a block's type, such as \"section\"")
		}
	}
}

func (v *validator) discordEmbeds(raw json.RawMessage) {
	var embeds []json.RawMessage
	if !isJSONArray(raw) || json.Unmarshal(raw, &embeds) != nil {
		v.add("chat.embeds", "must be an array of embed objects")
		return
	}
	switch {
	case len(embeds) == 0:
		v.add("chat.embeds", "must hold at least one embed")
	case len(embeds) > MaxDiscordEmbeds:
		v.add("chat.embeds", "%d embeds; Discord allows at most %d", len(embeds), MaxDiscordEmbeds)
	}
	lim := discordEmbedLimits
	total := 0
	// text checks the string member name of obj at path, when present.
	text := func(obj map[string]json.RawMessage, path, name string, max int) {
		raw, ok := obj[name]
		if !ok {
			return
		}
		s, ok := jsonString(raw)
		if !ok {
			v.add(path+"."+name, "must be a string")
			return
		}
		n := utf8.RuneCountInString(s)
		total += n
		if n > max {
			v.add(path+"."+name, "%d characters; Discord allows at most %d", n, max)
		}
	}
	for i, rawEmbed := range embeds {
		path := fmt.Sprintf("chat.embeds[%d]", i)
		e, ok := jsonObject(rawEmbed)
		if !ok {
			v.add(path, "must be an embed object")
			continue
		}
		text(e, path, "title", lim.title)
		text(e, path, "description", lim.description)
		if raw, ok := e["fields"]; ok {
			var fields []json.RawMessage
			if !isJSONArray(raw) || json.Unmarshal(raw, &fields) != nil {
				v.add(path+".fields", "must be an array of field objects")
			}
			if len(fields) > lim.fields {
				v.add(path+".fields", "%d fields; Discord allows at most %d", len(fields), lim.fields)
			}
			for j, rawField := range fields {
				fpath := fmt.Sprintf("%s.fields[%d]", path, j)
				f, ok := jsonObject(rawField)
				if !ok {
					v.add(fpath, "must be a field object")
					continue
				}
				text(f, fpath, "name", lim.fieldName)
				text(f, fpath, "value", lim.fieldValue)
			}
		}
		for _, part := range []struct {
			name, text string
			max        int
		}{{"footer", "text", lim.footerText}, {"author", "name", lim.authorName}} {
			raw, ok := e[part.name]
			if !ok {
				continue
			}
			obj, ok := jsonObject(raw)
			if !ok {
				v.add(path+"."+part.name, "must be an object")
				continue
			}
			text(obj, path+"."+part.name, part.text, part.max)
		}
	}
	if total > MaxDiscordEmbedChars {
		v.add("chat.embeds", "%d characters in titles, descriptions, fields, footers and authors; Discord allows at most %d in all", total, MaxDiscordEmbedChars)
	}
}

// jsonString returns the string raw holds; false when raw is not a string
// (null included).
func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonObject returns the members of the object raw holds; false when raw is
// not an object (null included).
func jsonObject(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if !isObject(raw) || json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

func isJSONArray(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}

func (v *validator) teamsCard(raw json.RawMessage) {
	card, ok := jsonObject(raw)
	if !ok {
		v.add("chat.card", "must be an Adaptive Card object")
		return
	}
	if typ, _ := jsonString(card["type"]); typ != "AdaptiveCard" {
		v.add("chat.card.type", `must be "AdaptiveCard"`)
	}
}

// DestinationURL returns the URL the notification is posted to: a
// webhook's, or a chat webhook's (itself a credential: never log it); ""
// for an email, whose destination is no URL.
func (m *Message) DestinationURL() string {
	switch {
	case m.Webhook != nil:
		return m.Webhook.URL
	case m.Chat != nil:
		return m.Chat.URL
	}
	return ""
}

// Host returns the host name of the notification's destination URL (a
// webhook's or a chat webhook's), without port, path or query: the only
// part of it that logs and reasons may name. It returns "" for an email or
// a URL without a host.
func (m *Message) Host() string {
	raw := m.DestinationURL()
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
