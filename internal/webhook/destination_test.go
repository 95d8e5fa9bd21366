package webhook_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
)

// countingListener accepts TCP connections on a local address, counts them
// and closes them at once.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func listenCounting(t *testing.T, addr string) (*countingListener, error) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &countingListener{Listener: ln}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			c.Close()
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return l, nil
}

// loopbackListeners listens on 127.0.0.1 and, when the host has IPv6
// loopback, on [::1] at the same port, and returns the port and a function
// counting the connections both accepted.
func loopbackListeners(t *testing.T) (port string, accepted func() int64, hasIPv6 bool) {
	t.Helper()
	v4, err := listenCounting(t, "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ = net.SplitHostPort(v4.Addr().String())
	v6, err := listenCounting(t, net.JoinHostPort("::1", port))
	hasIPv6 = err == nil
	return port, func() int64 {
		n := v4.accepted.Load()
		if v6 != nil {
			n += v6.accepted.Load()
		}
		return n
	}, hasIPv6
}

// dialLog records what a Sender's transport was about to dial.
type dialLog struct {
	mu      sync.Mutex
	dials   []string
	allowed []string
}

func (d *dialLog) hook(address string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dials = append(d.dials, address)
	if err == nil {
		d.allowed = append(d.allowed, address)
	}
}

func (d *dialLog) get() (dials, allowed []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dials...), append([]string(nil), d.allowed...)
}

// TestSendBlockedDestinations sends through the real sender and dialer to
// every spelling of a local address, with listeners there that count the
// connections they accept: none may arrive, and the failure is a permanent
// webhook_blocked_destination.
func TestSendBlockedDestinations(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		host string // the URL's host, without the port
		why  string
		// resolved: the host is a name, so the check runs at dial time and
		// sees the resolved addresses; otherwise it fails before any dial.
		resolved bool
		ipv6     bool // needs IPv6 loopback for its listener
		noListen bool // an address nothing here listens on
		orDNS    bool // a DNS failure is a fine outcome too
	}{
		{name: "IPv4 loopback", host: "127.0.0.1", why: "127.0.0.1 is a loopback address"},
		// Special-use names are judged by name, before anything resolves
		// them (RFC 6761): nothing is dialled.
		{name: "localhost", host: "localhost", why: "localhost is a loopback name (localhost, RFC 6761 §6.3)"},
		{name: "localhost with trailing dot", host: "localhost.", why: "localhost is a loopback name"},
		{name: "under localhost", host: "api.LOCALHOST", why: "api.localhost is a loopback name"},
		{name: "IPv6 loopback", host: "[::1]", why: "::1 is the loopback address", ipv6: true},
		{name: "IPv4-mapped IPv6", host: "[::ffff:127.0.0.1]", why: "127.0.0.1 is a loopback address"},
		{name: "IPv4-mapped IPv6 hex", host: "[::ffff:7f00:1]", why: "127.0.0.1 is a loopback address"},
		{name: "decimal", host: "2130706433", why: "127.0.0.1 is a loopback address"},
		{name: "hex parts", host: "0x7f.1", why: "127.0.0.1 is a loopback address"},
		{name: "hex", host: "0x7f000001", why: "127.0.0.1 is a loopback address"},
		{name: "octal", host: "017700000001", why: "127.0.0.1 is a loopback address"},
		{name: "octal parts", host: "0177.0.0.01", why: "127.0.0.1 is a loopback address"},
		{name: "two parts", host: "127.1", why: "127.0.0.1 is a loopback address"},
		{name: "leading zeros", host: "127.000.000.001", why: "127.0.0.1 is a loopback address"},
		{name: "trailing dot", host: "127.0.0.1.", why: "127.0.0.1 is a loopback address"},
		{name: "other loopback", host: "127.0.0.2", why: "127.0.0.2 is a loopback address"},
		{name: "unspecified", host: "0.0.0.0", why: `0.0.0.0 is a "this network" address`},
		{name: "IPv6 unspecified", host: "[::]", why: ":: is the unspecified address"},
		{name: "instance metadata", host: "169.254.169.254", why: "169.254.169.254 is a link-local address", noListen: true},
		{name: "instance metadata, decimal", host: "2852039166", why: "169.254.169.254 is a link-local address", noListen: true},
		{name: "instance metadata, IPv6", host: "[fd00:ec2::254]", why: "fd00:ec2::254 is a unique local address", noListen: true},
		{name: "instance metadata, NAT64", host: "[64:ff9b::a9fe:a9fe]", why: "embedding 169.254.169.254", noListen: true},
		{name: "private", host: "10.0.0.1", why: "10.0.0.1 is a private address", noListen: true},
		{name: "CGNAT", host: "100.64.0.1", why: "100.64.0.1 is a shared (carrier-grade NAT) address", noListen: true},
		{name: "unique local", host: "[fd00::1]", why: "fd00::1 is a unique local address", noListen: true},
		{name: "IPv6 link-local with zone", host: "[fe80::1%25lo]", why: "fe80::1 is a link-local address", noListen: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			port, accepted, hasIPv6 := "443", func() int64 { return 0 }, false
			if !tt.noListen {
				port, accepted, hasIPv6 = loopbackListeners(t)
			}
			if tt.ipv6 && !hasIPv6 {
				t.Log("no IPv6 loopback here: checking the outcome only")
			}
			var dials dialLog
			s := newSender(t, nil, func(c *webhook.Config) {
				c.AllowCIDRs = nil // the default
				c.Timeout = 3 * time.Second
			})
			webhook.SetDialHook(s, dials.hook)

			start := time.Now()
			err := s.Send(context.Background(), message("https://user:pa55@"+tt.host+":"+port+"/path?token=SECRET"))
			elapsed := time.Since(start)

			require.Contains(t, err.Error(), "https://"+tt.host+":"+port)
			requireNoSecrets(t, err, "pa55", "SECRET", "/path", "user")
			require.Zero(t, accepted(), "a blocked destination accepted a connection")
			dialed, allowed := dials.get()
			require.Empty(t, allowed, "the dialer was allowed to connect to %v", allowed)
			if _, class, _ := delivery.Classify(err); tt.orDNS && class == webhook.ClassDNS {
				t.Logf("the resolver did not resolve %s: %v", tt.host, err)
				return
			}
			requireOutcome(t, err, true, webhook.ClassBlockedDestination)
			require.Contains(t, err.Error(), tt.why)
			if tt.resolved {
				require.NotEmpty(t, dialed, "the check at dial time saw no address")
			} else {
				require.Empty(t, dialed, "a literal address is blocked before any dial")
			}
			require.Less(t, elapsed, time.Second, "a blocked destination fails at once")
		})
	}
}

