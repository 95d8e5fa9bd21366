package metrics_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
)

// TestPausedEntry: a channel's pause is 1 by function and channel, a pause
// of everything 1 by function alone, a batch delivered 0 by both (so each
// paused alarm returns to OK), always the deliver function's.
func TestPausedEntry(t *testing.T) {
	t.Parallel()
	at := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		channel string
		paused  bool
		value   float64
		sets    [][]string
	}{
		{"email", true, 1, [][]string{{metrics.DimFunction, metrics.DimChannel}}},
		{"", true, 1, [][]string{{metrics.DimFunction}}},
		{"chat", false, 0, [][]string{{metrics.DimFunction}, {metrics.DimFunction, metrics.DimChannel}}},
		{"", false, 0, [][]string{{metrics.DimFunction}, {metrics.DimFunction, metrics.DimChannel}}},
	} {
		e := metrics.PausedEntry(at, tc.channel, tc.paused)
		require.Equal(t, at, e.Time)
		require.Equal(t, []metrics.Dimension{{Name: metrics.DimFunction, Value: "deliver"}, {Name: metrics.DimChannel, Value: tc.channel}}, e.Dimensions)
		require.Equal(t, []metrics.Metric{{Name: metrics.Paused, Unit: metrics.Count, Value: tc.value}}, e.Metrics, "%+v", tc)
		require.Equal(t, tc.sets, e.Sets, "%+v", tc)
	}
}
