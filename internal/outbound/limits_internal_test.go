package outbound

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLooseIPv4PartLimits: in the WHATWG forms every part but the last is
// one byte (255 at most) and the last fills the bytes left.
func TestLooseIPv4PartLimits(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"0xff.1":          "255.0.0.1",
		"255.255.65535":   "255.255.255.255",
		"0x100.1":         "",
		"1.256.0.1.":      "",
		"1.2.3.256":       "",
		"1.2.65536":       "",
		"255.255.255.0x":  "255.255.255.0",
		"0xa.0xA.0xf.0xF": "10.10.15.15",
		"0xg.1":           "",
		"09.1":            "",
	} {
		a, canonical, ok := HostAddr(host)
		if want == "" {
			require.False(t, ok, host)
			continue
		}
		require.True(t, ok, host)
		require.False(t, canonical, host)
		require.Equal(t, want, a.String(), host)
	}
}

// TestSanitizeLimits: at most limit bytes, a space counted where it is
// written, no leading space, and "…" only when something was cut.
func TestSanitizeLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		{"abcd", 4, "abcd"},
		{"abcde", 4, "abcd…"},
		{"abc d", 4, "abc…"},
		{"ab cd", 5, "ab cd"},
		{"  \t a", 10, "a"},
		{"a \x00\n b", 10, "a b"},
		{"ä", 1, "…"},
		{"", 4, ""},
	} {
		require.Equal(t, tc.want, sanitize([]byte(tc.in), tc.limit), "%q limit %d", tc.in, tc.limit)
	}
}

// TestIsTLSReadsAlertsInTheChain: a TLS alert, which crypto/tls reports as
// a *net.OpError with Op "remote error" or "local error", is a TLS failure
// also when wrapped; another OpError is not.
func TestIsTLSReadsAlertsInTheChain(t *testing.T) {
	t.Parallel()
	alert := errors.New("tls: handshake failure")
	require.True(t, isTLS(&net.OpError{Op: "remote error", Err: alert}))
	require.True(t, isTLS(fmt.Errorf("post: %w", &net.OpError{Op: "local error", Err: alert})))
	require.False(t, isTLS(&net.OpError{Op: "dial", Err: alert}))
	require.False(t, isTLS(errors.New("remote error")))
}

// TestTransportFailureKinds: each kind of failure sorts as its Failure, and
// every kind TransportFailure returns is in Failures, the list senders
// declare their classes from.
func TestTransportFailureKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want Failure
	}{
		{&net.DNSError{Err: "no such host", Name: "h.example.com", IsNotFound: true}, FailureDNS},
		{&net.DNSError{Err: "i/o timeout", Name: "h.example.com", IsTimeout: true}, FailureDNS},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, FailureTLS},
		{errors.New(errHTTPResponseToHTTPS), FailureTLS},
		{context.DeadlineExceeded, FailureTimeout},
		{fmt.Errorf("read: %w", os.ErrDeadlineExceeded), FailureTimeout},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, FailureConnection},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), FailureConnection},
		{io.ErrUnexpectedEOF, FailureConnection},
		{&url.Error{Op: "Post", URL: "https://h.example.com/x", Err: io.EOF}, FailureConnection},
		{errors.New("something else"), FailureNetwork},
	} {
		kind, what := TransportFailure(tc.err)
		require.Equal(t, tc.want, kind, "%v", tc.err)
		require.NotEmpty(t, what)
		require.Contains(t, Failures, kind)
	}
	require.Len(t, Failures, 5)
}
