package chat

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/outbound"
)

// TestEveryChatClassIsDeclared: every reason the sender names literally
// (svc.class("...")) and every transport kind outbound.TransportFailure
// returns has a declared class for each service (not the http_other
// fallback), and each is in delivery.Classes, so the runbook test sees it.
func TestEveryChatClassIsDeclared(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("sender.go")
	require.NoError(t, err)
	var reasons []string
	for _, m := range regexp.MustCompile(`svc\.class\("([a-z0-9_]+)"\)`).FindAllStringSubmatch(string(src), -1) {
		reasons = append(reasons, m[1])
	}
	require.NotEmpty(t, reasons)
	for _, f := range outbound.Failures {
		reasons = append(reasons, string(f))
	}
	all := delivery.Classes()
	for _, svc := range []*service{slack, discord, teams} {
		for _, r := range reasons {
			c, ok := svc.classes[r]
			require.True(t, ok, "%s: reason %q has no declared class", svc.name, r)
			require.True(t, slices.Contains(all, c), "%s", c)
		}
	}
	// The classes of one service's own answers.
	for _, c := range []delivery.Class{discord.class("banned"), teams.class("error_answer")} {
		require.True(t, slices.Contains(all, c), "%s", c)
		require.NotEqual(t, "http_other", strings.SplitN(string(c), "_", 2)[1])
	}
}

// TestChatOriginDownClasses: a chat service's failures that say its origin
// is down are origin-down classes, as the webhook channel's are; a
// service's refusal of one message and herald's own pacing are not.
func TestChatOriginDownClasses(t *testing.T) {
	t.Parallel()
	for _, svc := range []*service{slack, discord, teams} {
		for _, r := range []string{"http_5xx", "http_408", "timeout", "dns", "connection", "tls", "network"} {
			require.True(t, delivery.OriginDown(svc.class(r)), "%s_%s", svc.name, r)
		}
		for _, r := range []string{"rate_limited", "http_4xx", "redirect", "invalid_url", "blocked_destination", "http_other"} {
			require.False(t, delivery.OriginDown(svc.class(r)), "%s_%s", svc.name, r)
		}
	}
}
