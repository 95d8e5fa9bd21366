package metrics_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/templatetest"
)

// TestEveryFunctionHasItsOwnAlarms: each function of template.yaml has an
// alarm on its own AWS/Lambda Errors, and each function that events invoke
// (the deliver function from its queues, the fan-out function from the
// event queue, the feedback function from SES's events) one on its
// Throttles: a function whose failures only show once
// its retries are used up (the feedback dead-letter queue, a day of
// receives) is seen at its first failure. The hourly retention function
// runs again the next hour, and the endpoints API's callers see a throttle
// themselves (and retry): Errors only.
func TestEveryFunctionHasItsOwnAlarms(t *testing.T) {
	t.Parallel()
	resources := templatetest.Path(templatetest.Root(t), "Resources")
	// watched[metric][function] is the alarm watching it.
	watched := map[string]map[string]string{"Errors": {}, "Throttles": {}}
	var functions []string
	for i := 0; i+1 < len(resources.Content); i += 2 {
		name, res := resources.Content[i].Value, resources.Content[i+1]
		switch templatetest.Child(res, "Type").Value {
		case "AWS::Serverless::Function":
			functions = append(functions, name)
		case "AWS::CloudWatch::Alarm":
			props := templatetest.Child(res, "Properties")
			if ns := templatetest.Child(props, "Namespace"); ns == nil || ns.Value != "AWS/Lambda" {
				continue
			}
			dims := templatetest.Child(props, "Dimensions")
			require.Len(t, dims.Content, 1, "%s: one dimension, FunctionName", name)
			require.Equal(t, "FunctionName", templatetest.Child(dims.Content[0], "Name").Value, name)
			value := templatetest.Child(dims.Content[0], "Value")
			require.Equal(t, "!Ref", value.Tag, "%s: the function by !Ref", name)
			metric := templatetest.Child(props, "MetricName").Value
			require.Contains(t, watched, metric, "%s: an AWS/Lambda metric of this rule", name)
			watched[metric][value.Value] = name
		}
	}
	require.ElementsMatch(t, []string{"DeliverFunction", "RetentionFunction", "FeedbackFunction", "FanoutFunction", "EndpointsFunction"}, functions, "a new function needs its alarms here")
	for _, fn := range functions {
		require.Contains(t, watched["Errors"], fn, "no alarm on %s's Errors", fn)
	}
	for _, fn := range []string{"DeliverFunction", "FeedbackFunction", "FanoutFunction"} {
		require.Contains(t, watched["Throttles"], fn, "no alarm on %s's Throttles", fn)
	}
}
