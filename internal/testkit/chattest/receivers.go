// Package chattest runs local HTTPS receivers that speak the wire formats
// of Slack incoming webhooks, Discord Execute Webhook and Microsoft Teams
// Workflows and legacy incoming webhooks, for tests of herald's chat
// channel: each checks the body as its service does and refuses one of the
// wrong shape as the service would, answers the service's success status,
// its errors for a webhook that is removed or whose token is wrong, and
// enforces its per-webhook rate limit on an injectable clock.
//
// The answers follow each service's documentation: Slack "Handling errors"
// of the incoming webhooks guide (status and a plain-text token); Discord's
// JSON errors {"message","code"} and rate-limit headers and 429 body
// {"message","retry_after","global"}; Teams Workflows' 202 Accepted and
// Logic Apps JSON errors {"error":{"code","message"}}, legacy webhooks' 200
// "1".
package chattest

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Received is one accepted post.
type Received struct {
	// Hook is the webhook's name in the receiver (Slack: its token; Discord:
	// its id; Teams: its workflow id).
	Hook string
	// Body is the request body as sent.
	Body []byte
	// At is the receiver's clock when it accepted the post.
	At time.Time
	// Header is the request's headers.
	Header http.Header
	// Path is the request's path (Discord: with the API version it ran on).
	Path string
	// Query is the request's raw query.
	Query string
}

// Receiver is one service's local receiver.
type Receiver struct {
	srv *httptest.Server
	// Now is the clock of its rate limits. Defaults to time.Now. Set it
	// before the first request.
	Now func() time.Time

	mu       sync.Mutex
	received []Received
	refused  []int // statuses of refused posts, in order
	answers  map[string]answer
	buckets  map[string]*bucket
	every    time.Duration
	burst    int
}

// answer is a canned answer for one webhook.
type answer struct {
	status int
	header http.Header
	body   string
}

// bucket is one webhook's rate: burst posts at once, then one per every.
type bucket struct {
	tokens float64
	at     time.Time
}

func newReceiver(every time.Duration, burst int, handle func(r *Receiver, w http.ResponseWriter, req *http.Request, body []byte)) *Receiver {
	r := &Receiver{Now: time.Now, answers: map[string]answer{}, buckets: map[string]*bucket{}, every: every, burst: burst}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		handle(r, w, req, body)
	}))
	r.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut by a test's end
	r.srv.StartTLS()
	return r
}

// URL is the receiver's base URL, https://127.0.0.1:port.
func (r *Receiver) URL() string { return r.srv.URL }

// TLSConfig trusts the receiver's certificate.
func (r *Receiver) TLSConfig() *tls.Config {
	return r.srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
}

// TLSClient is an HTTP client that trusts the receiver (and every httptest
// server: they share one certificate).
func (r *Receiver) TLSClient() *http.Client { return r.srv.Client() }

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// Received returns the accepted posts, in order.
func (r *Receiver) Received() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.received...)
}

// Refused returns the statuses of the posts it refused, in order.
func (r *Receiver) Refused() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.refused...)
}

// Answer makes the webhook hook answer status with body and the headers
// given as name, value pairs, instead of its normal answer.
func (r *Receiver) Answer(hook string, status int, body string, header ...string) {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	r.mu.Lock()
	r.answers[hook] = answer{status: status, header: h, body: body}
	r.mu.Unlock()
}

// Unanswer makes the webhook hook answer normally again after Answer.
func (r *Receiver) Unanswer(hook string) {
	r.mu.Lock()
	delete(r.answers, hook)
	r.mu.Unlock()
}

// canned writes hook's canned answer, if it has one.
func (r *Receiver) canned(w http.ResponseWriter, hook string) bool {
	r.mu.Lock()
	a, ok := r.answers[hook]
	r.mu.Unlock()
	if !ok {
		return false
	}
	for k, v := range a.header {
		w.Header()[k] = v
	}
	r.refuse(w, a.status, a.body)
	return true
}

// take takes a token of hook's bucket at the receiver's clock; when none is
// left it returns the wait until the next one.
func (r *Receiver) take(hook string) (remaining int, wait time.Duration) {
	now := r.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buckets[hook]
	if b == nil {
		b = &bucket{tokens: float64(r.burst), at: now}
		r.buckets[hook] = b
	}
	if now.After(b.at) {
		b.tokens = math.Min(float64(r.burst), b.tokens+float64(now.Sub(b.at))/float64(r.every))
		b.at = now
	}
	if b.tokens < 1-1e-9 {
		return 0, time.Duration((1 - b.tokens) * float64(r.every))
	}
	b.tokens--
	return int(b.tokens + 1e-9), 0
}

