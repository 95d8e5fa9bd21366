package feedback_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/feedback"
)

// child returns the value of key in mapping node n, or nil.
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

func scalars(t *testing.T, n *yaml.Node) []string {
	t.Helper()
	require.NotNil(t, n)
	require.Equal(t, yaml.SequenceNode, n.Kind)
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

// TestTemplateAgreesWithEventTypes: the configuration set's event
// destination publishes, and FeedbackFunction's rule matches, exactly the
// event types package feedback knows; the rule takes emails with herald's
// id tag.
func TestTemplateAgreesWithEventTypes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	resources := path(doc.Content[0], "Resources")

	var matching, detailTypes []string
	for _, k := range feedback.EventTypes {
		matching = append(matching, k.Matching)
		detailTypes = append(detailTypes, k.DetailType)
	}
	require.ElementsMatch(t, matching,
		scalars(t, path(resources, "EmailEventDestination", "Properties", "EventDestination", "MatchingEventTypes")))

	pattern := path(resources, "FeedbackFunction", "Properties", "Events", "EmailEvents", "Properties", "Pattern")
	require.Equal(t, []string{feedback.SourceSES}, scalars(t, child(pattern, "source")))
	require.ElementsMatch(t, detailTypes, scalars(t, child(pattern, "detail-type")))
	require.NotNil(t, path(pattern, "detail", "mail", "tags", email.IDTag), "the rule matches herald's id tag")
}

// TestTemplateSendsThroughHeraldsConfigurationSet: without
// ConfigurationSetName the deliver function's default configuration set
// (HERALD_EMAIL_CONFIGURATION_SET) is the one the stack creates, with
// suppression of bounces and complaints, and its role may send through it.
func TestTemplateSendsThroughHeraldsConfigurationSet(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	resources := path(doc.Content[0], "Resources")

	env := path(resources, "DeliverFunction", "Properties", "Environment", "Variables", "HERALD_EMAIL_CONFIGURATION_SET")
	require.NotNil(t, env)
	require.Equal(t, "!If", env.Tag)
	require.Equal(t, []string{"CreateConfigurationSet", "EmailConfigurationSet", "ConfigurationSetName"}, scalars(t, env))
	require.Equal(t, []string{"BOUNCE", "COMPLAINT"},
		scalars(t, path(resources, "EmailConfigurationSet", "Properties", "SuppressionOptions", "SuppressedReasons")))
	require.Contains(t, string(raw), ":configuration-set/${EmailConfigurationSet}", "ses:SendEmail on the stack's set")
}

// TestTemplateKeepsEventsTheFunctionDidNotLog: an SES event that EventBridge
// could not deliver to the function (after its retry policy) and one whose
// invocation failed (after Lambda's retries) both end in the feedback
// dead-letter queue, which EventBridge may write to for this account's rules, the
// function's role may write to, and an alarm watches.
func TestTemplateKeepsEventsTheFunctionDidNotLog(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	resources := path(doc.Content[0], "Resources")
	const queue = "FeedbackDeadLetterQueue"
	require.Equal(t, "AWS::SQS::Queue", path(resources, queue, "Type").Value)
	queueArn := func(n *yaml.Node) {
		t.Helper()
		require.NotNil(t, n)
		require.Equal(t, "!GetAtt", n.Tag)
		require.Equal(t, queue+".Arn", n.Value)
	}

	rule := path(resources, "FeedbackFunction", "Properties", "Events", "EmailEvents", "Properties")
	queueArn(path(rule, "DeadLetterConfig", "Arn"))
	retries := path(rule, "RetryPolicy", "MaximumRetryAttempts")
	require.NotNil(t, retries, "the rule's target has a retry policy")
	require.NotEqual(t, "0", retries.Value)
	require.NotNil(t, path(rule, "RetryPolicy", "MaximumEventAgeInSeconds"))

	fn := path(resources, "FeedbackFunction", "Properties")
	require.Equal(t, "SQS", path(fn, "DeadLetterQueue", "Type").Value)
	queueArn(path(fn, "DeadLetterQueue", "TargetArn"))

	var policyOK bool
	for _, st := range path(resources, "FeedbackDeadLetterQueuePolicy", "Properties", "PolicyDocument", "Statement").Content {
		if path(st, "Principal", "Service").Value == "events.amazonaws.com" && child(st, "Action").Value == "sqs:SendMessage" {
			queueArn(child(st, "Resource"))
			require.Equal(t, "AWS::AccountId", path(st, "Condition", "StringEquals", "aws:SourceAccount").Value, "for this account's rules only")
			require.Contains(t, path(st, "Condition", "ArnLike", "aws:SourceArn").Value, ":events:${AWS::Region}:${AWS::AccountId}:rule/")
			policyOK = true
		}
	}
	require.True(t, policyOK, "the queue policy lets EventBridge send")
	require.Equal(t, queue, path(resources, "FeedbackDeadLetterQueuePolicy", "Properties", "Queues").Content[0].Value)

	var roleOK bool
	for _, pol := range path(resources, "FeedbackFunctionRole", "Properties", "Policies").Content {
		for _, st := range path(pol, "PolicyDocument", "Statement").Content {
			if child(st, "Action").Value == "sqs:SendMessage" {
				queueArn(child(st, "Resource"))
				roleOK = true
			}
		}
	}
	require.True(t, roleOK, "the function's role may write its failed invocations")

	alarm := path(resources, "FeedbackDeadLettersAlarm", "Properties")
	require.Equal(t, "ApproximateNumberOfMessagesVisible", child(alarm, "MetricName").Value)
	require.Equal(t, queue+".QueueName", path(alarm, "Dimensions").Content[0].Content[3].Value)
	require.Equal(t, "1", child(alarm, "Threshold").Value)
}
