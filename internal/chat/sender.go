package chat

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// MaxRetryAfter is the longest delay a 429 can ask for: 12 hours, the SQS
// limit on a visibility timeout (webhook.MaxRetryAfter).
const MaxRetryAfter = webhook.MaxRetryAfter

// Config configures a [Sender].
type Config struct {
	// Timeout bounds one attempt, as webhook.Config.Timeout does. Defaults
	// to webhook.DefaultTimeout (15 s).
	Timeout time.Duration
	// TLSClientConfig, when set, replaces the system roots (tests and the
	// demo trust their local receivers with it).
	TLSClientConfig *tls.Config
	// AllowCIDRs are networks a chat webhook may reach although the
	// destination check blocks them (webhook.Config.AllowCIDRs; the same
	// HERALD_WEBHOOK_ALLOW_CIDRS). Defaults to none.
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
	// UserAgent is the User-Agent request header. Defaults to "herald/1".
	UserAgent string
	// Now is the clock of the rate limits. Defaults to time.Now. A
	// context's deadline is real time whatever Now reads: a turn is sent
	// only when its wait ends before time.Until the deadline.
	Now func() time.Time
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
		cfg.Timeout = webhook.DefaultTimeout
	}
	if cfg.Timeout < webhook.MinTimeout || cfg.Timeout > webhook.MaxTimeout {
		return nil, fmt.Errorf("chat timeout: %v, want %v–%v", cfg.Timeout, webhook.MinTimeout, webhook.MaxTimeout)
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = webhook.DefaultUserAgent
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
		client: webhook.NewClient(webhook.ClientConfig{
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
		pace:       newPacer(),
	}, nil
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
	t := target{id: m.ID, svc: svc, u: secretParts(u), raw: c.URL, endpoint: endpoint(u)}
	switch {
	case u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return delivery.Permanent(svc.class("invalid_url"), t.errorf("the URL must be absolute and https"))
	case u.Scheme == "http" && !s.allowHTTP:
		return delivery.Permanent(svc.class("invalid_url"), t.errorf("%s", webhook.PlainHTTPRefused))
	case u.Scheme == "http" && svc.ownHost(u.Hostname()):
		// AllowHTTP is for receivers on this machine: the services' URLs
		// are their webhooks' credentials, never sent in clear text.
		return delivery.Permanent(svc.class("invalid_url"), t.errorf("a %s host takes https only: the URL is the webhook's credential", svc.name))
	}
	if !s.hostAllowed(svc, u.Hostname()) {
		return delivery.Permanent(svc.class("host_not_allowed"), t.errorf("%s is not a %s webhook host (%s); HERALD_CHAT_ALLOW_HOSTS adds others", u.Hostname(), svc.name, strings.Join(svc.hosts, ", ")))
	}
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

	turn := s.pace.reserve(svc, c.URL, s.now())
	if turn.wait > 0 {
		// The pace is kept on the Sender's clock, but ctx's deadline is an
		// instant of the real clock, which only time.Until measures.
		if dl, ok := ctx.Deadline(); ok && turn.wait >= time.Until(dl) {
			turn.cancel()
			return &delivery.TransientError{Class: svc.class("rate_limited"), RetryAfter: turn.wait,
				Err: t.errorf("the webhook's next turn under its rate limit is in %v, after this invocation ends; not sent, retried then", turn.wait.Round(time.Millisecond))}
		}
		if err := s.sleep(ctx, turn.wait); err != nil {
			turn.cancel()
			return t.deadline(ctx)
		}
	}

	reqCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return delivery.Permanent(svc.class("invalid_url"), t.errorf("cannot build a request for the URL"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.userAgent)
	resp, err := s.client.Do(req)
	if err != nil {
		var blocked *webhook.BlockedError
		if errors.As(err, &blocked) {
			return delivery.Permanent(svc.class("blocked_destination"), t.errorf("blocked destination: %v; %s", blocked, blocked.Advice()))
		}
		if ctx.Err() != nil {
			return t.deadline(ctx)
		}
		kind, what := webhook.TransportFailure(err)
		if kind == "timeout" {
			what = fmt.Sprintf("timed out (attempt timeout %v)", s.timeout)
		}
		return delivery.Transient(svc.class(kind), t.errorf("%s: %s", what, webhook.Excerpt([]byte(innermost(err).Error()), u)))
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxReasonBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes-maxReasonBytes))
	resp.Body.Close()
	at := s.now()
	if svc == discord {
		s.pace.block(svc, c.URL, at, discordBucketWait(resp.Header))
	}
	return s.classify(t, resp, answer, at)
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

// classify turns a response into nil (delivered) or a classified error.
func (s *Sender) classify(t target, resp *http.Response, answer []byte, now time.Time) error {
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
		if e := webhook.Excerpt(answer, t.u); e != "" {
			return t.errorf("%s; body: %s", status, e)
		}
		return t.errorf("%s", status)
	}
	if code >= 200 && code <= 299 {
		return nil
	}
	if code == http.StatusTooManyRequests {
		wait, _ := webhook.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
		if svc.retryAfter != nil {
			wait = max(wait, svc.retryAfter(answer))
		}
		s.pace.block(svc, t.raw, now, wait)
		return &delivery.TransientError{Class: svc.class("rate_limited"), RetryAfter: wait, Err: withBody()}
	}
	if token, permanent := svc.reason(code, answer); token != "" {
		if permanent {
			return delivery.Permanent(svc.class(token), withBody())
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
		wait, _ := webhook.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
		return &delivery.TransientError{Class: svc.class("http_5xx"), RetryAfter: wait, Err: withBody()}
	}
	return delivery.Transient(svc.class("http_other"), withBody())
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
	raw      string // the URL as given: the webhook's key in the pacer
	endpoint string
}

func (t target) errorf(format string, args ...any) error {
	return fmt.Errorf("chat %s %s to %s: %s", t.svc.name, t.id, t.endpoint, fmt.Sprintf(format, args...))
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

// innermost returns err without the *url.Error net/http wraps around it
// (its text holds the whole URL).
func innermost(err error) error {
	for {
		var ue *url.Error
		if !errors.As(err, &ue) || ue.Err == nil {
			return err
		}
		err = ue.Err
	}
}

// logSafe returns s quoted for an error text, cut to 64 bytes.
func logSafe(s string) string { return delivery.Truncate(s, 64) }
