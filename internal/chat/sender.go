package chat

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/tracecontext"
	"github.com/heraldhq/herald/notification"
)

// MaxRetryAfter is the longest delay a 429 can ask for: 12 hours, the SQS
// limit on a visibility timeout (outbound.MaxRetryAfter).
const MaxRetryAfter = outbound.MaxRetryAfter

// Config configures a [Sender].
type Config struct {
	// Timeout bounds one attempt, as webhook.Config.Timeout does: between
	// outbound.MinTimeout and outbound.MaxTimeout. Defaults to
	// outbound.DefaultTimeout (15 s).
	Timeout time.Duration
	// TLSClientConfig, when set, replaces the system roots (tests and the
	// demo trust their local receivers with it).
	TLSClientConfig *tls.Config
	// AllowCIDRs are networks a chat webhook may reach although the
	// destination check blocks them (outbound.CheckDestination; the same
	// HERALD_WEBHOOK_ALLOW_CIDRS as webhooks). Defaults to none.
	AllowCIDRs []netip.Prefix
	// AllowHTTP lets a chat webhook use plain http, for local testing only
	// (HERALD_WEBHOOK_ALLOW_HTTP): never to a service's own hosts, whose
	// URLs are credentials. Defaults to false.
	AllowHTTP bool
	// AllowHosts are host names any service's webhook may use besides the
	// service's own ([DefaultHosts]): an exact name ("127.0.0.1",
	// "chat-proxy.example.com") or ".suffix" for every name under suffix
	// (HERALD_CHAT_ALLOW_HOSTS). The destination check still applies.
	// Defaults to none.
	AllowHosts []string
	// UserAgent is the User-Agent request header. Defaults to
	// outbound.DefaultUserAgent ("herald/1").
	UserAgent string
	// Now is the clock of the rate limits. Defaults to time.Now. A
	// context's deadline is real time whatever Now reads: a turn is sent
	// only when its wait ends before time.Until the deadline.
	Now func() time.Time
	// Pace, when set, shares each webhook's pace with every execution
	// environment (package store's pace items): a send takes its turn
	// there with one conditional write, and a 429's hold is written
	// there. When a call fails or takes over 2 s, the Sender paces alone
	// for 10 s, then asks the store again: one failed call per 10 s, not
	// one per post.
	// Defaults to nil: each Sender paces what it sends alone.
	Pace PaceStore
}

// maxResponseBytes is how much of a response is read; maxReasonBytes how
// much of it is kept to read the service's reason.
const (
	maxResponseBytes = 64 << 10
	maxReasonBytes   = 4 << 10
)

// Sender posts chat notifications. It is safe for concurrent use and keeps
// connections and each webhook's rate across calls: build one per process.
type Sender struct {
	client     *http.Client
	timeout    time.Duration
	allowHTTP  bool
	allowHosts []string
	userAgent  string
	now        func() time.Time
	sleep      func(ctx context.Context, d time.Duration) error
	pace       *pacer
}

// NewSender returns a Sender for cfg, or an error naming a field out of
// range: a negative Timeout, an AllowHosts entry that is not a host name.
func NewSender(cfg Config) (*Sender, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = outbound.DefaultTimeout
	}
	if cfg.Timeout < outbound.MinTimeout || cfg.Timeout > outbound.MaxTimeout {
		return nil, fmt.Errorf("chat timeout: %v, want %v–%v", cfg.Timeout, outbound.MinTimeout, outbound.MaxTimeout)
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = outbound.DefaultUserAgent
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	hosts := make([]string, 0, len(cfg.AllowHosts))
	for _, h := range cfg.AllowHosts {
		if err := CheckAllowHost(h); err != nil {
			return nil, fmt.Errorf("chat allow hosts: %w", err)
		}
		hosts = append(hosts, strings.ToLower(h))
	}
	return &Sender{
		client: outbound.NewClient(outbound.ClientConfig{
			Timeout:             cfg.Timeout,
			TLSClientConfig:     cfg.TLSClientConfig,
			AllowCIDRs:          cfg.AllowCIDRs,
			MaxIdleConnsPerHost: 10,
		}),
		timeout:    cfg.Timeout,
		allowHTTP:  cfg.AllowHTTP,
		allowHosts: hosts,
		userAgent:  cfg.UserAgent,
		now:        cfg.Now,
		sleep:      sleep,
		pace:       newPacer(cfg.Pace),
	}, nil
}