// TestSendBlockedDestinationsAreReachable shows that the listeners of
// TestSendBlockedDestinations do accept connections when the check lets
// them: its zero counts mean something.
func TestSendBlockedDestinationsAreReachable(t *testing.T) {
	t.Parallel()

	// localhost is not among them: it is blocked by name, whatever
	// AllowCIDRs says (TestSendSpecialUseNames).
	hosts := []string{"127.0.0.1", "[::ffff:127.0.0.1]", "0.0.0.0"}
	if l, err := net.Listen("tcp6", "[::1]:0"); err == nil { // the control needs an IPv6 loopback to mean anything
		l.Close()
		hosts = append(hosts, "[::1]")
	}
	for _, host := range hosts {
		t.Run(host, func(t *testing.T) {
			t.Parallel()

			port, accepted, _ := loopbackListeners(t)
			var dials dialLog
			s := newSender(t, nil, func(c *webhook.Config) {
				c.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
				c.Timeout = 3 * time.Second
			})
			webhook.SetDialHook(s, dials.hook)

			err := s.Send(context.Background(), message("https://"+host+":"+port+"/hook"))
			require.Error(t, err) // the listener closes the connection at once
			permanent, class, _ := delivery.Classify(err)
			require.False(t, permanent, "%v", err)
			require.NotEqual(t, webhook.ClassBlockedDestination, class)
			require.Positive(t, accepted(), "%s: no connection arrived: %v", host, err)
			_, allowed := dials.get()
			require.NotEmpty(t, allowed)
		})
	}
}

