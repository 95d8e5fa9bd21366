package endpoint

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// MaxURLBytes is the longest endpoint URL, in bytes.
const MaxURLBytes = 2048

// WildcardSuffix ends a prefix entry of an event-type filter: "invoice.*"
// matches every type that starts with "invoice.".
const WildcardSuffix = ".*"

var (
	// tenantPattern: 1–128 characters of the notification id's alphabet.
	tenantPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	// eventTypePattern: 1–128 characters of A-Z a-z 0-9 . _ -.
	eventTypePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
)

// URLRules are a deployment's exceptions to the URL rules, the same the
// deliver function applies at send time (package config): the zero value is
// production's rules.
type URLRules struct {
	// AllowHTTP lets a URL be plain http (HERALD_WEBHOOK_ALLOW_HTTP), for
	// local testing only.
	AllowHTTP bool
	// AllowCIDRs are networks an IP-literal host may be in although they
	// are special-purpose (HERALD_WEBHOOK_ALLOW_CIDRS).
	AllowCIDRs []netip.Prefix
	// ChatAllowHosts are hosts a chat endpoint's URL may name besides the
	// service's own (HERALD_CHAT_ALLOW_HOSTS): exact names, or ".suffix"
	// for every name under suffix.
	ChatAllowHosts []string
}

// Validate checks e with production's URL rules (the zero [URLRules]); see
// [URLRules.Validate].
func Validate(e Endpoint) error { return URLRules{}.Validate(e) }

// Validate checks the fields an application sets on an endpoint, in this
// order, and returns a *[FieldError] for the first one at fault, or nil:
//
//   - tenant: 1–[MaxTenantChars] characters of A-Z a-z 0-9 . _ : -;
//   - kind: one of [Kinds];
//   - url: see [URLRules.CheckURL];
//   - description: valid UTF-8, at most [MaxDescriptionChars] characters;
//   - event_types: see [ValidateFilter];
//   - headers: see [ValidateHeaders];
//   - rate_limit: 0 (no limit of its own), or [MinRateLimit] to
//     [MaxRateLimit] requests per second;
//   - metadata: at most [MaxMetadataEntries] entries, keys 1–
//     [MaxMetadataKeyChars] and values at most [MaxMetadataValueChars]
//     characters of valid UTF-8.
//
// ID, Secrets, Disabled, Version and the times are the store's and are not
// checked. No error quotes a URL, a header value or a metadata value.
func (r URLRules) Validate(e Endpoint) error {
	if !tenantPattern.MatchString(e.Tenant) {
		return &FieldError{Field: "tenant", Reason: fmt.Sprintf("must be 1–%d characters of A-Z a-z 0-9 . _ : -", MaxTenantChars)}
	}
	if !slices.Contains(Kinds, e.Kind) {
		return &FieldError{Field: "kind", Reason: "must be one of webhook, slack, discord, teams"}
	}
	if err := r.CheckURL(e.Kind, e.URL); err != nil {
		return err
	}
	if err := checkDescription(e.Description); err != nil {
		return err
	}
	if err := ValidateFilter(e.EventTypes); err != nil {
		return err
	}
	if err := ValidateHeaders(e.Headers); err != nil {
		return err
	}
	if err := checkRateLimit(e.RateLimit); err != nil {
		return err
	}
	return checkMetadata(e.Metadata)
}