func (r *Receiver) accept(hook string, req *http.Request, body []byte) {
	r.mu.Lock()
	r.received = append(r.received, Received{Hook: hook, Body: body, At: r.Now(), Header: req.Header.Clone(), Path: req.URL.Path, Query: req.URL.RawQuery})
	r.mu.Unlock()
}

func (r *Receiver) refuse(w http.ResponseWriter, status int, body string) {
	r.mu.Lock()
	r.refused = append(r.refused, status)
	r.mu.Unlock()
	if strings.HasPrefix(body, "{") {
		w.Header().Set("Content-Type", "application/json")
	} else if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/html")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// jsonObject decodes a request body that must be a JSON object.
func jsonObject(req *http.Request, body []byte) (map[string]json.RawMessage, bool) {
	if ct := req.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// Slack is a Slack incoming webhooks receiver: POST
// /services/T…/B…/TOKEN with {"text"} and/or {"blocks"}; 200 "ok".
// Tokens of Slack.Remove answer 404 no_service; a body of the wrong shape
// 400 invalid_payload, no_text or invalid_blocks. The channel, username and
// icon overrides of legacy webhooks are accepted and ignored, as Slack
// ignores them for an app's incoming webhook ("Sending messages using
// incoming webhooks"). Rate: one post per second
// per webhook, with a burst of two (Slack allows "short bursts", and a post
// paced a second after another may arrive a little sooner than a second
// after it); beyond it 429 with Retry-After.
type Slack struct {
	*Receiver
}

// NewSlack starts a Slack receiver.
func NewSlack() *Slack {
	return &Slack{newReceiver(time.Second, 2, func(r *Receiver, w http.ResponseWriter, req *http.Request, body []byte) {
		parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")
		if req.Method != http.MethodPost || len(parts) != 4 || parts[0] != "services" {
			r.refuse(w, http.StatusNotFound, "no_service")
			return
		}
		hook := parts[3]
		if r.canned(w, hook) {
			return
		}
		m, ok := jsonObject(req, body)
		if !ok {
			r.refuse(w, http.StatusBadRequest, "invalid_payload")
			return
		}
		for k := range m {
			switch k {
			case "text", "blocks", "attachments", "thread_ts", "mrkdwn", "unfurl_links", "unfurl_media",
				"channel", "username", "icon_emoji", "icon_url": // overrides Slack ignores for an app's webhook
			default:
				r.refuse(w, http.StatusBadRequest, "invalid_payload")
				return
			}
		}
		var text string
		if raw, ok := m["text"]; ok && json.Unmarshal(raw, &text) != nil {
			r.refuse(w, http.StatusBadRequest, "invalid_payload")
			return
		}
		var blocks []map[string]json.RawMessage
		if raw, ok := m["blocks"]; ok {
			if json.Unmarshal(raw, &blocks) != nil || len(blocks) == 0 || len(blocks) > 50 {
				r.refuse(w, http.StatusBadRequest, "invalid_blocks")
				return
			}
			for _, b := range blocks {
				var typ string
				if json.Unmarshal(b["type"], &typ) != nil || typ == "" {
					r.refuse(w, http.StatusBadRequest, "invalid_blocks")
					return
				}
			}
		}
		if text == "" && len(blocks) == 0 {
			r.refuse(w, http.StatusBadRequest, "no_text")
			return
		}
		if _, wait := r.take(hook); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			r.refuse(w, http.StatusTooManyRequests, "rate_limited")
			return
		}
		r.accept(hook, req, body)
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "ok")
	})}
}

// Remove makes the webhook with token answer as a removed one: 404
// no_service.
func (s *Slack) Remove(token string) { s.Answer(token, http.StatusNotFound, "no_service") }

