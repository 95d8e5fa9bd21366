package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/notification"
)

// Classes of the webhook channel's failures (see the package documentation
// for which is permanent). Those declared with delivery.NewOriginDownClass
// count toward opening the origin's circuit.
var (
	ClassHTTP408        = delivery.NewOriginDownClass("webhook_http_408")
	ClassHTTP425        = delivery.NewClass("webhook_http_425")
	ClassHTTP429        = delivery.NewOriginDownClass("webhook_http_429")
	ClassHTTP5xx        = delivery.NewOriginDownClass("webhook_http_5xx")
	ClassHTTP4xx        = delivery.NewClass("webhook_http_4xx")
	ClassHTTPOther      = delivery.NewClass("webhook_http_other")
	ClassGone           = delivery.NewClass("webhook_gone")
	ClassRedirect       = delivery.NewClass("webhook_redirect")
	ClassTimeout        = delivery.NewOriginDownClass("webhook_timeout")
	ClassDNS            = delivery.NewOriginDownClass("webhook_dns")
	ClassConnection     = delivery.NewOriginDownClass("webhook_connection")
	ClassTLS            = delivery.NewOriginDownClass("webhook_tls")
	ClassNetwork        = delivery.NewOriginDownClass("webhook_network")
	ClassInvalidURL     = delivery.NewClass("webhook_invalid_url")
	ClassReservedHeader = delivery.NewClass("webhook_reserved_header")
	// ClassStopStatus: the receiver answered a status the operator named in
	// Config.StopStatuses (HERALD_WEBHOOK_STOP_STATUSES).
	ClassStopStatus = delivery.NewClass("webhook_stop_status")
	// ClassBlockedDestination: the destination address is one herald does
	// not connect to (see [CheckDestination]); no connection was opened.
	ClassBlockedDestination = delivery.NewClass("webhook_blocked_destination")
)

// Response body excerpt in error texts.
const (
	excerptBytes   = 200              // the most bytes of excerpt shown
	excerptCapture = 4 * excerptBytes // bytes read for it: leeway for skipped characters
)

// reservedHeaders are the request headers herald sets or that describe the
// body or the connection; a producer's custom header may not name one.
// Hop-by-hop headers (RFC 9110 §7.6.1) are among them: HTTP/2 forbids them.
var reservedHeaders = map[string]bool{
	"Content-Type":      true,
	"Content-Length":    true,
	"Content-Encoding":  true,
	"Host":              true,
	"User-Agent":        true,
	"Webhook-Id":        true,
	"Webhook-Timestamp": true,
	"Webhook-Signature": true,
	"Connection":        true,
	"Keep-Alive":        true,
	"Proxy-Connection":  true,
	"Te":                true,
	"Trailer":           true,
	"Transfer-Encoding": true,
	"Upgrade":           true,
	"Expect":            true,
}

// target is one attempt's message id and endpoint, the only parts of the
// request that error texts name.
type target struct {
	id       string
	endpoint string   // scheme://host[:port]
	u        *url.URL // to scrub the rest from texts that are not ours
	// sent are the credentials the request carried (see sentCredentials),
	// scrubbed, in every encoding, from texts that are not ours.
	sent []string
}

