package notification_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// TestValidWebhookHeader: names are RFC 9110 tokens of 1–128 bytes, every
// token character at either end of its range included; values have no
// control character but tab.
func TestValidWebhookHeader(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"X-Tenant", "a", "z", "A", "Z", "0", "9", "!", "~", "X!#$%&'*+-.^_`|~", strings.Repeat("h", 128)} {
		require.True(t, notification.ValidWebhookHeaderName(name), "%q", name)
	}
	for _, name := range []string{"", "X Tenant", "X:Tenant", "X\tT", "(x)", "x/y", "é", "x\x7f", strings.Repeat("h", 129)} {
		require.False(t, notification.ValidWebhookHeaderName(name), "%q", name)
	}
	for _, value := range []string{"", "plain", "with\ttab", " spaced ", "ünïcode", "~!"} {
		require.True(t, notification.ValidWebhookHeaderValue(value), "%q", value)
	}
	for _, value := range []string{"a\nb", "a\rb", "\x00", "\x08", "\x0b", "\x1f", "del\x7f"} {
		require.False(t, notification.ValidWebhookHeaderValue(value), "%q", value)
	}
}