// Discord is a Discord Execute Webhook receiver: POST
// /api[/vN]/webhooks/ID/TOKEN with {"content"} and/or {"embeds"}; 204, or
// 200 with the message for ?wait=true. A path without a version runs on
// Discord's default version, 6; versions 3 to 5 are discontinued (400),
// others unknown (404). Only the webhooks of Discord.Create exist: another
// id answers 404 Unknown Webhook (10015), a wrong token 401 Invalid Webhook
// Token (50027). Rate: 5 posts per 2 seconds per webhook, announced in
// X-RateLimit-* headers (X-RateLimit-Reset-After in seconds, fractional);
// beyond it 429 with {"retry_after"} and Retry-After in the version's
// unit: milliseconds (whole) up to version 7, seconds from version 8 on
// (fractional in retry_after, rounded up in Retry-After), as Discord's
// change log of API v8 says. A path ending /github is the GitHub-compatible
// endpoint: a body that is no GitHub event is answered 204 and posts
// nothing; one ending /slack the Slack-compatible endpoint, which reads
// Slack's text or attachments and answers 200 "ok". While Discord.Ban holds, every request gets
// Cloudflare's ban: 429 without rate-limit headers.
type Discord struct {
	*Receiver
	hooks     map[string]string // id → token
	banned    string            // the ban's body while banned, else ""
	banHeader http.Header
}

// DiscordDefaultVersion is the API version of a path without one.
const DiscordDefaultVersion = 6

// DiscordBanJSON and DiscordBanHTML are the bodies of Cloudflare's ban of
// an address, as Discord's API answers it (discord-api-docs issue 5810)
// and as Cloudflare's own page (error 1015) says it.
const (
	DiscordBanJSON = `{"code": 0, "message": "You are being blocked from accessing our API temporarily due to exceeding our rate limits frequently. Please read our docs at https://discord.com/developers/docs/topics/rate-limits to prevent this moving forward."}`
	DiscordBanHTML = `<!DOCTYPE html><html><head><title>Access denied | discord.com used Cloudflare to restrict access</title></head><body><h1>Error 1015</h1><p>You are being rate limited</p></body></html>`
)