// endpoint returns scheme://host[:port] of u: never its userinfo, path or query.
func endpoint(u *url.URL) string {
	if u == nil || u.Host == "" {
		return "(no host)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

func (t target) errorf(format string, args ...any) error {
	return fmt.Errorf("webhook %s to %s: %s", t.id, t.endpoint, fmt.Sprintf(format, args...))
}

// checkHeaders checks the producer's headers in name order: a reserved name
// is a permanent webhook_reserved_header, a malformed name or value a
// permanent invalid_message. Values are never quoted: they may be tokens.
func (t target) checkHeaders(h map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		switch {
		case !notification.ValidWebhookHeaderName(k):
			return delivery.Permanent(delivery.ClassInvalidMessage, t.errorf("header %q is not a valid field name (RFC 9110 §5.1)", k))
		case reservedHeaders[http.CanonicalHeaderKey(k)]:
			return delivery.Permanent(ClassReservedHeader, t.errorf("header %q is set by herald and cannot be overridden", k))
		case !notification.ValidWebhookHeaderValue(h[k]):
			return delivery.Permanent(delivery.ClassInvalidMessage, t.errorf("header %q has control characters in its value (RFC 9110 §5.5)", k))
		}
	}
	return nil
}

// deadline is the error of an attempt cut short by the caller's context:
// the invocation is ending, so the message is retried by a later one.
func (t target) deadline(ctx context.Context) error {
	return delivery.Transient(delivery.ClassDeadline, t.errorf("invocation deadline: %v", context.Cause(ctx)))
}

// blocked is the error of a destination the check blocks. The address is
// named, the URL's path, query and userinfo are not.
func (t target) blocked(b *BlockedError) error {
	return delivery.Permanent(ClassBlockedDestination, t.errorf("blocked destination: %v; %s", b, b.Advice()))
}

// statusError classifies a response by its status code: 2xx delivered,
// a status in stop (410 Gone and Config.StopStatuses) permanent, every other
// status transient ("Delivery success and failure" in the specification:
// any non-2xx is a failure, 410 means stop sending, 3xx is a failure and
// not followed).
func (t target) statusError(resp *http.Response, excerpt []byte, now time.Time, stop map[int]bool) error {
	code := resp.StatusCode
	status := fmt.Sprintf("HTTP %d", code)
	if text := http.StatusText(code); text != "" {
		status += " " + text
	}
	withBody := func() error {
		// Receivers echo the request in error pages ("Cannot POST /path?q"):
		// scrub the whole capture before cutting it, so that no secret is
		// left half in view.
		if e := delivery.Truncate(t.scrub(sanitize(excerpt, excerptCapture)), excerptBytes); e != "" {
			return t.errorf("%s; body: %s", status, e)
		}
		return t.errorf("%s", status)
	}
	if code >= 200 && code <= 299 {
		return nil
	}
	if code >= 300 && code <= 399 {
		msg := status + ": redirects are not followed; update the webhook URL"
		if loc, err := resp.Location(); err == nil {
			msg += " (Location " + endpoint(loc) + ")"
		}
		if stop[code] {
			return delivery.Permanent(ClassStopStatus, t.errorf("%s; %d is a stop status (HERALD_WEBHOOK_STOP_STATUSES)", msg, code))
		}
		return delivery.Transient(ClassRedirect, t.errorf("%s", msg))
	}
	switch {
	case code == http.StatusGone:
		return delivery.Permanent(ClassGone, withBody())
	case stop[code]:
		return delivery.Permanent(ClassStopStatus, fmt.Errorf("%w; %d is a stop status (HERALD_WEBHOOK_STOP_STATUSES)", withBody(), code))
	case code == http.StatusRequestTimeout:
		return delivery.Transient(ClassHTTP408, withBody())
	case code == http.StatusTooEarly:
		return delivery.Transient(ClassHTTP425, withBody())
	case code == http.StatusTooManyRequests:
		return &delivery.TransientError{Class: ClassHTTP429, RetryAfter: retryAfter(resp, now), Err: withBody()}
	case code >= 400 && code <= 499:
		return delivery.Transient(ClassHTTP4xx, withBody())
	case code == http.StatusServiceUnavailable:
		return &delivery.TransientError{Class: ClassHTTP5xx, RetryAfter: retryAfter(resp, now), Err: withBody()}
	case code >= 500 && code <= 599:
		return delivery.Transient(ClassHTTP5xx, withBody())
	default: // 1xx (101: others are interim) or beyond 599
		return delivery.Transient(ClassHTTPOther, withBody())
	}
}

func retryAfter(resp *http.Response, now time.Time) time.Duration {
	d, _ := ParseRetryAfter(resp.Header.Get("Retry-After"), now)
	return d
}

// transportError classifies a failure to get a response. The *url.Error
// that net/http wraps around it is dropped: its text holds the whole URL.
func (t target) transportError(err error, timeout time.Duration) error {
	for {
		var ue *url.Error
		if !errors.As(err, &ue) || ue.Err == nil {
			break
		}
		err = ue.Err
	}
	class, what := classifyTransport(err)
	if class == ClassTimeout {
		what = fmt.Sprintf("timed out (attempt timeout %v)", timeout)
	}
	return delivery.Transient(class, &scrubbedError{
		msg: t.errorf("%s: %s", what, t.scrub(err.Error())).Error(),
		err: err,
	})
}

// TransportFailure sorts a failure to get a response, as the webhook
// sender does, for other senders built on [NewClient]: kind is "dns",
// "tls", "timeout", "connection" or "network" (the webhook classes without
// their "webhook_" prefix) and what describes it ("DNS lookup failed"). The
// *url.Error net/http wraps around err is looked through, never quoted.
func TransportFailure(err error) (kind, what string) {
	for {
		var ue *url.Error
		if !errors.As(err, &ue) || ue.Err == nil {
			break
		}
		err = ue.Err
	}
	class, what := classifyTransport(err)
	return strings.TrimPrefix(string(class), "webhook_"), what
}

// Excerpt returns a response body, or any text herald did not write, as one
// printable line of at most 200 bytes with every part of u that may be
// secret (userinfo, path and its segments, query and its values, fragment,
// in each encoding a receiver may echo them) replaced by "[redacted]": the
// form in which webhook error texts quote response bodies.
func Excerpt(body []byte, u *url.URL) string {
	t := target{u: u}
	return delivery.Truncate(t.scrub(sanitize(body, excerptCapture)), excerptBytes)
}

// classifyTransport sorts a transport failure by the types in its chain.
func classifyTransport(err error) (delivery.Class, string) {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr): // first: a DNS error can wrap a refused connection or a timeout
		return ClassDNS, "DNS lookup failed"
	case isTLS(err), err.Error() == errHTTPResponseToHTTPS:
		return ClassTLS, "TLS failed"
	case isTimeout(err):
		return ClassTimeout, "timed out"
	case errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF):
		return ClassConnection, "connection failed"
	}
	return ClassNetwork, "network error"
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// errHTTPResponseToHTTPS is the text of the error net/http returns, instead
// of the tls.RecordHeaderError, when a plain HTTP server answers the TLS
// handshake (net/http transport.go). It wraps nothing, so only its text
// tells it apart.
const errHTTPResponseToHTTPS = "http: server gave HTTP response to HTTPS client"

