package metrics_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
)

// TestEachSetHasItsOwnLimit: MaxDimensionsPerSet counts the names of one
// set, not those of the sets before it: a second set of exactly 30 names
// after a set of one keeps all 30; one more is cut.
func TestEachSetHasItsOwnLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	e := metrics.Entry{Time: now, Metrics: []metrics.Metric{{Name: "A", Unit: metrics.Count, Value: 1}}}
	var many []string
	for i := range metrics.MaxDimensionsPerSet + 1 {
		name := "d" + strings.Repeat("x", i)
		e.Dimensions = append(e.Dimensions, metrics.Dimension{Name: name, Value: "v"})
		many = append(many, name)
	}
	e.Sets = [][]string{{many[0]}, many[:metrics.MaxDimensionsPerSet], many}
	out := line(t, e)
	require.NoError(t, metrics.Validate(out, now), string(out))
	var got struct {
		AWS struct {
			CloudWatchMetrics []struct{ Dimensions [][]string }
		} `json:"_aws"`
	}
	require.NoError(t, json.Unmarshal(out, &got))
	require.Len(t, got.AWS.CloudWatchMetrics, 1)
	dims := got.AWS.CloudWatchMetrics[0].Dimensions
	require.Len(t, dims, 3)
	require.Equal(t, []string{many[0]}, dims[0])
	require.Equal(t, many[:metrics.MaxDimensionsPerSet], dims[1])
	require.Equal(t, many[:metrics.MaxDimensionsPerSet], dims[2], "cut to the first 30")
}
