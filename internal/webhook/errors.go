package webhook

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/outbound"
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
	// not connect to (see outbound.CheckDestination); no connection was
	// opened.
	ClassBlockedDestination = delivery.NewClass("webhook_blocked_destination")
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
func (t target) blocked(b *outbound.BlockedError) error {
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
		// the excerpt is scrubbed of the URL's secrets and what the request
		// carried.
		if e := outbound.Excerpt(excerpt, t.u, t.sent...); e != "" {
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
	d, _ := outbound.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
	return d
}

// transportClasses are the classes of outbound.TransportFailure's kinds.
var transportClasses = map[outbound.Failure]delivery.Class{
	outbound.FailureDNS:        ClassDNS,
	outbound.FailureTLS:        ClassTLS,
	outbound.FailureTimeout:    ClassTimeout,
	outbound.FailureConnection: ClassConnection,
	outbound.FailureNetwork:    ClassNetwork,
}

// transportError classifies a failure to get a response
// (outbound.TransportFailure). The *url.Error that net/http wraps around it
// is dropped: its text holds the whole URL.
func (t target) transportError(err error, timeout time.Duration) error {
	err = outbound.Unwrap(err)
	kind, what := outbound.TransportFailure(err)
	if kind == outbound.FailureTimeout {
		what = fmt.Sprintf("timed out (attempt timeout %v)", timeout)
	}
	return delivery.Transient(transportClasses[kind], &scrubbedError{
		msg: t.errorf("%s: %s", what, t.scrub(err.Error())).Error(),
		err: err,
	})
}

// scrubbedError carries a text from which the URL's secrets were removed,
// and the error it describes.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub removes from s, a text that herald did not write (a transport
// error), the parts of the URL that may be secret and every credential the
// request carried (outbound.Scrub).
func (t target) scrub(s string) string {
	return outbound.Scrub(s, t.u, t.sent...)
}
