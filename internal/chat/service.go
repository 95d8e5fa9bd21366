package chat

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/notification"
)

// service is one chat service's rules: hosts, rate, body and answers.
type service struct {
	name notification.ChatService
	// hosts are the host names its webhooks use: exact names, and
	// ".suffix" for every name under suffix.
	hosts []string
	// rate is the pace herald keeps to each of its webhooks, under the
	// service's documented per-webhook limit (rateOf: a Teams legacy
	// connector has its own).
	rate rate
	// body builds the request body of c.
	body func(c *notification.Chat) ([]byte, error)
	// reason reads a failed response's body: the service's reason token
	// (for the class; "" when it names none known) and a detail for the
	// error text.
	reason func(status int, body []byte) (token string, permanent bool)
	// gone are the reasons that say the webhook itself is gone (deleted,
	// its token revoked, its channel or team gone or archived): a
	// permanent error with Gone set, after which herald sends it nothing
	// more until an operator enables it.
	gone map[string]bool
	// classes are the service's error classes by reason (declareClasses).
	classes map[string]delivery.Class
}

// services are the chat services by name.
var services = map[notification.ChatService]*service{
	notification.ChatSlack:   slack,
	notification.ChatDiscord: discord,
	notification.ChatTeams:   teams,
}

// DefaultHosts returns the host names a service's webhooks may use when
// Config.AllowHosts adds none: exact names, and ".suffix" for any name
// under suffix.
func DefaultHosts(s notification.ChatService) []string {
	if svc := services[s]; svc != nil {
		return append([]string(nil), svc.hosts...)
	}
	return nil
}

// slack posts {"text", "blocks"} to hooks.slack.com. Its answers are a
// status and a plain-text token ("ok"; "no_service", "channel_is_archived"
// …), documented in "Handling errors" of the incoming webhooks guide and the
// changelog of 2016-05-17. Rate: "1 per second" for posting messages, "short
// bursts >1 allowed" without guarantee (Rate limits guide): herald sends one
// per second per webhook, no burst.
var slack = &service{
	name:  notification.ChatSlack,
	hosts: []string{"hooks.slack.com"},
	rate:  rate{every: time.Second, burst: 1},
	body: func(c *notification.Chat) ([]byte, error) {
		return marshal(struct {
			Text   string          `json:"text,omitempty"`
			Blocks json.RawMessage `json:"blocks,omitempty"`
		}{c.Text, c.Blocks})
	},
	gone: goneSet("no_service", "no_team", "no_active_hooks", "team_disabled", "invalid_token",
		"channel_not_found", "channel_is_archived", "action_prohibited", "posting_to_general_channel_denied"),
	reason: func(status int, body []byte) (string, bool) {
		token := string(bytes.TrimSpace(body))
		permanent, known := slackReasons[token]
		if !known {
			return "", false
		}
		return token, permanent
	},
}

// slackReasons are the tokens Slack answers a failed incoming webhook post
// with, and whether a retry can fix them: the webhook disabled, removed or
// its token revoked, its team gone, the channel missing or archived, the
// post prohibited, or the body refused are permanent; rollup_error
// ("something strange and unusual happened", HTTP 500) is not.
var slackReasons = map[string]bool{
	"invalid_payload":                         true, // 400
	"user_not_found":                          true, // 400
	"invalid_blocks":                          true, // 400
	"invalid_blocks_format":                   true, // 400
	"invalid_attachments":                     true, // 400
	"too_many_attachments":                    true, // 400
	"no_text":                                 true, // 400
	"missing_text_or_fallback_or_attachments": true, // 400
	"action_prohibited":                       true, // 403
	"posting_to_general_channel_denied":       true, // 403
	"invalid_token":                           true, // 403
	"team_disabled":                           true, // 403
	"channel_not_found":                       true, // 404
	"no_service":                              true, // 404: the webhook is disabled, removed or invalid
	"no_team":                                 true, // 404
	"no_active_hooks":                         true, // 404
	"channel_is_archived":                     true, // 410
	"rollup_error":                            false,
}

