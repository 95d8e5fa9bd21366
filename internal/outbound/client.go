package outbound

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"time"
)

// Bounds and default of one attempt's timeout (webhook.Config.Timeout,
// chat.Config.Timeout, HERALD_WEBHOOK_TIMEOUT): connecting, sending and
// receiving the response. The Standard Webhooks specification recommends
// 15–30 s; 15 min is the longest Lambda invocation.
const (
	DefaultTimeout = 15 * time.Second
	MinTimeout     = time.Millisecond
	MaxTimeout     = 15 * time.Minute
)

// DefaultUserAgent is the User-Agent request header of webhook and chat
// requests unless their Config names another.
const DefaultUserAgent = "herald/1"

// Timeouts of the transport's steps; the attempt's timeout bounds them all.
const (
	dialTimeout         = 10 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	idleConnTimeout     = 90 * time.Second
	maxHeaderBytes      = 64 << 10
)

// DefaultHealthCheck is ClientConfig.HealthCheck's default: an HTTP/2
// connection silent for 2 s gets a PING, and is closed when the PING goes
// unanswered for 2 s more, so a stalled connection is replaced within about
// 4 s instead of failing every later request until TCP gives up. A live
// receiver answers a PING at once, also while its handler is busy (RFC 9113
// §6.7), so a slow answer is never cut short by it.
const DefaultHealthCheck = 2 * time.Second

// ClientConfig configures [NewClient].
type ClientConfig struct {
	// Timeout bounds the wait for a response's headers once the request is
	// sent (the caller's context bounds the whole request).
	Timeout time.Duration
	// TLSClientConfig is cloned, never modified; nil: the system roots and
	// TLS 1.2 or later.
	TLSClientConfig *tls.Config
	// AllowCIDRs are networks the destination check lets through
	// ([CheckDestination]; HERALD_WEBHOOK_ALLOW_CIDRS, each checked by
	// [CheckAllowPrefix]).
	AllowCIDRs []netip.Prefix
	// MaxIdleConnsPerHost is how many idle connections to one host the
	// pool keeps.
	MaxIdleConnsPerHost int
	// HealthCheck is how long an HTTP/2 connection may go without a frame
	// from the receiver before a PING checks it, and how long that PING may
	// go unanswered before the connection is closed (net/http HTTP2Config
	// SendPingTimeout and PingTimeout). Defaults to [DefaultHealthCheck].
	HealthCheck time.Duration
	// Dialed, when set, learns each address (IP and port) the transport is
	// about to connect to and the destination check's verdict: nil, or the
	// *BlockedError that abandons the address. Tests use it to see what was
	// dialled. Defaults to nil.
	Dialed func(address string, err error)
}

// NewClient returns the HTTP client of every request herald sends to a
// producer-chosen URL (webhooks, chat): every connection it opens passes
// [CheckDestination] at dial time, after resolution, so no name, DNS answer
// or address spelling reaches a blocked address (a *BlockedError in the
// error chain says so); it never uses the environment's proxy, never
// follows a redirect (the 3xx response is returned), speaks HTTP/1.1 and
// HTTP/2, checks an HTTP/2 connection's health with PINGs
// (ClientConfig.HealthCheck), and does not ask for compression.
func NewClient(cfg ClientConfig) *http.Client {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.TLSClientConfig != nil {
		tlsConfig = cfg.TLSClientConfig.Clone() // the transport adds "h2" to NextProtos
	}
	g := &guard{allow: slices.Clone(cfg.AllowCIDRs), dialed: cfg.Dialed}
	// HTTP/1.1 and, when the receiver offers it in ALPN, HTTP/2. With a
	// custom DialContext or TLSClientConfig net/http speaks HTTP/1.1 only
	// unless told otherwise: Protocols says so (ForceAttemptHTTP2 too).
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	check := cfg.HealthCheck
	if check <= 0 {
		check = DefaultHealthCheck
	}
	transport := &http.Transport{
		// Never the environment's proxy (HTTPS_PROXY): the transport must dial
		// the destination itself for the guard to check its address.
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:        dialTimeout,
			KeepAlive:      30 * time.Second,
			ControlContext: g.control,
		}).DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: cfg.Timeout,
		ExpectContinueTimeout: time.Second,
		Protocols:             protocols,
		ForceAttemptHTTP2:     true,
		// A receiver, or a proxy in front of it, can keep an HTTP/2
		// connection open and stop answering. Without a health check
		// every later request to that origin is multiplexed onto it and
		// times out, until TCP gives up minutes later (or never, when the
		// proxy keeps acknowledging). With it the connection closes once a
		// PING goes unanswered, and the next request dials afresh. (An
		// HTTP/1.1 connection is closed whenever a request on it is
		// abandoned, so it needs none.)
		HTTP2: &http.HTTP2Config{SendPingTimeout: check, PingTimeout: check},
		// Every connection the caller's per-destination limit lets open
		// stays in the pool, so a warm function opens no new connection to a
		// destination it talks to; idle ones close after idleConnTimeout. No
		// limit across hosts (MaxIdleConns 0): the per-host one and the
		// timeout bound it.
		MaxIdleConns:           0,
		MaxIdleConnsPerHost:    cfg.MaxIdleConnsPerHost,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: maxHeaderBytes,
		DisableCompression:     true, // the body is read only for an error excerpt
	}
	return &http.Client{
		Transport: transport,
		// Redirects are never followed, so a redirect cannot lead past
		// the destination check either.
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