// CheckURL checks an endpoint's URL for kind, as herald's senders do at
// send time (package webhook, package chat), so that an endpoint that
// cannot be delivered to is refused when it is created:
//
//   - at most [MaxURLBytes] bytes, an absolute URL with a host, https (http
//     only with AllowHTTP), no userinfo (user:password@: put a credential in
//     a header) and no fragment (never sent);
//   - a host that is an IP address is checked against the ranges herald
//     never connects to (outbound.CheckDestination: loopback, private,
//     link-local, …, an IPv4-mapped IPv6 address as its IPv4 address)
//     unless AllowCIDRs holds it; an IPv4 address must be written in dotted
//     decimal (2130706433 and 0x7f.1 are 127.0.0.1 to a browser's URL
//     parser); a webhook's host is judged as the webhook sender judges
//     it before resolving anything (webhook.CheckHost: special-use and
//     single-label names, names the IDNA mapping rejects or turns into an
//     address), and any other name when it is dialled, as for any
//     webhook;
//   - a chat kind's URL names that service's own incoming-webhook host
//     (chat.ServiceOfHost: hooks.slack.com, discord.com and its other
//     hosts, Teams' Workflows hosts) or one of ChatAllowHosts.
//
// It returns a *[FieldError] for field "url" that never quotes the URL.
func (r URLRules) CheckURL(kind Kind, raw string) error {
	bad := func(format string, args ...any) error {
		return &FieldError{Field: "url", Reason: fmt.Sprintf(format, args...)}
	}
	if raw == "" {
		return bad("required: an absolute https URL")
	}
	if len(raw) > MaxURLBytes {
		return bad("%d bytes; at most %d", len(raw), MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return bad("must be an absolute https URL with a host")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && r.AllowHTTP:
	case u.Scheme == "http":
		return bad("must be https, not plain http")
	default:
		return bad("must be an absolute https URL with a host")
	}
	if u.User != nil {
		return bad("must not carry userinfo (user:password@); send a credential in a custom header")
	}
	if u.Fragment != "" || u.RawFragment != "" || strings.Contains(raw, "#") {
		return bad("must not have a fragment (#…): it is never sent")
	}
	host := u.Hostname()
	if host == "" {
		return bad("must be an absolute https URL with a host")
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if err := outbound.CheckDestination(addr, r.AllowCIDRs); err != nil {
			return bad("blocked destination: %v", err)
		}
	} else if endsInNumber(host) {
		return bad("the host is an IPv4 address in a non-standard form; write it in dotted decimal")
	}
	if kind == KindWebhook {
		// What the webhook sender refuses before it resolves anything.
		var blocked *outbound.BlockedError
		if err := webhook.CheckHost(host, r.AllowCIDRs); errors.As(err, &blocked) {
			return bad("blocked destination: %v", err)
		} else if err != nil {
			return bad("%v", err)
		}
	}
	if kind != KindWebhook {
		service := notification.ChatService(kind)
		if chat.ServiceOfHost(host) != service && !r.chatHostAllowed(host) {
			return bad("must be a %s incoming webhook URL (host %s)", kind, strings.Join(chat.DefaultHosts(service), " or "))
		}
	}
	return nil
}

// endsInNumber reports whether host's last label is a number (decimal,
// or hexadecimal after 0x): the WHATWG URL Standard then parses the host
// as an IPv4 address ("ends in a number checker").
func endsInNumber(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := strings.ToLower(labels[len(labels)-1])
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	hex, ok := strings.CutPrefix(last, "0x")
	return ok && strings.Trim(hex, "0123456789abcdef") == ""
}

// chatHostAllowed reports whether host is one of r.ChatAllowHosts (or
// under a ".suffix" entry), compared in lower case without a trailing dot.
func (r URLRules) chatHostAllowed(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, p := range r.ChatAllowHosts {
		p = strings.ToLower(p)
		if p == host || strings.HasPrefix(p, ".") && strings.HasSuffix(host, p) && len(host) > len(p) {
			return true
		}
	}
	return false
}

func checkDescription(s string) error {
	switch {
	case !utf8.ValidString(s):
		return &FieldError{Field: "description", Reason: "must be valid UTF-8"}
	case utf8.RuneCountInString(s) > MaxDescriptionChars:
		return &FieldError{Field: "description", Reason: fmt.Sprintf("%d characters; at most %d", utf8.RuneCountInString(s), MaxDescriptionChars)}
	}
	return nil
}

func checkRateLimit(v float64) error {
	if math.IsNaN(v) || v < 0 || v > MaxRateLimit || v > 0 && v < MinRateLimit {
		return &FieldError{Field: "rate_limit", Reason: fmt.Sprintf("must be 0 (no limit of its own) or %g to %d requests per second", MinRateLimit, MaxRateLimit)}
	}
	return nil
}

func checkMetadata(m map[string]string) error {
	if len(m) > MaxMetadataEntries {
		return &FieldError{Field: "metadata", Reason: fmt.Sprintf("%d entries; at most %d", len(m), MaxMetadataEntries)}
	}
	for _, k := range sortedKeys(m) {
		switch n := utf8.RuneCountInString(k); {
		case !utf8.ValidString(k) || n == 0 || n > MaxMetadataKeyChars:
			return &FieldError{Field: "metadata", Reason: fmt.Sprintf("a key must be 1–%d characters of valid UTF-8", MaxMetadataKeyChars)}
		case !utf8.ValidString(m[k]):
			return &FieldError{Field: "metadata." + k, Reason: "must be valid UTF-8"}
		case utf8.RuneCountInString(m[k]) > MaxMetadataValueChars:
			return &FieldError{Field: "metadata." + k, Reason: fmt.Sprintf("%d characters; at most %d", utf8.RuneCountInString(m[k]), MaxMetadataValueChars)}
		}
	}
	return nil
}

// ValidateEventType checks an event's type: 1–[MaxEventTypeChars]
// characters of A-Z a-z 0-9 . _ - (no wildcard: that is a filter's). It
// returns a *[FieldError] for field "type".
func ValidateEventType(s string) error {
	if !eventTypePattern.MatchString(s) {
		return &FieldError{Field: "type", Reason: fmt.Sprintf("must be 1–%d characters of A-Z a-z 0-9 . _ -", MaxEventTypeChars)}
	}
	return nil
}

// ValidateFilter checks an event-type filter: at most [MaxEventTypes]
// distinct entries, each an event type ([ValidateEventType]) or a prefix
// written "<type>.*" ("invoice.*", "billing.invoice.*"). An empty filter
// means every type; "*" alone is refused so that there is one way to say
// it (leave event_types out). It returns a *[FieldError] naming the entry
// ("event_types[2]").
func ValidateFilter(filter []string) error {
	if len(filter) > MaxEventTypes {
		return &FieldError{Field: "event_types", Reason: fmt.Sprintf("%d entries; at most %d", len(filter), MaxEventTypes)}
	}
	for i, f := range filter {
		field := fmt.Sprintf("event_types[%d]", i)
		if f == "*" {
			return &FieldError{Field: field, Reason: `"*" is not a filter entry: leave event_types empty to receive every type`}
		}
		t, _ := strings.CutSuffix(f, WildcardSuffix)
		if len(f) > MaxEventTypeChars || !eventTypePattern.MatchString(t) || strings.Contains(t, "*") {
			return &FieldError{Field: field, Reason: fmt.Sprintf(`must be an event type (1–%d characters of A-Z a-z 0-9 . _ -) or a prefix written "invoice.*"`, MaxEventTypeChars)}
		}
		if j := slices.Index(filter[:i], f); j >= 0 {
			return &FieldError{Field: field, Reason: fmt.Sprintf("the same entry as event_types[%d]", j)}
		}
	}
	return nil
}

// Matches reports whether an endpoint with event-type filter filter
// receives events of type eventType: the filter is empty (every type), or
// one entry equals eventType (case-sensitive), or one entry "p.*" is a
// prefix wildcard and eventType starts with "p." and is longer ("invoice.*"
// matches "invoice.paid" and "invoice.paid.late", not "invoice" nor
// "invoices.paid").
func Matches(filter []string, eventType string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if f == eventType {
			return true
		}
		if p, ok := strings.CutSuffix(f, "*"); ok && strings.HasSuffix(p, ".") && len(eventType) > len(p) && strings.HasPrefix(eventType, p) {
			return true
		}
	}
	return false
}