// DestinationKey is m's chat webhook's key, [Destination]'s: the deliver
// function keeps each chat webhook's health under it
// (processor.DestinationKeyer). "" when m is not a chat message of a
// known service with a URL that parses.
func (s *Sender) DestinationKey(m *notification.Message) string {
	if m == nil || m.Chat == nil {
		return ""
	}
	key, err := Destination(m.Chat.Service, m.Chat.URL)
	if err != nil {
		return ""
	}
	return key
}

// CheckAllowHost reports whether h may be an entry of Config.AllowHosts: a
// host name or IP address without scheme, port or path, or "." followed by
// a domain.
func CheckAllowHost(h string) error {
	if a, err := netip.ParseAddr(h); err == nil && a.Zone() == "" {
		return nil
	}
	if !hostNamePattern.MatchString(strings.TrimPrefix(h, ".")) {
		return fmt.Errorf("%q: want a host name such as chat-proxy.example.com, .example.com for every name under it, or an IP address", h)
	}
	return nil
}

// hostNamePattern is a DNS name of letters, digits and hyphens.
var hostNamePattern = regexp.MustCompile(`^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$`)

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Send makes one delivery attempt of m, a chat message, and returns nil
// when the service accepted it (any 2xx: Slack 200 "ok", Discord 204 or
// 200, Teams 202 or 200), else a *delivery.PermanentError or
// *delivery.TransientError whose class starts with the service's name and
// names its reason ("slack_channel_is_archived", "discord_unknown_webhook",
// "teams_not_found", "slack_rate_limited"; docs/delivery.md lists them).
//
// It first waits for the webhook's turn under its rate limit; when that
// turn comes after ctx's deadline it sends nothing and returns a transient
// <service>_rate_limited error whose RetryAfter is the wait. Error texts
// name the webhook by scheme and host only.
func (s *Sender) Send(ctx context.Context, m *notification.Message) error {
	if m == nil || m.Chat == nil {
		return delivery.Permanent(delivery.ClassInvalidMessage, errors.New("chat: the message has no chat object"))
	}
	c := m.Chat
	svc := services[c.Service]
	if svc == nil {
		return delivery.Permanent(delivery.ClassInvalidMessage, fmt.Errorf("chat %s: unknown service %q", m.ID, logSafe(string(c.Service))))
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return delivery.Permanent(svc.class("invalid_url"), fmt.Errorf("chat %s %s: the URL does not parse", svc.name, m.ID))
	}
	t := target{id: m.ID, svc: svc, u: secretParts(u), endpoint: endpoint(u)}
	switch {
	case u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return delivery.Permanent(svc.class("invalid_url"), t.errorf("the URL must be absolute and https"))
	case u.Scheme == "http" && !s.allowHTTP:
		return delivery.Permanent(svc.class("invalid_url"), t.errorf("%s", outbound.PlainHTTPRefused))
	case u.Scheme == "http" && svc.ownHost(u.Hostname()):
		// AllowHTTP is for receivers on this machine: the services' URLs
		// are their webhooks' credentials, never sent in clear text.
		return delivery.Permanent(svc.class("invalid_url"), t.errorf("a %s host takes https only: the URL is the webhook's credential", svc.name))
	}
	if !s.hostAllowed(svc, u.Hostname()) {
		return delivery.Permanent(svc.class("host_not_allowed"), t.errorf("%s is not a %s webhook host (%s); HERALD_CHAT_ALLOW_HOSTS adds others", u.Hostname(), svc.name, strings.Join(svc.hosts, ", ")))
	}
	t.key = svc.destination(u)
	t.legacy = svc == teams && teamsLegacy(u)
	body, err := svc.body(c)
	if err != nil {
		return delivery.Permanent(delivery.ClassInvalidMessage, t.errorf("cannot build the body: %v", err))
	}
	if svc == teams && len(body) > notification.MaxTeamsMessageBytes {
		return delivery.Permanent(delivery.ClassInvalidMessage, t.errorf("chat.card: the Teams request body is %d bytes; Teams takes at most %d", len(body), notification.MaxTeamsMessageBytes))
	}
	if ctx.Err() != nil {
		return t.deadline(ctx)
	}

	post := u
	if svc == discord {
		post, t.version = discordVersioned(u)
	}
	// Until the webhook has answered once in this process, one post at a
	// time: a burst to a webhook that is gone makes one request.
	answered, err := s.pace.firstAnswer(ctx, t.key, s.now())
	if err != nil {
		return t.deadline(ctx)
	}
	defer answered()
	// The pace is kept on the Sender's clock, but ctx's deadline is an
	// instant of the real clock, which only time.Until measures.
	left := func() time.Duration {
		if dl, ok := ctx.Deadline(); ok {
			return time.Until(dl)
		}
		return noDeadline
	}
	now := s.now()
	wait, taken, gone := s.pace.turn(ctx, svc, svc.rateOf(u), t.key, now, left())
	switch {
	case gone != nil:
		return t.gone(gone, now)
	case !taken:
		return &delivery.TransientError{Class: svc.class("rate_limited"), RetryAfter: wait,
			Err: t.errorf("the webhook's next turn under its rate limit is in %v, after this invocation ends; not sent, retried then", wait.Round(time.Millisecond))}
	case wait > 0:
		if err := s.sleep(ctx, wait); err != nil {
			return t.deadline(ctx)
		}
		// While this send waited, another post may have met a 429, an
		// empty Discord bucket or Discord's ban, or an answer that the
		// webhook is gone: the wait taken before them does not count.
		for {
			now := s.now()
			if gone := s.pace.goneNow(t.key, now); gone != nil {
				return t.gone(gone, now)
			}
			until := s.pace.heldUntil(svc, t.key, now)
			if until.IsZero() {
				break
			}
			held := until.Sub(now)
			if l := left(); l != noDeadline && held >= l {
				return &delivery.TransientError{Class: svc.class("rate_limited"), RetryAfter: held,
					Err: t.errorf("held for %v by an answer met while this send waited for its turn, after this invocation ends; not sent, retried then", held.Round(time.Millisecond))}
			}
			if err := s.sleep(ctx, held); err != nil {
				return t.deadline(ctx)
			}
		}
	}

	reqCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, post.String(), bytes.NewReader(body))
	if err != nil {
		return delivery.Permanent(svc.class("invalid_url"), t.errorf("cannot build a request for the URL"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.userAgent)
	// The send's span, when traced, for the receiver to join (W3C Trace
	// Context); nothing when not.
	tracecontext.InjectHeader(ctx, req.Header)
	resp, err := s.client.Do(req)
	if err != nil {
		var blocked *outbound.BlockedError
		if errors.As(err, &blocked) {
			return delivery.Permanent(svc.class("blocked_destination"), t.errorf("blocked destination: %v; %s", blocked, blocked.Advice()))
		}
		if ctx.Err() != nil {
			return t.deadline(ctx)
		}
		kind, what := outbound.TransportFailure(err)
		if kind == outbound.FailureTimeout {
			what = fmt.Sprintf("timed out (attempt timeout %v)", s.timeout)
		}
		return delivery.Transient(svc.class(string(kind)), t.errorf("%s: %s", what, outbound.Excerpt([]byte(outbound.Unwrap(err).Error()), u)))
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxReasonBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes-maxReasonBytes))
	resp.Body.Close()
	at := s.now()
	if svc == discord && resp.StatusCode != http.StatusTooManyRequests {
		if w := discordBucketWait(resp.Header); w > 0 {
			s.pace.hold(ctx, t.key, at, at.Add(w))
		}
	}
	err = s.classify(ctx, t, resp, answer, at)
	var p *delivery.PermanentError
	if errors.As(err, &p) && p.Gone {
		s.pace.markGone(t.key, at, p.Class)
	}
	return err
}

