package metrics_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
)

// TestValidateAcceptsTheEdges: what EMF allows at its edges passes: a
// timestamp of 0 (the epoch) when no clock is given, a name of exactly
// MaxNameLength characters, and the first and last printable ASCII
// characters (space, ~) in a name; one character more, or a control or
// DEL character, is refused.
func TestValidateAcceptsTheEdges(t *testing.T) {
	t.Parallel()
	line := func(ts, metric string) []byte {
		return []byte(`{"_aws":{"Timestamp":` + ts + `,"CloudWatchMetrics":[{"Namespace":"Herald","Dimensions":[],"Metrics":[{"Name":"` + metric + `","Unit":"Count"}]}]},"` + metric + `":1}`)
	}
	require.NoError(t, metrics.Validate(line("0", "N"), time.Time{}), "the epoch")
	require.Error(t, metrics.Validate(line("-1", "N"), time.Time{}))
	require.NoError(t, metrics.Validate(line("1", strings.Repeat("n", metrics.MaxNameLength)), time.Time{}))
	require.Error(t, metrics.Validate(line("1", strings.Repeat("n", metrics.MaxNameLength+1)), time.Time{}))
	require.NoError(t, metrics.Validate(line("1", "a b~"), time.Time{}), "space and ~ are printable")
	require.Error(t, metrics.Validate(line("1", "a\\u001fb"), time.Time{}), "0x1F is a control character")
	require.Error(t, metrics.Validate(line("1", "a\\u007fb"), time.Time{}), "DEL is not printable")
}

// TestValidateTimestampWindowAndDimensionValue: a timestamp exactly
// MaxTimestampFuture after now or MaxTimestampPast before it passes, a
// millisecond beyond either is refused; a dimension value of exactly
// MaxDimensionValueLength characters passes, one more is refused.
func TestValidateTimestampWindowAndDimensionValue(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_800_000_000_000)
	line := func(ts time.Time, value string) []byte {
		return []byte(fmt.Sprintf(`{"_aws":{"Timestamp":%d,"CloudWatchMetrics":[{"Namespace":"Herald","Dimensions":[["D"]],"Metrics":[{"Name":"N","Unit":"Count"}]}]},"D":%q,"N":1}`, ts.UnixMilli(), value))
	}
	require.NoError(t, metrics.Validate(line(now.Add(metrics.MaxTimestampFuture), "v"), now))
	require.Error(t, metrics.Validate(line(now.Add(metrics.MaxTimestampFuture+time.Millisecond), "v"), now))
	require.NoError(t, metrics.Validate(line(now.Add(time.Hour), "v"), now), "an hour ahead")
	require.NoError(t, metrics.Validate(line(now.Add(-metrics.MaxTimestampPast), "v"), now))
	require.Error(t, metrics.Validate(line(now.Add(-metrics.MaxTimestampPast-time.Millisecond), "v"), now))
	require.NoError(t, metrics.Validate(line(now, strings.Repeat("v", metrics.MaxDimensionValueLength)), now))
	require.Error(t, metrics.Validate(line(now, strings.Repeat("v", metrics.MaxDimensionValueLength+1)), now))
}