// discord runs Execute Webhook with {"content", "embeds",
// "allowed_mentions"}: no mention in a notification pings anyone. Success is
// 204 No Content, or 200 with the message when the URL asks ?wait=true.
// Errors are JSON {"message", "code"} (JSON error codes of "Opcodes and
// Status Codes"); a 429 carries {"retry_after": seconds, fractional} beside
// the Retry-After header. Rate: each webhook has its own bucket, announced
// in X-RateLimit-Remaining and X-RateLimit-Reset-After (Rate Limits guide);
// herald also paces 5 requests per 2 seconds, the common bucket size.
var discord = &service{
	name:  notification.ChatDiscord,
	hosts: []string{"discord.com", "discordapp.com", "canary.discord.com", "ptb.discord.com"},
	rate:  rate{every: 400 * time.Millisecond, burst: 5},
	body: func(c *notification.Chat) ([]byte, error) {
		return marshal(struct {
			Content         string          `json:"content,omitempty"`
			Embeds          json.RawMessage `json:"embeds,omitempty"`
			AllowedMentions struct {
				Parse []string `json:"parse"`
			} `json:"allowed_mentions"`
		}{Content: c.Text, Embeds: c.Embeds, AllowedMentions: struct {
			Parse []string `json:"parse"`
		}{Parse: []string{}}})
	},
	reason: func(status int, body []byte) (string, bool) {
		var e struct {
			Code *int `json:"code"`
		}
		if json.Unmarshal(body, &e) != nil || e.Code == nil {
			return "", false
		}
		token, ok := discordReasons[*e.Code]
		return token, ok
	},
	gone: goneSet("unknown_webhook", "invalid_webhook_token", "unknown_channel"),
}

// discordReasons name the JSON error codes that end a Discord webhook's
// delivery: the webhook deleted or its token regenerated, the channel gone
// or closed to it, or the body refused.
var discordReasons = map[int]string{
	10003: "unknown_channel",
	10015: "unknown_webhook",
	50001: "missing_access",
	50013: "missing_permissions",
	50027: "invalid_webhook_token",
	50006: "empty_message",
	50035: "invalid_form_body",
	50109: "invalid_json",
	40005: "request_entity_too_large",
}

// rate is a webhook's pace (the generic cell rate algorithm): at most
// burst posts at once, then one per every. In any span W it lets through
// at most burst + W/every posts, the bound each service's pace is chosen
// by.
type rate struct {
	every time.Duration
	burst int
}

// rateOf is the pace of svc's webhook at u.
func (svc *service) rateOf(u *url.URL) rate {
	if svc == teams && teamsLegacy(u) {
		return teamsLegacyRate
	}
	return svc.rate
}

// Teams' paces. A legacy connector's limits are a table ("Rate limiting
// for connectors", Microsoft Teams platform docs): at most 4 requests in
// 1 s, 60 in 30 s, 100 in an hour, 150 in 2 hours and 1,800 in a day per
// webhook, and Teams blocks a webhook that exceeds one for hours
// (MicrosoftDocs/msteams-docs issue 4155). One post per 50 s after a
// burst of 3 keeps under every row with a margin (in the worst span: 3
// in 1 s, 75 in an hour, 147 in 2 hours, 1,731 in a day). A Workflows
// webhook is held to "more than four requests … in a second" with one
// request of margin, for a network delay that bunches posts: one per
// 400 ms, no burst, is at most 3 in any second.
var (
	teamsLegacyRate    = rate{every: 50 * time.Second, burst: 3}
	teamsWorkflowsRate = rate{every: 400 * time.Millisecond, burst: 1}
)

// teams posts a message activity with one Adaptive Card attachment, the
// form both Teams Workflows ("When a Teams webhook request is received")
// and legacy incoming webhooks take. Workflows answer 202 Accepted, legacy
// webhooks 200 with the text "1"; a legacy webhook may also answer 200 with
// the text of the error Teams gave it ("… returned HTTP error 429 …"), read
// as that status. Rate: teamsLegacyRate and teamsWorkflowsRate.
// Errors carry no reason tokens herald relies on: the class names the status.
var teams = &service{
	name: notification.ChatTeams,
	hosts: []string{
		".webhook.office.com", "outlook.office.com", // legacy Office 365 connectors (retiring)
		".logic.azure.com", ".environment.api.powerplatform.com", // Workflows
		".logic.azure.us", ".environment.api.gov.powerplatform.microsoft.us", // Workflows, US Government (GCC)
		".environment.api.high.powerplatform.microsoft.us", ".environment.api.appsplatform.us", // GCC High, DoD
	},
	rate: teamsWorkflowsRate,
	body: func(c *notification.Chat) ([]byte, error) {
		card := c.Card
		summary := c.Text
		if len(card) == 0 {
			var err error
			card, err = marshal(map[string]any{
				"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
				"type":    "AdaptiveCard",
				"version": "1.4",
				"body":    []any{map[string]any{"type": "TextBlock", "text": c.Text, "wrap": true}},
			})
			if err != nil {
				return nil, err
			}
			summary = ""
		}
		type attachment struct {
			ContentType string          `json:"contentType"`
			ContentURL  *string         `json:"contentUrl"`
			Content     json.RawMessage `json:"content"`
		}
		return marshal(struct {
			Type        string       `json:"type"`
			Summary     string       `json:"summary,omitempty"`
			Attachments []attachment `json:"attachments"`
		}{"message", summary, []attachment{{ContentType: TeamsCardContentType, Content: card}}})
	},
	reason: func(status int, _ []byte) (string, bool) {
		token, ok := teamsReasons[status]
		return token, ok
	},
	gone: goneSet("not_found", "gone", "unauthorized"),
}