// refusedHeaders are header names (canonical form) an endpoint's custom
// headers may not set: the hop-by-hop headers of RFC 9110 §7.6.1 (HTTP/2
// forbids them, RFC 9113 §8.2.2), those that describe the body or the
// request (Host, Content-*, Expect), and those herald sets itself
// (User-Agent; package webhook's).
var refusedHeaders = map[string]string{
	"Connection":        "a hop-by-hop header (RFC 9110 §7.6.1)",
	"Keep-Alive":        "a hop-by-hop header (RFC 9110 §7.6.1)",
	"Te":                "a hop-by-hop header (RFC 9110 §7.6.1)",
	"Trailer":           "a hop-by-hop header (RFC 9110 §7.6.1)",
	"Transfer-Encoding": "a hop-by-hop header (RFC 9110 §7.6.1)",
	"Upgrade":           "a hop-by-hop header (RFC 9110 §7.6.1)",
	"Host":              "set from the URL (RFC 9110 §7.2)",
	"Content-Length":    "set from the body (RFC 9110 §8.6)",
	"Content-Type":      "herald sends application/json",
	"Content-Encoding":  "herald sends the body unencoded",
	"Expect":            "herald sends the body at once",
	"User-Agent":        "set by herald",
}

// Prefixes of refused header names, compared in lower case.
const (
	// proxyHeaderPrefix: Proxy-Connection, Proxy-Authorization, … are
	// hop-by-hop (RFC 9110 §7.6.1, §11.7).
	proxyHeaderPrefix = "proxy-"
	// webhookHeaderPrefix: webhook-id, webhook-timestamp,
	// webhook-signature are the Standard Webhooks headers herald signs
	// with ("Webhook headers"); the whole prefix is kept for the
	// specification.
	webhookHeaderPrefix = "webhook-"
	// HeraldHeaderPrefix starts the headers herald adds to an endpoint's
	// requests (herald-event-type).
	HeraldHeaderPrefix = "herald-"
)

