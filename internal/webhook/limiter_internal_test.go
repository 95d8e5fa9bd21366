package webhook

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOriginNamesOneDestinationForKeysAndLimits(t *testing.T) {
	t.Parallel()

	for in, want := range map[string]string{
		"https://Hooks.Example.COM/a?b=c": "https://hooks.example.com",
		"https://hooks.example.com:443/x": "https://hooks.example.com",
		"https://hooks.example.com:8443/": "https://hooks.example.com:8443",
		"http://hooks.example.com/":       "http://hooks.example.com",
		"https://user:pw@[2001:DB8::1]/p": "https://[2001:db8::1]",
		"https://[2001:db8::1]:8443/p":    "https://[2001:db8::1]:8443",
	} {
		u, err := url.Parse(in)
		require.NoError(t, err)
		got, err := originOf(u)
		require.NoError(t, err)
		require.Equal(t, want, got, in)
	}
}

func TestOriginLimiterForgetsIdleOrigins(t *testing.T) {
	t.Parallel()

	l := newOriginLimiter(1)
	release, err := l.acquire(context.Background(), "https://a:443")
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = l.acquire(ctx, "https://a:443")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 1, l.inFlight())

	release()
	require.Zero(t, l.inFlight(), "an origin with nothing in flight is forgotten")

	release, err = l.acquire(context.Background(), "https://a:443")
	require.NoError(t, err)
	release()
}