// discordBucketWait is how long a Discord webhook's bucket is empty for:
// X-RateLimit-Reset-After (seconds, fractional) when X-RateLimit-Remaining
// is 0, else 0. A longer wait than MaxRetryAfter, infinite included, is
// MaxRetryAfter.
func discordBucketWait(h http.Header) time.Duration {
	if h.Get("X-RateLimit-Remaining") != "0" {
		return 0
	}
	sec, err := strconv.ParseFloat(h.Get("X-RateLimit-Reset-After"), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange), !(sec > 0):
		return 0
	case sec >= MaxRetryAfter.Seconds(): // before the conversion, which overflows
		return MaxRetryAfter
	}
	return time.Duration(sec * float64(time.Second))
}

// classify turns a response into nil (delivered) or a classified error,
// and holds the webhook (a 429) or the whole service (Discord's ban) in the
// pacer.
func (s *Sender) classify(ctx context.Context, t target, resp *http.Response, answer []byte, now time.Time) error {
	svc := t.svc
	code := svc.answeredStatus(resp.StatusCode, answer)
	status := fmt.Sprintf("HTTP %d", code)
	if text := http.StatusText(code); text != "" {
		status += " " + text
	}
	if code != resp.StatusCode {
		status = fmt.Sprintf("HTTP %d reporting HTTP %d", resp.StatusCode, code)
	}
	withBody := func() error {
		if e := outbound.Excerpt(answer, t.u); e != "" {
			return t.errorf("%s; body: %s", status, e)
		}
		return t.errorf("%s", status)
	}
	if svc == teams && code == http.StatusOK && teamsErrorAnswer(t.legacy, answer) {
		// A legacy connector's 200 that is not its "1": Teams reports
		// an error it met in the text (a token service's exception, a
		// JSON error envelope) without a status herald can read.
		return delivery.Transient(teams.class("error_answer"), t.errorf("HTTP 200 with an error instead of the connector's \"1\": not delivered; body: %s", outbound.Excerpt(answer, t.u)))
	}
	if code >= 200 && code <= 299 {
		return nil
	}
	if code == http.StatusTooManyRequests {
		if svc == discord && discordBanned(resp.Header, answer) {
			pause, _ := outbound.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
			if pause <= 0 {
				pause = DiscordBanPause
			}
			s.pace.ban(ctx, svc, now, now.Add(pause))
			return &delivery.TransientError{Class: discord.class("banned"), RetryAfter: pause, Err: t.errorf(
				"%s without rate-limit headers: Discord's Cloudflare has banned this address; no Discord webhook is posted to from this process for %v; body: %s",
				status, pause, outbound.Excerpt(answer, t.u))}
		}
		var wait time.Duration
		if svc == discord {
			wait = discordRetryAfter(resp.Header, answer, t.version)
			if discordGlobal(resp.Header, answer) {
				// The global limit counts every request from this
				// address: every Discord webhook waits.
				s.pace.holdService(svc, now.Add(wait))
			}
		} else {
			wait, _ = outbound.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
		}
		s.pace.hold(ctx, t.key, now, now.Add(wait))
		return &delivery.TransientError{Class: svc.class("rate_limited"), RetryAfter: wait, Err: withBody()}
	}
	if token, permanent := svc.reason(code, answer); token != "" {
		if code != resp.StatusCode && svc.gone[token] {
			// A Teams 200 whose text names a status that would say the
			// webhook is gone (404, 410, 401): Teams' connectors answer
			// 200 for what they deem retryable, so that callers do not
			// disable the webhook (MicrosoftDocs/msteams-docs issue
			// 9698, where random 401s came as such 200s). Retried.
			return delivery.Transient(teams.class("error_answer"), withBody())
		}
		if permanent {
			return &delivery.PermanentError{Class: svc.class(token), Err: withBody(), Gone: svc.gone[token]}
		}
		return delivery.Transient(svc.class(token), withBody())
	}
	switch {
	case code >= 300 && code <= 399:
		return delivery.Transient(svc.class("redirect"), t.errorf("%s: redirects are not followed; update the webhook URL", status))
	case code == http.StatusRequestTimeout:
		return delivery.Transient(svc.class("http_408"), withBody())
	case code >= 400 && code <= 499:
		// The services answer 4xx for a webhook, channel or body that a
		// retry cannot fix; the ones they name have classes of their own.
		return delivery.Permanent(svc.class("http_4xx"), withBody())
	case code >= 500 && code <= 599:
		wait, _ := outbound.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
		return &delivery.TransientError{Class: svc.class("http_5xx"), RetryAfter: wait, Err: withBody()}
	}
	return delivery.Transient(svc.class("http_other"), withBody())
}

