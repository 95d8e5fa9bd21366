package outbound_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/outbound"
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

			got, ok := outbound.ParseRetryAfter(tt.value, now)
			require.Equal(t, tt.wantOK, ok)
			require.Equal(t, tt.want, got)
		})
	}
}

// FuzzParseRetryAfter: whatever the header and the clock, ParseRetryAfter
// does not panic, its delay lies within [0, MaxRetryAfter], and a value it
// rejects gives no delay.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 250_000_000, time.UTC)
	for _, v := range []string{
		"120", " 120\t", "0", "000042", "43200", "43201", "99999999999999999999999999",
		"Thu, 01 Jan 2026 00:01:30 GMT", "Thursday, 01-Jan-26 00:01:30 GMT", "Thu Jan  1 00:01:30 2026",
		"Wed, 31 Dec 2025 23:00:00 GMT", "Fri, 01 Jan 2027 00:00:00 GMT", "Mon, 01 Jan 0001 00:00:00 GMT",
		"", "   ", "-30", "+30", "1.5", "1e3", "soon", "120 seconds", "2026-01-01T00:01:30Z",
	} {
		f.Add(v, now.UnixNano())
	}
	f.Add("Fri, 31 Dec 9999 23:59:59 GMT", int64(0))
	f.Add("Mon, 01 Jan 0001 00:00:00 GMT", int64(math.MaxInt64))

	f.Fuzz(func(t *testing.T, v string, nowNanos int64) {
		d, ok := outbound.ParseRetryAfter(v, time.Unix(0, nowNanos))
		if d < 0 || d > outbound.MaxRetryAfter {
			t.Fatalf("ParseRetryAfter(%q) = %v, want within [0, %v]", v, d, outbound.MaxRetryAfter)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) rejected the value but returned %v", v, d)
		}
	})
}