// isTLS reports whether err is a TLS handshake or certificate failure.
func isTLS(err error) bool {
	var (
		recordHeader tls.RecordHeaderError
		verification *tls.CertificateVerificationError
		alert        tls.AlertError
		echRejection *tls.ECHRejectionError
		unknownCA    x509.UnknownAuthorityError
		hostname     x509.HostnameError
		invalid      x509.CertificateInvalidError
		systemRoots  x509.SystemRootsError
		critical     x509.UnhandledCriticalExtension
		insecure     x509.InsecureAlgorithmError
	)
	if errors.As(err, &recordHeader) || errors.As(err, &verification) || errors.As(err, &alert) ||
		errors.As(err, &echRejection) || errors.As(err, &unknownCA) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &systemRoots) || errors.As(err, &critical) ||
		errors.As(err, &insecure) {
		return true
	}
	// crypto/tls reports a TLS alert (RFC 8446 §6) received from the server
	// or sent to it as a *net.OpError with Op "remote error" or "local
	// error" around its unexported alert type.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if op, ok := e.(*net.OpError); ok && (op.Op == "remote error" || op.Op == "local error") {
			return true
		}
	}
	return false
}

// scrubbedError carries a text from which the URL's secrets were removed,
// and the error it describes.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub removes from s, a text that herald did not write (a response body
// that echoes the request, a transport error), any part of the URL that may
// be secret and every credential the request carried, in each encoding
// credentialForms lists. net/http's texts without their *url.Error hold
// none; for them this is a second line of defence. Parts shorter than 4
// bytes are kept: removing them would mangle the text and they hide nothing.
func (t target) scrub(s string) string {
	u := t.u
	if u == nil {
		u = &url.URL{}
	}
	var parts []string
	if u.User != nil {
		parts = append(parts, u.User.String(), u.User.Username())
		if p, ok := u.User.Password(); ok {
			parts = append(parts, p)
		}
	}
	parts = append(parts, u.RawQuery, u.Query().Encode(), u.Fragment, u.Opaque, u.EscapedPath(), u.Path)
	// Echoes come in pieces too, and encoded as the headers' credentials
	// are: each path segment and query value, either of which can be the
	// URL's secret.
	parts = append(parts, strings.Split(u.EscapedPath(), "/")...)
	for _, seg := range strings.Split(u.Path, "/") {
		parts = append(parts, credentialForms(seg)...)
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, v, _ := strings.Cut(kv, "=")
		parts = append(parts, v)
		if dv, err := url.QueryUnescape(v); err == nil {
			parts = append(parts, credentialForms(dv)...)
		}
	}
	for _, c := range t.sent {
		parts = append(parts, credentialForms(c)...)
	}
	return redact(s, parts)
}

// sanitize returns b as one printable line of at most limit bytes: invalid
// UTF-8, control characters and runs of white space become one space, and
// "…" marks a cut.
func sanitize(b []byte, limit int) string {
	var sb strings.Builder
	space := false
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || r == utf8.RuneError {
			space = sb.Len() > 0
			continue
		}
		n := utf8.RuneLen(r)
		if space {
			n++
		}
		if sb.Len()+n > limit {
			return sb.String() + "…"
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
