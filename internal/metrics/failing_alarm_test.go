package metrics_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/testkit/templatetest"
	"github.com/heraldhq/herald/notification"
)

// alarmDimension returns, for each metric of a metric-math alarm, the value
// of its dimension dim, after checking that every metric is herald's
// ReceiveCountAtRetry at its maximum over 5 minutes, that the one
// expression takes the highest of them all, and that the alarm compares it
// with FailingAlarmReceiveCount.
func alarmDimension(t *testing.T, alarm *yaml.Node, dim string) []string {
	t.Helper()
	props := templatetest.Child(alarm, "Properties")
	require.NotNil(t, props)
	require.Equal(t, "FailingAlarmReceiveCount", templatetest.Child(props, "Threshold").Value)
	require.Equal(t, "!Ref", templatetest.Child(props, "Threshold").Tag)
	require.Equal(t, "GreaterThanOrEqualToThreshold", templatetest.Child(props, "ComparisonOperator").Value)
	require.Equal(t, "notBreaching", templatetest.Child(props, "TreatMissingData").Value)
	var ids, values []string
	var expression string
	for _, m := range templatetest.Child(props, "Metrics").Content {
		if e := templatetest.Child(m, "Expression"); e != nil {
			require.Equal(t, "true", templatetest.Child(m, "ReturnData").Value)
			expression = e.Value
			continue
		}
		require.Equal(t, "false", templatetest.Child(m, "ReturnData").Value)
		ids = append(ids, templatetest.Child(m, "Id").Value)
		stat := templatetest.Child(m, "MetricStat")
		require.Equal(t, "Maximum", templatetest.Child(stat, "Stat").Value)
		require.Equal(t, "300", templatetest.Child(stat, "Period").Value)
		metric := templatetest.Child(stat, "Metric")
		require.Equal(t, metrics.Namespace, templatetest.Child(metric, "Namespace").Value)
		require.Equal(t, metrics.ReceiveCountAtRetry, templatetest.Child(metric, "MetricName").Value)
		for _, d := range templatetest.Child(metric, "Dimensions").Content {
			if templatetest.Child(d, "Name").Value == dim {
				values = append(values, templatetest.Child(d, "Value").Value)
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
	root := templatetest.Root(t)
	resources := templatetest.Path(root, "Resources")

	var channels []string
	for _, c := range notification.Channels {
		channels = append(channels, string(c))
	}
	require.ElementsMatch(t, channels, alarmDimension(t, templatetest.Child(resources, "FailingNotificationsAlarm"), metrics.DimChannel))
	require.ElementsMatch(t, []string{
		string(email.ClassThrottled), string(email.ClassLimitExceeded), string(email.ClassServerError),
		string(email.ClassNetwork), string(email.ClassSendingPaused),
	}, alarmDimension(t, templatetest.Child(resources, "SesFailingAlarm"), metrics.DimErrorClass))

	params := templatetest.Path(root, "Parameters")
	count, err := strconv.Atoi(templatetest.Path(params, "FailingAlarmReceiveCount", "Default").Value)
	require.NoError(t, err)
	maxReceive, err := strconv.Atoi(templatetest.Path(params, "MaxReceiveCount", "Default").Value)
	require.NoError(t, err)
	require.Less(t, count, maxReceive, "the receive count must be one that is retried, not dead-lettered")
	require.GreaterOrEqual(t, count, 4, "below 4 it fires on failures SQS still shows in the backlog age")
	base, err := strconv.Atoi(templatetest.Path(params, "BackoffBaseSeconds", "Default").Value)
	require.NoError(t, err)
	capSeconds, err := strconv.Atoi(templatetest.Path(params, "BackoffCapSeconds", "Default").Value)
	require.NoError(t, err)
	p := backoff.Policy{Base: time.Duration(base) * time.Second, Cap: time.Duration(capSeconds) * time.Second}.WithDefaults()
	require.LessOrEqual(t, p.Total(count)+5*time.Minute+5*time.Minute, 30*time.Minute)
}
