package webhook_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/webhook"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 1, 1, 0, 0, 0, 250_000_000, time.UTC)
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{value: "120", want: 120 * time.Second, wantOK: true},
		{value: " 120\t", want: 120 * time.Second, wantOK: true},
		{value: "0", want: 0, wantOK: true},
		{value: "000042", want: 42 * time.Second, wantOK: true},
		{value: "43200", want: 12 * time.Hour, wantOK: true},
		{value: "43201", want: 12 * time.Hour, wantOK: true},
		{value: "99999999999999999999999999", want: 12 * time.Hour, wantOK: true},
		{value: "Thu, 01 Jan 2026 00:01:30 GMT", want: 90*time.Second - 250*time.Millisecond, wantOK: true},    // IMF-fixdate
		{value: "Thursday, 01-Jan-26 00:01:30 GMT", want: 90*time.Second - 250*time.Millisecond, wantOK: true}, // RFC 850
		{value: "Thu Jan  1 00:01:30 2026", want: 90*time.Second - 250*time.Millisecond, wantOK: true},         // asctime
		{value: "Wed, 31 Dec 2025 23:00:00 GMT", want: 0, wantOK: true},                                        // past
		{value: "Fri, 01 Jan 2027 00:00:00 GMT", want: 12 * time.Hour, wantOK: true},                           // absurd
		{value: ""},
		{value: "   "},
		{value: "-30"},
		{value: "+30"},
		{value: "1.5"},
		{value: "1e3"},
		{value: "soon"},
		{value: "120 seconds"},
		{value: "Thu, 01 Jan 2026 00:01:30 GMT extra"},
		{value: "2026-01-01T00:01:30Z"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Parallel()

			got, ok := webhook.ParseRetryAfter(tt.value, now)
			require.Equal(t, tt.wantOK, ok)
			require.Equal(t, tt.want, got)
		})
	}
}
