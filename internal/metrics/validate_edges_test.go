package metrics_test

import (
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