// TestSendAllowedDestination: AllowCIDRs lets a webhook reach the networks
// it lists, and only those.
func TestSendAllowedDestination(t *testing.T) {
	t.Parallel()

	t.Run("allowed", func(t *testing.T) {
		t.Parallel()
		b := setup(t, status(http.StatusNoContent), func(c *webhook.Config) {
			c.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		})
		require.NoError(t, b.sender.Send(context.Background(), message(b.srv.URL+"/hook")))
		require.EqualValues(t, 1, b.hits.Load())
	})
	t.Run("allowed network", func(t *testing.T) {
		t.Parallel()
		b := setup(t, status(http.StatusNoContent), func(c *webhook.Config) {
			c.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.0/8")}
		})
		require.NoError(t, b.sender.Send(context.Background(), message(b.srv.URL+"/hook")))
		require.EqualValues(t, 1, b.hits.Load())
	})
	t.Run("by default", func(t *testing.T) {
		t.Parallel()
		b := setup(t, status(http.StatusNoContent), func(c *webhook.Config) { c.AllowCIDRs = nil })
		err := b.sender.Send(context.Background(), message(b.srv.URL+"/hook"))
		requireOutcome(t, err, true, webhook.ClassBlockedDestination)
		require.Zero(t, b.hits.Load())
	})
	t.Run("other networks stay blocked", func(t *testing.T) {
		t.Parallel()
		b := setup(t, status(http.StatusNoContent)) // allows 127.0.0.1/32
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(b.srv.URL, "https://"))
		for _, host := range []string{"127.0.0.2", "[::1]", "169.254.169.254", "10.0.0.1"} {
			err := b.sender.Send(context.Background(), message("https://"+host+":"+port+"/hook"))
			requireOutcome(t, err, true, webhook.ClassBlockedDestination)
		}
		require.Zero(t, b.hits.Load())
	})
	t.Run("allowed but non-standard spelling", func(t *testing.T) {
		t.Parallel()
		b := setup(t, status(http.StatusNoContent))
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(b.srv.URL, "https://"))
		err := b.sender.Send(context.Background(), message("https://2130706433:"+port+"/hook"))
		requireOutcome(t, err, true, webhook.ClassInvalidURL)
		require.Contains(t, err.Error(), "127.0.0.1 in a non-standard form")
		require.Zero(t, b.hits.Load())
	})
}

func TestNewSenderAllowCIDRs(t *testing.T) {
	t.Parallel()

	tests := []struct {
		prefix  netip.Prefix
		wantErr string
	}{
		{prefix: netip.MustParsePrefix("10.0.0.0/8")},
		{prefix: netip.MustParsePrefix("127.0.0.1/32")},
		{prefix: netip.MustParsePrefix("fd00::/8")},
		{prefix: netip.MustParsePrefix("0.0.0.0/0")},
		{prefix: netip.MustParsePrefix("10.1.2.3/8"), wantErr: "webhook allow CIDRs: 10.1.2.3/8 is not a network address: did you mean 10.0.0.0/8 or 10.1.2.3/32?"},
		{prefix: netip.MustParsePrefix("::ffff:10.0.0.0/104"), wantErr: "webhook allow CIDRs: ::ffff:10.0.0.0/104 is an IPv4-mapped prefix: write the IPv4 network (like 10.0.0.0/8)"},
		{prefix: netip.Prefix{}, wantErr: "webhook allow CIDRs: invalid Prefix is not a CIDR prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.prefix.String(), func(t *testing.T) {
			t.Parallel()
			_, err := webhook.NewSender(webhook.Config{Secret: testSecret, AllowCIDRs: []netip.Prefix{tt.prefix}})
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.wantErr)
		})
	}
}

// TestSendURLWithoutHost: "https://:443/" names no host, which Go would
// dial as this machine.
func TestSendURLWithoutHost(t *testing.T) {
	t.Parallel()

	var dials dialLog
	s := newSender(t, nil)
	webhook.SetDialHook(s, dials.hook)
	for _, u := range []string{"https://:443/hook", "https://:8443"} {
		err := s.Send(context.Background(), message(u))
		requireOutcome(t, err, true, webhook.ClassInvalidURL)
	}
	dialed, _ := dials.get()
	require.Empty(t, dialed)
}
