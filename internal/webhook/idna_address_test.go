package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
)

// TestSendAddressSpelledInFullWidth: a host that IDNA maps to an IPv4
// address (full-width digits, the ideographic full stop) is that address,
// as net/http dials it after the same mapping: judged before anything is
// resolved or dialled, permanently, like its ASCII spelling, and not left
// to a DNS lookup whose failure would be retried for hours.
func TestSendAddressSpelledInFullWidth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host  string
		class delivery.Class
	}{
		{"１２７．０．０．１", webhook.ClassBlockedDestination},       // 127.0.0.1
		{"１２７。０。０。１", webhook.ClassBlockedDestination},       // ideographic full stops
		{"１６９．２５４．１６９．２５４", webhook.ClassBlockedDestination}, // the metadata service
		{"０ｘ７ｆ．１", webhook.ClassBlockedDestination},          // 0x7f.1, blocked whatever its spelling
		{"２１３０７０６４３３", webhook.ClassBlockedDestination},      // 2130706433
		{"８．８．８．８", webhook.ClassInvalidURL},                 // reachable, but not written in dotted decimal
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			t.Parallel()
			var dials dialLog
			s := newSender(t, nil, func(c *webhook.Config) { c.AllowCIDRs = nil })
			webhook.SetDialHook(s, dials.hook)
			start := time.Now()
			err := s.Send(context.Background(), message("https://"+tt.host+"/hook"))
			requireOutcome(t, err, true, tt.class)
			dialed, _ := dials.get()
			require.Empty(t, dialed, "judged by its address: nothing resolved or dialled")
			require.Less(t, time.Since(start), time.Second)
		})
	}
}