// teamsLegacy reports whether u is a legacy Office 365 connector's
// incoming webhook, which answers "1" when it delivered: /webhookb2/… (on
// *.webhook.office.com), or the older form /webhook/… (on
// outlook.office.com or outlook.office365.com, before the connectors
// moved to webhookb2 in 2021).
func teamsLegacy(u *url.URL) bool {
	return strings.HasPrefix(u.Path, "/webhookb2/") || strings.HasPrefix(u.Path, "/webhook/")
}

// teamsErrorAnswer reports whether a Teams 200 reports a failure: a
// legacy connector's answer that is not a number of messages posted (a
// positive integer, "1" in most cases: "the response can be considered
// successful only if it returns a number", Teams engineering in
// MicrosoftDocs/msteams-docs issue 9698), or a JSON error envelope
// {"error": …} from either kind. A Workflows 200 with another body is what
// the flow's own Response action said: delivered.
func teamsErrorAnswer(legacy bool, body []byte) bool {
	body = bytes.TrimSpace(body)
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 && string(e.Error) != "null" {
		return true
	}
	if !legacy {
		return false
	}
	n, err := strconv.ParseUint(string(body), 10, 32)
	return err != nil || n == 0 || body[0] == '+'
}

func goneSet(reasons ...string) map[string]bool {
	m := map[string]bool{}
	for _, r := range reasons {
		m[r] = true
	}
	return m
}

// TeamsCardContentType is an Adaptive Card attachment's contentType.
const TeamsCardContentType = "application/vnd.microsoft.card.adaptive"

// teamsReasons name the statuses that end a Teams webhook's delivery.
var teamsReasons = map[int]string{
	http.StatusBadRequest:            "bad_request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusGone:                  "gone",
	http.StatusRequestEntityTooLarge: "too_large",
}

// legacyTeamsError finds the status in a legacy Teams webhook's 200 answer
// that reports a failure ("Microsoft Teams endpoint returned HTTP error 429
// with ContextId …").
var legacyTeamsError = regexp.MustCompile(`returned HTTP error (\d{3})`)

// answeredStatus is the status a response stands for: its own, or for a
// Teams 200 that reports a failure, the one it reports.
func (svc *service) answeredStatus(status int, body []byte) int {
	if svc != teams || status != http.StatusOK {
		return status
	}
	if m := legacyTeamsError.FindSubmatch(body); m != nil {
		if n, err := strconv.Atoi(string(m[1])); err == nil && n >= 400 {
			return n
		}
	}
	return status
}

// marshal is json.Marshal without HTML escaping: the body carries "<", ">"
// and "&" as the producer wrote them, not as \u003c escapes six bytes long
// that count against a service's body limit (Teams' 28 KB) and say nothing
// to a JSON reader.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// commonReasons are the reasons every service's classes name besides its
// own: what herald checks before sending, the statuses the service names
// no reason for, and the transport failures (outbound.Failures, added in
// init).
var commonReasons = []string{
	"invalid_url", "host_not_allowed", "blocked_destination",
	"rate_limited", "redirect", "http_408", "http_4xx", "http_5xx", "http_other",
}

// originDownReasons are the common reasons that say the service's origin is
// down, not that one message was refused (delivery.NewOriginDownClass): the
// statuses below and every transport failure (outbound.Failures).
// rate_limited is not among them: herald's own pacer writes it too.
var originDownReasons = []string{"http_408", "http_5xx"}

func init() {
	// Every class a service can write, declared once (delivery.NewClass):
	// "slack_no_service", "discord_rate_limited", "teams_timeout" …
	for _, svc := range []*service{slack, discord, teams} {
		reasons := slices.Clone(commonReasons)
		for _, f := range outbound.Failures {
			reasons = append(reasons, string(f))
		}
		switch svc {
		case slack:
			reasons = slices.AppendSeq(reasons, maps.Keys(slackReasons))
		case discord:
			reasons = slices.AppendSeq(reasons, maps.Values(discordReasons))
			reasons = append(reasons, "banned")
		case teams:
			reasons = slices.AppendSeq(reasons, maps.Values(teamsReasons))
			reasons = append(reasons, "error_answer")
		}
		svc.classes = map[string]delivery.Class{}
		for _, r := range reasons {
			declare := delivery.NewClass
			if slices.Contains(originDownReasons, r) || slices.Contains(outbound.Failures, outbound.Failure(r)) {
				declare = delivery.NewOriginDownClass
			}
			svc.classes[r] = declare(string(svc.name) + "_" + r)
		}
	}
}

// class is the error class of reason r of svc: "slack_no_service". A reason
// without a declared class (none: the tests send every one) is written as
// the service's http_other.
func (svc *service) class(r string) delivery.Class {
	if c, ok := svc.classes[r]; ok {
		return c
	}
	return svc.classes["http_other"]
}