// DiscordBanPause is how long herald posts to no Discord webhook after
// Discord's Cloudflare banned its address, when the ban's answer carries no
// Retry-After: one hour. Discord documents the ban ("temporary Cloudflare
// ban" after 10,000 invalid requests in 10 minutes, Rate Limits guide) but
// not its length; its answer is static, served by Cloudflare without
// rate-limit headers (discord-api-docs issue 5810), and those who met it
// report an hour (discord-api-docs issue 5385: "a retry after of 1 hour").
// Every request made during the ban is one more invalid request.
const DiscordBanPause = time.Hour

// discordBanned reports whether a Discord 429 is Cloudflare's ban rather
// than a rate limit: it carries no X-RateLimit-* header and no
// retry_after, and its body is {"code": 0, "message": "You are being
// blocked…"} or an HTML page (Cloudflare's "error code: 1015").
func discordBanned(h http.Header, body []byte) bool {
	for name := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Ratelimit-") {
			return false
		}
	}
	var e struct {
		RetryAfter *float64 `json:"retry_after"`
	}
	return json.Unmarshal(body, &e) != nil || e.RetryAfter == nil
}

// discordGlobal reports whether a Discord 429 is its global rate limit,
// which counts every request of the caller (a webhook's caller is its
// address) rather than one webhook's: X-RateLimit-Global: true,
// X-RateLimit-Scope: global, or "global": true in the body (Rate Limits
// guide, "Exceeding A Rate Limit").
func discordGlobal(h http.Header, body []byte) bool {
	if strings.EqualFold(h.Get("X-RateLimit-Global"), "true") || strings.EqualFold(h.Get("X-RateLimit-Scope"), "global") {
		return true
	}
	var e struct {
		Global bool `json:"global"`
	}
	return json.Unmarshal(body, &e) == nil && e.Global
}

