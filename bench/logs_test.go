package main

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The emulator's lines around two of herald's (an EMF batch line and a
// record line), as the emulator prints them.
const emulatorSample = `01 Dec 2026 15:37:06,584 [INFO] (rapid) exec '/tmp/noop' (cwd=/w, handler=)
START RequestId: a41bdf60-75e7-462c-a768-1b99a9fe69f9 Version: $LATEST
01 Dec 2026 15:37:07,639 [INFO] (rapid) INVOKE START(requestId: a41bdf60-75e7-462c-a768-1b99a9fe69f9)
{"msg":"batch","_aws":{"Timestamp":1796139898680,"CloudWatchMetrics":[{"Namespace":"Herald","Dimensions":[["channel","outcome"],["channel","error_class"]],"Metrics":[{"Name":"Notifications","Unit":"Count"}]},{"Namespace":"Herald","Dimensions":[["function"]],"Metrics":[{"Name":"BatchRecords","Unit":"Count"}]}]},"Notifications":1,"channel":"webhook","outcome":"retry","error_class":"webhook_http_5xx","BatchRecords":1,"function":"deliver"}
{"msg":"notification","id":"a"}
01 Dec 2026 15:37:07,640 [WARNING] (rapid) INVOKE RTDONE(status: success, produced bytes: 0, duration: 1.169000ms)
END RequestId: a41bdf60-75e7-462c-a768-1b99a9fe69f9
REPORT RequestId: a41bdf60-75e7-462c-a768-1b99a9fe69f9	Duration: 0.78 ms	Billed Duration: 1 ms	Memory Size: 128 MB	Max Memory Used: 128 MB	
2026-12-01T15:37:07.641Z	a41bdf60	INFO	a Node console line
`

// TestFunctionLogBytesLeavesOutTheEmulator: only the function's own lines
// count, each with its newline; the emulator's and Lambda's START, END and
// REPORT lines do not.
func TestFunctionLogBytesLeavesOutTheEmulator(t *testing.T) {
	t.Parallel()
	lines := functionLines(emulatorSample)
	require.Len(t, lines, 3)
	require.Equal(t, `{"msg":"notification","id":"a"}`, lines[1])
	want := 0
	for _, l := range lines {
		want += len(l) + 1
	}
	require.Equal(t, want, functionLogBytes(emulatorSample))
	require.Zero(t, functionLogBytes("START RequestId: x Version: $LATEST\nEND RequestId: x\n"))
}

// TestMetricSeriesCountsEachDimensionSet: one custom metric per metric
// name, dimension set and values, each once however often it is written.
func TestMetricSeriesCountsEachDimensionSet(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	metricSeries(emulatorSample+emulatorSample, seen)
	require.Equal(t, []string{
		"Herald/BatchRecords{function=deliver}",
		"Herald/Notifications{channel=webhook,error_class=webhook_http_5xx}",
		"Herald/Notifications{channel=webhook,outcome=retry}",
	}, slices.Sorted(maps.Keys(seen)))
}
