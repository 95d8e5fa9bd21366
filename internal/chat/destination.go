package chat

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/notification"
)

// DestinationPrefix starts every chat destination key: "chat:" followed
// by the service's name, ":" and 32 hex digits.
const DestinationPrefix = "chat:"

// Destination returns the key herald keeps a chat webhook's pace and
// health under: "chat:<service>:<32 hex digits>", the first 16 bytes of
// the SHA-256 of the webhook's normalized address. It names one webhook
// however its URL is written, and holds no credential (the URL's token
// cannot be read back from it), so logs, dead-letter reasons and
// `herald destinations` print it. Normalized:
//
//   - Discord: the webhook's id and token from /api[/vN]/webhooks/ID/TOKEN
//     on any of Discord's hosts; API version, query and a trailing
//     /slack or /github are left out.
//   - Slack: the path /services/T…/B…/TOKEN on hooks.slack.com.
//   - Teams: host (each flow's own) and path, and the query's parameters
//     sorted.
//
// A URL on a host that is not the service's own (Config.AllowHosts) keeps
// its host and port in the address. Hosts are compared in lower case
// without a trailing dot or https's own port 443 (a Workflows URL is
// copied both with :443 and without it). It returns an error when the service
// is unknown or the URL does not parse.
func Destination(service notification.ChatService, rawURL string) (string, error) {
	svc := services[service]
	if svc == nil {
		return "", fmt.Errorf("unknown chat service %q", logSafe(string(service)))
	}
	// One webhook spelt several ways (host case, default port, a trailing
	// dot, escapes of unreserved characters) is one destination.
	if n, err := NormalizeURL(rawURL); err == nil {
		rawURL = n
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "", errors.New("the URL does not parse as an absolute URL")
	}
	return svc.destination(u), nil
}

// IsDestination reports whether s has the form of a key Destination returns.
func IsDestination(s string) bool { return destinationPattern.MatchString(s) }

var destinationPattern = regexp.MustCompile(`^chat:(slack|discord|teams):[0-9a-f]{32}$`)

// ServiceOfHost returns the service whose own host host is (DefaultHosts),
// or "" when none.
func ServiceOfHost(host string) notification.ChatService {
	for _, svc := range []*service{slack, discord, teams} {
		if svc.ownHost(host) {
			return svc.name
		}
	}
	return ""
}

func (svc *service) destination(u *url.URL) string {
	var b strings.Builder
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if p := u.Port(); p != "" && !(p == "443" && strings.EqualFold(u.Scheme, "https")) {
		host += ":" + p // 443 is https's own: a Workflows URL is copied with and without it
	}
	if svc != teams && svc.ownHost(u.Hostname()) {
		// Every Discord host serves every Discord webhook; Slack has one.
		host = string(svc.name)
	}
	b.WriteString(host)
	switch {
	case svc == discord && discordPath.MatchString(u.EscapedPath()):
		m := discordPath.FindStringSubmatch(u.EscapedPath())
		token := m[4]
		if t, err := url.PathUnescape(token); err == nil {
			token = url.PathEscape(t) // one spelling of the token: %2D is -
		}
		b.WriteString("/webhooks/" + m[3] + "/" + token)
	case svc == teams:
		b.WriteString(u.EscapedPath())
		if u.RawQuery != "" {
			b.WriteString("?" + u.Query().Encode()) // sorted by key
		}
	default:
		b.WriteString(u.EscapedPath())
	}
	sum := sha256.Sum256([]byte(b.String()))
	return DestinationPrefix + string(svc.name) + ":" + hex.EncodeToString(sum[:16])
}

// discordPath is Execute Webhook's path: /api, an optional API version
// /vN, /webhooks/ID/TOKEN, and an optional /slack or /github for the
// compatible bodies.
var discordPath = regexp.MustCompile(`^/api(/v(\d+))?/webhooks/(\d+)/([^/]+)(/slack|/github)?/?$`)

// DiscordAPIVersion is the version of Discord's API herald posts a webhook
// URL without one to: a URL copied from Discord (/api/webhooks/ID/TOKEN)
// runs on Discord's default version, 6, deprecated, which gives a 429's
// Retry-After and retry_after in milliseconds; from version 8 on they are
// in seconds (Discord's change log, "API and Gateway V8").
const DiscordAPIVersion = 10

// discordVersioned returns the URL herald posts a Discord webhook URL u to,
// and the API version it runs on: Execute Webhook's own path,
// /api/vN/webhooks/ID/TOKEN, with u's version (DiscordAPIVersion when it
// has none) and u's query (?wait=true, ?thread_id=…). A trailing /slack or
// /github is dropped: those are Discord's Slack- and GitHub-compatible
// endpoints, which read another body than the one herald sends (the GitHub
// one answers 204 to a body that is no GitHub event and posts nothing,
// discord-api-docs issues 6957 and 7385), and a trailing slash with them.
// The legacy host discordapp.com is posted to as discord.com, which
// serves the same webhooks: Discord added a global rate limit to requests
// to discordapp.com and asks callers to use discord.com
// (discord-api-docs discussion 6490). A path that is not Execute
// Webhook's is posted as it is, version 0 (the current unit, seconds, is
// read).
func discordVersioned(u *url.URL) (*url.URL, int) {
	m := discordPath.FindStringSubmatch(u.EscapedPath())
	if m == nil {
		return u, 0
	}
	host := u.Host
	if h := strings.TrimSuffix(strings.ToLower(u.Hostname()), "."); h == "discordapp.com" {
		host = "discord.com"
		if p := u.Port(); p != "" {
			host += ":" + p
		}
	}
	version := DiscordAPIVersion
	if m[2] != "" {
		v, err := strconv.Atoi(m[2])
		if err != nil {
			return u, 0
		}
		version = v
	}
	escaped := "/api/v" + strconv.Itoa(version) + "/webhooks/" + m[3] + "/" + m[4]
	path, err := url.PathUnescape(escaped)
	if err != nil {
		return u, 0
	}
	v := *u
	v.Host, v.Path, v.RawPath = host, path, escaped
	return &v, version
}