// NewDiscord starts a Discord receiver.
func NewDiscord() *Discord {
	d := &Discord{hooks: map[string]string{}}
	d.Receiver = newReceiver(400*time.Millisecond, 5, func(r *Receiver, w http.ResponseWriter, req *http.Request, body []byte) {
		discordError := func(status, code int, msg string) {
			r.refuse(w, status, fmt.Sprintf(`{"message": %q, "code": %d}`, msg, code))
		}
		r.mu.Lock()
		ban, banHeader := d.banned, d.banHeader
		r.mu.Unlock()
		if ban != "" {
			for k, v := range banHeader {
				w.Header()[k] = v
			}
			if !strings.HasPrefix(ban, "{") {
				w.Header().Set("Content-Type", "text/html")
			}
			r.refuse(w, http.StatusTooManyRequests, ban)
			return
		}
		parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")
		compatible := "" // "slack" or "github": Discord's compatible endpoints
		if n := len(parts); n > 4 && (parts[n-1] == "slack" || parts[n-1] == "github") {
			compatible, parts = parts[n-1], parts[:n-1]
		}
		version := DiscordDefaultVersion
		if len(parts) == 5 && parts[0] == "api" && strings.HasPrefix(parts[1], "v") {
			v, err := strconv.Atoi(parts[1][1:])
			if err != nil {
				r.refuse(w, http.StatusNotFound, `{"message": "404: Not Found", "code": 0}`)
				return
			}
			switch {
			case v >= 3 && v <= 5:
				r.refuse(w, http.StatusBadRequest, `{"message": "This API version has been discontinued.", "code": 0}`)
				return
			case v < 6 || v > 10:
				r.refuse(w, http.StatusNotFound, `{"message": "404: Not Found", "code": 0}`)
				return
			}
			version = v
			parts = append(parts[:1], parts[2:]...)
		}
		if req.Method != http.MethodPost || len(parts) != 4 || parts[0] != "api" || parts[1] != "webhooks" {
			r.refuse(w, http.StatusNotFound, `{"message": "404: Not Found", "code": 0}`)
			return
		}
		id, token := parts[2], parts[3]
		r.mu.Lock()
		want, ok := d.hooks[id]
		r.mu.Unlock()
		switch {
		case !ok:
			discordError(http.StatusNotFound, 10015, "Unknown Webhook")
			return
		case token != want:
			discordError(http.StatusUnauthorized, 50027, "Invalid Webhook Token")
			return
		}
		if r.canned(w, id) {
			return
		}
		remaining, wait := r.take(id)
		w.Header().Set("X-RateLimit-Limit", "5")
		w.Header().Set("X-RateLimit-Bucket", "b-"+id)
		if wait > 0 {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset-After", strconv.FormatFloat(wait.Seconds(), 'f', 3, 64))
			if version < 8 {
				ms := int(math.Ceil(float64(wait) / float64(time.Millisecond)))
				w.Header().Set("Retry-After", strconv.Itoa(ms))
				r.refuse(w, http.StatusTooManyRequests, fmt.Sprintf(`{"global": false, "message": "You are being rate limited.", "retry_after": %d}`, ms))
				return
			}
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			r.refuse(w, http.StatusTooManyRequests, fmt.Sprintf(`{"message": "You are being rate limited.", "retry_after": %.3f, "global": false}`, wait.Seconds()))
			return
		}
		w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
		w.Header().Set("X-RateLimit-Reset-After", strconv.FormatFloat(float64(d.every*time.Duration(5-remaining))/float64(time.Second), 'f', 3, 64))
		m, ok := jsonObject(req, body)
		if !ok {
			discordError(http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
			return
		}
		switch compatible {
		case "github":
			// A body that is no GitHub event Discord supports is
			// answered 204 and posts nothing (discord-api-docs issues
			// 6957 and 7385).
			w.WriteHeader(http.StatusNoContent)
			return
		case "slack":
			// Slack's body: text or attachments; "content" is not read.
			_, text := m["text"]
			_, attachments := m["attachments"]
			if !text && !attachments {
				discordError(http.StatusBadRequest, 50006, "Cannot send an empty message")
				return
			}
			r.accept(id, req, body)
			_, _ = io.WriteString(w, "ok")
			return
		}
		var content string
		if raw, ok := m["content"]; ok && json.Unmarshal(raw, &content) != nil {
			discordError(http.StatusBadRequest, 50035, "Invalid Form Body")
			return
		}
		var embeds []map[string]json.RawMessage
		if raw, ok := m["embeds"]; ok && (json.Unmarshal(raw, &embeds) != nil || len(embeds) > 10) {
			discordError(http.StatusBadRequest, 50035, "Invalid Form Body")
			return
		}
		if utf8.RuneCountInString(content) > 2000 {
			discordError(http.StatusBadRequest, 50035, "Invalid Form Body")
			return
		}
		if content == "" && len(embeds) == 0 {
			discordError(http.StatusBadRequest, 50006, "Cannot send an empty message")
			return
		}
		r.accept(id, req, body)
		if req.URL.Query().Get("wait") == "true" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"id": "1", "type": 0, "channel_id": "2", "webhook_id": %q}`, id)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return d
}

// Ban makes every request answer Cloudflare's ban with body (DiscordBanJSON
// or DiscordBanHTML) and the headers given as name, value pairs, until
// Unban.
func (d *Discord) Ban(body string, header ...string) {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	d.mu.Lock()
	d.banned, d.banHeader = body, h
	d.mu.Unlock()
}

// Unban lifts Ban.
func (d *Discord) Unban() { d.Ban("") }

// Create makes a webhook and returns its URL path /api/webhooks/ID/TOKEN.
func (d *Discord) Create(id, token string) string {
	d.mu.Lock()
	d.hooks[id] = token
	d.mu.Unlock()
	return "/api/webhooks/" + id + "/" + token
}

// Delete removes a webhook: it answers 404 Unknown Webhook from now on.
func (d *Discord) Delete(id string) {
	d.mu.Lock()
	delete(d.hooks, id)
	d.mu.Unlock()
}

// Teams is a Microsoft Teams receiver. Workflows webhooks: POST
// /workflows/ID/triggers/manual/paths/invoke?…&sig=SIG with a message
// activity whose attachments are Adaptive Cards; 202 Accepted. Only the
// workflows of Teams.Create exist (another answers 404 WorkflowNotFound, a
// wrong sig 401 DirectApiInvalidAuthorizationSignature). Legacy incoming
// webhooks: POST /webhookb2/… (or the older /webhook/…) with such a message or a MessageCard (which
// needs a summary or text); 200 "1". A body over 28 KB answers 413, one
// of the wrong shape 400. Rate, in sliding spans per webhook: a workflow
// takes at most 4 posts in any second, beyond which it answers 429
// WorkflowRequestsThrottled with Retry-After; a legacy webhook at most the
// rows of TeamsLegacyLimits, beyond which it answers 200 with the text of
// Teams' 429 (TeamsLegacyThrottled), as "Rate limiting for connectors"
// says connectors do.
type Teams struct {
	*Receiver
	flows map[string]string      // workflow id → sig
	posts map[string][]time.Time // each webhook's accepted posts, a day's
}

// Limit is a rate limit over a sliding span: at most Max requests in any
// Span.
type Limit struct {
	Span time.Duration
	Max  int
}

// TeamsLegacyLimits are a legacy connector's limits, "Rate limiting for
// connectors" (Microsoft Teams platform docs, "Transactions per second
// thresholds"); TeamsWorkflowsLimits a workflow's, Teams' "more than four
// requests in a second".
var (
	TeamsLegacyLimits = []Limit{
		{time.Second, 4}, {30 * time.Second, 60}, {time.Hour, 100}, {2 * time.Hour, 150}, {24 * time.Hour, 1800},
	}
	TeamsWorkflowsLimits = []Limit{{time.Second, 4}}
)

// TeamsLegacyThrottled is a legacy connector's 200 answer to a throttled
// post.
const TeamsLegacyThrottled = "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 429 with ContextId tcid=0,server=msgapi-production-weu-azsc2-4-170,cv=Y2FmZS4w.0.."

// takeWithin records a post to hook at the receiver's clock unless one of
// limits is full; then it returns the wait until it is not.
func (tm *Teams) takeWithin(hook string, limits []Limit) time.Duration {
	now := tm.Now()
	tm.mu.Lock()
	defer tm.mu.Unlock()
	var kept []time.Time
	for _, at := range tm.posts[hook] {
		if now.Sub(at) < 24*time.Hour {
			kept = append(kept, at)
		}
	}
	var wait time.Duration
	for _, l := range limits {
		var in []time.Time // the posts in (now-Span, now]
		for _, at := range kept {
			if now.Sub(at) < l.Span {
				in = append(in, at)
			}
		}
		if len(in) >= l.Max {
			wait = max(wait, in[len(in)-l.Max].Add(l.Span).Sub(now))
		}
	}
	if wait == 0 {
		kept = append(kept, now)
	}
	tm.posts[hook] = kept
	return wait
}

// NewTeams starts a Teams receiver.
func NewTeams() *Teams {
	tm := &Teams{flows: map[string]string{}, posts: map[string][]time.Time{}}
	tm.Receiver = newReceiver(250*time.Millisecond, 4, func(r *Receiver, w http.ResponseWriter, req *http.Request, body []byte) {
		logicError := func(status int, code, msg string) {
			r.refuse(w, status, fmt.Sprintf(`{"error": {"code": %q, "message": %q}}`, code, msg))
		}
		parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/"), "/")
		legacy := len(parts) > 1 && (parts[0] == "webhookb2" || parts[0] == "webhook")
		hook := strings.Join(parts, "/")
		if !legacy {
			if req.Method != http.MethodPost || len(parts) != 6 || parts[0] != "workflows" || strings.Join(parts[2:], "/") != "triggers/manual/paths/invoke" {
				logicError(http.StatusNotFound, "WorkflowNotFound", "The workflow was not found.")
				return
			}
			hook = parts[1]
			r.mu.Lock()
			sig, ok := tm.flows[hook]
			r.mu.Unlock()
			switch {
			case !ok:
				logicError(http.StatusNotFound, "WorkflowNotFound", "The workflow was not found.")
				return
			case req.URL.Query().Get("sig") != sig:
				logicError(http.StatusUnauthorized, "DirectApiInvalidAuthorizationSignature", "The provided authorization signature is not valid.")
				return
			}
		}
		if r.canned(w, hook) {
			return
		}
		if len(body) > 28<<10 {
			logicError(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "The request content is too large.")
			return
		}
		m, ok := jsonObject(req, body)
		if legacy && ok && messageCard(m) {
			if !cardText(m) {
				r.refuse(w, http.StatusBadRequest, "Summary or Text is required.")
				return
			}
		} else if !ok || !teamsMessage(m) {
			if legacy {
				r.refuse(w, http.StatusBadRequest, "Bad payload received by generic incoming webhook.")
				return
			}
			logicError(http.StatusBadRequest, "InvalidRequestContent", "The message is not a message activity with Adaptive Card attachments.")
			return
		}
		if legacy {
			if wait := tm.takeWithin(hook, TeamsLegacyLimits); wait > 0 {
				w.Header().Set("Content-Type", "text/plain")
				r.refuse(w, http.StatusOK, TeamsLegacyThrottled)
				return
			}
		} else if wait := tm.takeWithin(hook, TeamsWorkflowsLimits); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			logicError(http.StatusTooManyRequests, "WorkflowRequestsThrottled", "Rate limit is exceeded.")
			return
		}
		r.accept(hook, req, body)
		if legacy {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "1")
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	return tm
}

// Create makes a workflow webhook and returns its URL path and query.
func (tm *Teams) Create(id, sig string) string {
	tm.mu.Lock()
	tm.flows[id] = sig
	tm.mu.Unlock()
	return "/workflows/" + id + "/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=" + sig
}

// Disable makes a workflow answer as a deleted one: 404 WorkflowNotFound.
func (tm *Teams) Disable(id string) {
	tm.mu.Lock()
	delete(tm.flows, id)
	tm.mu.Unlock()
}

// teamsMessage reports whether m is a message activity whose attachments
// are all Adaptive Cards.
func teamsMessage(m map[string]json.RawMessage) bool {
	var typ string
	var atts []struct {
		ContentType string                     `json:"contentType"`
		Content     map[string]json.RawMessage `json:"content"`
	}
	if json.Unmarshal(m["type"], &typ) != nil || typ != "message" || json.Unmarshal(m["attachments"], &atts) != nil || len(atts) == 0 {
		return false
	}
	for _, a := range atts {
		var ctype string
		if a.ContentType != "application/vnd.microsoft.card.adaptive" || a.Content == nil || json.Unmarshal(a.Content["type"], &ctype) != nil || ctype != "AdaptiveCard" {
			return false
		}
	}
	return true
}

// messageCard reports whether m is a legacy actionable message card
// ("@type": "MessageCard"), which legacy incoming webhooks accept besides
// Adaptive Cards (Teams, "Create Incoming Webhooks": "Actionable messaging
// support").
func messageCard(m map[string]json.RawMessage) bool {
	var typ string
	return json.Unmarshal(m["@type"], &typ) == nil && typ == "MessageCard"
}

// cardText reports whether a message card has the summary or text that
// Teams requires of one ("Summary or Text is required.").
func cardText(m map[string]json.RawMessage) bool {
	for _, k := range []string{"summary", "text"} {
		var v string
		if json.Unmarshal(m[k], &v) == nil && v != "" {
			return true
		}
	}
	return false
}

// Receivers are one receiver of each service.
type Receivers struct {
	Slack   *Slack
	Discord *Discord
	Teams   *Teams
}

// NewReceivers starts one receiver of each service.
func NewReceivers() *Receivers {
	return &Receivers{Slack: NewSlack(), Discord: NewDiscord(), Teams: NewTeams()}
}

// Close stops them.
func (rs *Receivers) Close() {
	rs.Slack.Close()
	rs.Discord.Close()
	rs.Teams.Close()
}

// TLSConfig trusts them (and every httptest server: they share one
// certificate).
func (rs *Receivers) TLSConfig() *tls.Config { return rs.Slack.TLSConfig() }

// Route returns a chat notification body with its webhook URL pointed at
// the receiver of its service, path and query kept, the Discord webhook or
// Teams workflow it names created there. Other bodies are returned as they
// are.
func (rs *Receivers) Route(body string) string {
	var m struct {
		Chat *struct {
			Service string `json:"service"`
			URL     string `json:"url"`
		} `json:"chat"`
	}
	if json.Unmarshal([]byte(body), &m) != nil || m.Chat == nil {
		return body
	}
	u, err := url.Parse(m.Chat.URL)
	if err != nil {
		return body
	}
	var base string
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	switch m.Chat.Service {
	case "slack":
		base = rs.Slack.URL()
	case "discord":
		base = rs.Discord.URL()
		if len(parts) == 4 {
			rs.Discord.Create(parts[2], parts[3])
		}
	case "teams":
		base = rs.Teams.URL()
		if len(parts) > 1 && parts[0] == "workflows" {
			rs.Teams.Create(parts[1], u.Query().Get("sig"))
		}
	default:
		return body
	}
	routed := base + u.EscapedPath()
	if u.RawQuery != "" {
		routed += "?" + u.RawQuery
	}
	return strings.Replace(body, m.Chat.URL, routed, 1)
}
