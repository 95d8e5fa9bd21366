package metrics_test

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
)

// TestTemplateNamesHeraldMetrics checks that the alarms and the dashboard
// in template.yaml name only metrics and dimensions this package writes, so
// a renamed metric cannot leave an alarm watching nothing.
func TestTemplateNamesHeraldMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	tpl := string(raw)
	names := []string{
		metrics.Notifications, metrics.DeliveryDuration, metrics.AgeAtDelivery, metrics.AgeSinceCreated,
		metrics.ReceiveCountAtDelivery, metrics.ReceiveCountAtRetry, metrics.DeadLetters, metrics.DeadLettersTooLarge, metrics.DeadLettersWithoutReason, metrics.Retries,
		metrics.Paused, metrics.DeadLettersDeleted, metrics.DeadLettersKept, metrics.StoreErrors, metrics.DestinationsDisabled,
	}
	dims := []string{metrics.DimChannel, metrics.DimOutcome, metrics.DimErrorClass, metrics.DimFunction}

	var found []string
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`\["Herald", "(\w+)"`),                   // dashboard metric
		regexp.MustCompile(`MetricName=\\"(\w+)\\"`),                // dashboard SEARCH
		regexp.MustCompile(`Namespace: Herald\s+MetricName: (\w+)`), // alarm
	} {
		for _, m := range re.FindAllStringSubmatch(tpl, -1) {
			found = append(found, m[1])
			require.Contains(t, names, m[1], "template.yaml names a metric herald does not write")
		}
	}
	require.Contains(t, found, metrics.Paused, "the paused alarm")
	require.Contains(t, found, metrics.Notifications)

	for _, m := range regexp.MustCompile(`\{Herald,([\w,]+)\}`).FindAllStringSubmatch(tpl, -1) {
		for _, d := range regexp.MustCompile(`\w+`).FindAllString(m[1], -1) {
			require.Contains(t, dims, d, "SEARCH names an unknown dimension")
		}
	}
	alarmDims := regexp.MustCompile(`Namespace: Herald\s+MetricName: \w+\s+Dimensions:\s+- Name: (\w+)`).FindAllStringSubmatch(tpl, -1)
	require.NotEmpty(t, alarmDims)
	for _, m := range alarmDims {
		require.True(t, slices.Contains(dims, m[1]), "alarm dimension %q", m[1])
	}
}