// ValidateHeaders checks an endpoint's custom request headers: at most
// [MaxHeaders], names and values together at most [MaxHeaderBytes]; each
// name an RFC 9110 §5.1 token of 1–128 bytes (httpguts), not one herald or
// the connection owns (hop-by-hop headers, Proxy-*, Host, Content-Length,
// Content-Type, Content-Encoding, Expect, User-Agent, webhook-*, herald-*,
// in any case), no two names equal but for case; each value a valid field
// value (httpguts: no control character but tab) without leading or
// trailing whitespace (RFC 9110 §5.5). It returns a *[FieldError] naming
// the header ("headers.Connection"), never quoting its value.
func ValidateHeaders(h map[string]string) error {
	if len(h) > MaxHeaders {
		return &FieldError{Field: "headers", Reason: fmt.Sprintf("%d headers; at most %d", len(h), MaxHeaders)}
	}
	size := 0
	names := sortedKeys(h)
	for i, k := range names {
		field := "headers." + k
		lower := strings.ToLower(k)
		v := h[k]
		size += len(k) + len(v)
		switch {
		case !httpguts.ValidHeaderFieldName(k) || !notification.ValidWebhookHeaderName(k):
			return &FieldError{Field: "headers", Reason: "a header name must be an RFC 9110 token of 1–128 bytes (letters, digits and !#$%&'*+-.^_`|~)"}
		case refusedHeaders[http.CanonicalHeaderKey(k)] != "":
			return &FieldError{Field: field, Reason: "refused: " + refusedHeaders[http.CanonicalHeaderKey(k)]}
		case strings.HasPrefix(lower, proxyHeaderPrefix):
			return &FieldError{Field: field, Reason: "refused: a hop-by-hop header (RFC 9110 §7.6.1)"}
		case strings.HasPrefix(lower, webhookHeaderPrefix):
			return &FieldError{Field: field, Reason: "refused: webhook-* are the Standard Webhooks headers herald signs with"}
		case strings.HasPrefix(lower, HeraldHeaderPrefix):
			return &FieldError{Field: field, Reason: "refused: herald-* are herald's own headers"}
		case i > 0 && slices.ContainsFunc(names[:i], func(n string) bool { return strings.EqualFold(n, k) }):
			return &FieldError{Field: field, Reason: "the same header as another name that differs only in case"}
		case !httpguts.ValidHeaderFieldValue(v) || !utf8.ValidString(v):
			return &FieldError{Field: field, Reason: "the value has control characters or is not valid UTF-8 (RFC 9110 §5.5)"}
		case strings.TrimLeft(v, " \t") != v || strings.TrimRight(v, " \t") != v:
			return &FieldError{Field: field, Reason: "the value starts or ends with whitespace (RFC 9110 §5.5)"}
		}
	}
	if size > MaxHeaderBytes {
		return &FieldError{Field: "headers", Reason: fmt.Sprintf("names and values are %d bytes; at most %d", size, MaxHeaderBytes)}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