// discordRetryAfter is the wait a Discord 429 asks for, in the unit of
// the API version the request ran on: milliseconds up to version 7 (the
// default version, 6, included), seconds from version 8 on (Discord's
// change log, "API and Gateway V8"). It is the body's retry_after, the
// exact wait (fractional seconds from version 8), else the Retry-After
// header (whole, rounded up); and at least the bucket's
// X-RateLimit-Reset-After (seconds in every version) when the bucket is
// empty. A longer wait than MaxRetryAfter, infinite included, is
// MaxRetryAfter; a value that says nothing (negative, NaN, not a number)
// is 0.
func discordRetryAfter(h http.Header, body []byte, version int) time.Duration {
	unit := time.Second
	if version > 0 && version < 8 {
		unit = time.Millisecond
	}
	var e struct {
		RetryAfter json.Number `json:"retry_after"`
	}
	_ = json.Unmarshal(body, &e)
	wait := discordBucketWait(h)
	for _, v := range []string{e.RetryAfter.String(), strings.TrimSpace(h.Get("Retry-After"))} {
		n, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange), !(n > 0):
			continue
		case n*unit.Seconds() >= MaxRetryAfter.Seconds(): // before the conversion, which overflows
			return MaxRetryAfter
		}
		return min(max(wait, time.Duration(math.Ceil(n*float64(unit)))), MaxRetryAfter)
	}
	return wait
}

