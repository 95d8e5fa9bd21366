package outbound

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
)

// Failure is the kind of a failure to get a response: each sender turns it
// into its own error class ("dns" is webhook_dns, slack_dns, …).
type Failure string

// The kinds of [TransportFailure], all transient: the receiver may answer
// later.
const (
	FailureDNS        Failure = "dns"        // the name did not resolve
	FailureTLS        Failure = "tls"        // the TLS handshake or the certificate failed
	FailureTimeout    Failure = "timeout"    // the attempt's timeout passed
	FailureConnection Failure = "connection" // refused, reset or cut short
	FailureNetwork    Failure = "network"    // any other transport failure
)

// Failures lists every [Failure], for senders that declare a class for each.
var Failures = []Failure{FailureDNS, FailureTLS, FailureTimeout, FailureConnection, FailureNetwork}

// TransportFailure sorts err, a failure of a [NewClient] request to get a
// response, by the types in its chain: kind, and what describes it ("DNS
// lookup failed"). The *url.Error net/http wraps around err is looked
// through, never quoted (its text holds the whole URL). A *BlockedError and
// the caller's own deadline are the caller's to tell apart first.
func TransportFailure(err error) (kind Failure, what string) {
	err = Unwrap(err)
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr): // first: a DNS error can wrap a refused connection or a timeout
		return FailureDNS, "DNS lookup failed"
	case isTLS(err), err.Error() == errHTTPResponseToHTTPS:
		return FailureTLS, "TLS failed"
	case isTimeout(err):
		return FailureTimeout, "timed out"
	case errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF):
		return FailureConnection, "connection failed"
	}
	return FailureNetwork, "network error"
}

// Unwrap returns err without the *url.Error layers net/http wraps around a
// transport failure: their text quotes the whole URL, which may be secret.
func Unwrap(err error) error {
	for {
		var ue *url.Error
		if !errors.As(err, &ue) || ue.Err == nil {
			return err
		}
		err = ue.Err
	}
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
