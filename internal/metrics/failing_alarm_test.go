package metrics_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/notification"
)

func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = child(n, k)
	}
	return n
}

// alarmDimension returns, for each metric of a metric-math alarm, the value
// of its dimension dim, after checking that every metric is herald's
// ReceiveCountAtRetry at its maximum over 5 minutes, that the one
// expression takes the highest of them all, and that the alarm compares it
// with FailingAlarmReceiveCount.
func alarmDimension(t *testing.T, alarm *yaml.Node, dim string) []string {
	t.Helper()
	props := child(alarm, "Properties")
	require.NotNil(t, props)
	require.Equal(t, "FailingAlarmReceiveCount", child(props, "Threshold").Value)
	require.Equal(t, "!Ref", child(props, "Threshold").Tag)
	require.Equal(t, "GreaterThanOrEqualToThreshold", child(props, "ComparisonOperator").Value)
	require.Equal(t, "notBreaching", child(props, "TreatMissingData").Value)
	var ids, values []string
	var expression string
	for _, m := range child(props, "Metrics").Content {
		if e := child(m, "Expression"); e != nil {
			require.Equal(t, "true", child(m, "ReturnData").Value)
			expression = e.Value
			continue
		}
		require.Equal(t, "false", child(m, "ReturnData").Value)
		ids = append(ids, child(m, "Id").Value)
		stat := child(m, "MetricStat")
		require.Equal(t, "Maximum", child(stat, "Stat").Value)
		require.Equal(t, "300", child(stat, "Period").Value)
		metric := child(stat, "Metric")
		require.Equal(t, metrics.Namespace, child(metric, "Namespace").Value)
		require.Equal(t, metrics.ReceiveCountAtRetry, child(metric, "MetricName").Value)
		for _, d := range child(metric, "Dimensions").Content {
			if child(d, "Name").Value == dim {
				values = append(values, child(d, "Value").Value)
			}
		}
	}
	want := "MAX(["
	for i, id := range ids {
		if i > 0 {
			want += ", "
		}
		want += id
	}
	require.Equal(t, want+"])", expression, "the highest of every metric")
	require.Len(t, values, len(ids), "each metric names its %s", dim)
	return values
}

// TestFailingAlarms: the failing alarm watches ReceiveCountAtRetry in every
// channel herald delivers, the ses-failing alarm the email classes where SES
// itself fails (the transient ses_* classes of package email), and with the
// default backoff a notification reaches FailingAlarmReceiveCount soon
// enough that the alarm fires within 30 minutes of its first failure: the
// attempts' waits (jitter only shortens them), one 5-minute period, and 5
// minutes for the log line to become a metric and the alarm to evaluate.
func TestFailingAlarms(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	resources := path(doc.Content[0], "Resources")

	var channels []string
	for _, c := range notification.Channels {
		channels = append(channels, string(c))
	}
	require.ElementsMatch(t, channels, alarmDimension(t, child(resources, "FailingNotificationsAlarm"), metrics.DimChannel))
	require.ElementsMatch(t, []string{
		string(email.ClassThrottled), string(email.ClassLimitExceeded), string(email.ClassServerError),
		string(email.ClassNetwork), string(email.ClassSendingPaused),
	}, alarmDimension(t, child(resources, "SesFailingAlarm"), metrics.DimErrorClass))

	params := path(doc.Content[0], "Parameters")
	count, err := strconv.Atoi(path(params, "FailingAlarmReceiveCount", "Default").Value)
	require.NoError(t, err)
	maxReceive, err := strconv.Atoi(path(params, "MaxReceiveCount", "Default").Value)
	require.NoError(t, err)
	require.Less(t, count, maxReceive, "the receive count must be one that is retried, not dead-lettered")
	require.GreaterOrEqual(t, count, 4, "below 4 it fires on failures SQS still shows in the backlog age")
	base, err := strconv.Atoi(path(params, "BackoffBaseSeconds", "Default").Value)
	require.NoError(t, err)
	capSeconds, err := strconv.Atoi(path(params, "BackoffCapSeconds", "Default").Value)
	require.NoError(t, err)
	p := backoff.Policy{Base: time.Duration(base) * time.Second, Cap: time.Duration(capSeconds) * time.Second}.WithDefaults()
	require.LessOrEqual(t, p.Total(count)+5*time.Minute+5*time.Minute, 30*time.Minute)
}