// hostAllowed reports whether host may receive svc's webhooks: one of the
// service's hosts or of Config.AllowHosts, compared in lower case without
// a trailing dot.
func (s *Sender) hostAllowed(svc *service, host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return svc.ownHost(host) || slices.ContainsFunc(s.allowHosts, func(h string) bool { return hostMatches(h, host) })
}

// ownHost reports whether host is one of svc's own hosts, compared in lower
// case without a trailing dot.
func (svc *service) ownHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return slices.ContainsFunc(svc.hosts, func(h string) bool { return hostMatches(h, host) })
}

// hostMatches reports whether host is pattern, or under it when pattern
// starts with ".".
func hostMatches(pattern, host string) bool {
	if strings.HasPrefix(pattern, ".") {
		return strings.HasSuffix(host, pattern) && len(host) > len(pattern)
	}
	return host == pattern
}

// target is one attempt's notification id, service and endpoint: the only
// parts of the request error texts name.
type target struct {
	id       string
	svc      *service
	u        *url.URL
	key      string // Destination's key: the pacer's and the store's
	endpoint string
	version  int  // Discord: the API version posted to (discordVersioned)
	legacy   bool // Teams: a legacy connector (Office 365 connector) URL
}

func (t target) errorf(format string, args ...any) error {
	return fmt.Errorf("chat %s %s to %s: %s", t.svc.name, t.id, t.endpoint, fmt.Sprintf(format, args...))
}

// gone is the error of a send not made because the webhook answered g
// (another send's answer) within GoneFor: retried once GoneFor has passed,
// when the deliver function's health store says whether the webhook is
// still disabled, so that a webhook enabled meanwhile loses nothing.
func (t target) gone(g *goneAnswer, now time.Time) error {
	return &delivery.TransientError{Class: g.class, RetryAfter: g.until.Sub(now), Err: t.errorf(
		"not sent: the webhook answered %s at %s, which says it is gone; retried in %v, when %s is disabled (dead-lettered) or enabled again (sent)",
		g.class, g.at.UTC().Format(time.RFC3339), g.until.Sub(now).Round(time.Second), t.key)}
}

func (t target) deadline(ctx context.Context) error {
	return delivery.Transient(delivery.ClassDeadline, t.errorf("invocation deadline: %v", context.Cause(ctx)))
}

// endpoint is scheme://host[:port] of u: never its userinfo, path or query.
func endpoint(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// publicParts are the parts of the services' webhook URLs that every
// webhook shares: path segments and query parameters that are no secret.
var publicParts = map[string]bool{
	"services": true, "api": true, "webhooks": true, "workflows": true, "triggers": true, "manual": true,
	"paths": true, "invoke": true, "webhookb2": true, "IncomingWebhook": true, "powerautomate": true,
	"automations": true, "direct": true, "api-version": true, "sp": true, "sv": true,
}

// secretParts returns u without its public parts: what error texts are
// scrubbed of (the team, channel and token of a Slack path, a Discord
// webhook's id and token, a Teams workflow's id and signature), so that a
// service's reason ("no_service") is not scrubbed with them.
func secretParts(u *url.URL) *url.URL {
	s := *u
	var segs []string
	for _, seg := range strings.Split(u.Path, "/") {
		if seg != "" && !publicParts[seg] {
			segs = append(segs, seg)
		}
	}
	s.Path, s.RawPath = "/"+strings.Join(segs, "/"), ""
	q := u.Query()
	for k := range q {
		if publicParts[k] {
			q.Del(k)
		}
	}
	s.RawQuery = q.Encode()
	return &s
}

// logSafe returns s quoted for an error text, cut to 64 bytes.
func logSafe(s string) string { return delivery.Truncate(s, 64) }
