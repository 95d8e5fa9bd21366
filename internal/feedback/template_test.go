package feedback_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/feedback"
	"github.com/heraldhq/herald/internal/testkit/templatetest"
)

// TestTemplateAgreesWithEventTypes: the configuration set's event
// destination publishes, and FeedbackFunction's rule matches, exactly the
// event types package feedback knows; the rule takes emails with herald's
// id tag.
func TestTemplateAgreesWithEventTypes(t *testing.T) {
	t.Parallel()
	root := templatetest.Root(t)
	resources := templatetest.Path(root, "Resources")

	var matching, detailTypes []string
	for _, k := range feedback.EventTypes {
		matching = append(matching, k.Matching)
		detailTypes = append(detailTypes, k.DetailType)
	}
	require.ElementsMatch(t, matching,
		templatetest.Scalars(t, templatetest.Path(resources, "EmailEventDestination", "Properties", "EventDestination", "MatchingEventTypes")))

	pattern := templatetest.Path(resources, "FeedbackFunction", "Properties", "Events", "EmailEvents", "Properties", "Pattern")
	require.Equal(t, []string{feedback.SourceSES}, templatetest.Scalars(t, templatetest.Child(pattern, "source")))
	require.ElementsMatch(t, detailTypes, templatetest.Scalars(t, templatetest.Child(pattern, "detail-type")))
	require.NotNil(t, templatetest.Path(pattern, "detail", "mail", "tags", email.IDTag), "the rule matches herald's id tag")
}

// TestTemplateSendsThroughHeraldsConfigurationSet: without
// ConfigurationSetName the deliver function's default configuration set
// (HERALD_EMAIL_CONFIGURATION_SET) is the one the stack creates, with
// suppression of bounces and complaints, and its role may send through it.
func TestTemplateSendsThroughHeraldsConfigurationSet(t *testing.T) {
	t.Parallel()
	root := templatetest.Root(t)
	resources := templatetest.Path(root, "Resources")

	env := templatetest.Path(resources, "DeliverFunction", "Properties", "Environment", "Variables", "HERALD_EMAIL_CONFIGURATION_SET")
	require.NotNil(t, env)
	require.Equal(t, "!If", env.Tag)
	require.Equal(t, []string{"CreateConfigurationSet", "EmailConfigurationSet", "ConfigurationSetName"}, templatetest.Scalars(t, env))
	require.Equal(t, []string{"BOUNCE", "COMPLAINT"},
		templatetest.Scalars(t, templatetest.Path(resources, "EmailConfigurationSet", "Properties", "SuppressionOptions", "SuppressedReasons")))
	require.Contains(t, string(templatetest.Raw(t)), ":configuration-set/${EmailConfigurationSet}", "ses:SendEmail on the stack's set")
}

// TestTemplateKeepsEventsTheFunctionDidNotLog: an SES event that EventBridge
// could not deliver to the function (after its retry policy) and one whose
// invocation failed (after Lambda's retries) both end in the feedback
// dead-letter queue, which EventBridge may write to for this account's rules, the
// function's role may write to, and an alarm watches.
func TestTemplateKeepsEventsTheFunctionDidNotLog(t *testing.T) {
	t.Parallel()
	root := templatetest.Root(t)
	resources := templatetest.Path(root, "Resources")
	const queue = "FeedbackDeadLetterQueue"
	require.Equal(t, "AWS::SQS::Queue", templatetest.Path(resources, queue, "Type").Value)
	queueArn := func(n *yaml.Node) {
		t.Helper()
		require.NotNil(t, n)
		require.Equal(t, "!GetAtt", n.Tag)
		require.Equal(t, queue+".Arn", n.Value)
	}

	rule := templatetest.Path(resources, "FeedbackFunction", "Properties", "Events", "EmailEvents", "Properties")
	queueArn(templatetest.Path(rule, "DeadLetterConfig", "Arn"))
	retries := templatetest.Path(rule, "RetryPolicy", "MaximumRetryAttempts")
	require.NotNil(t, retries, "the rule's target has a retry policy")
	require.NotEqual(t, "0", retries.Value)
	require.NotNil(t, templatetest.Path(rule, "RetryPolicy", "MaximumEventAgeInSeconds"))

	fn := templatetest.Path(resources, "FeedbackFunction", "Properties")
	require.Equal(t, "SQS", templatetest.Path(fn, "DeadLetterQueue", "Type").Value)
	queueArn(templatetest.Path(fn, "DeadLetterQueue", "TargetArn"))

	var policyOK bool
	for _, st := range templatetest.Path(resources, "FeedbackDeadLetterQueuePolicy", "Properties", "PolicyDocument", "Statement").Content {
		if templatetest.Path(st, "Principal", "Service").Value == "events.amazonaws.com" && templatetest.Child(st, "Action").Value == "sqs:SendMessage" {
			queueArn(templatetest.Child(st, "Resource"))
			require.Equal(t, "AWS::AccountId", templatetest.Path(st, "Condition", "StringEquals", "aws:SourceAccount").Value, "for this account's rules only")
			require.Contains(t, templatetest.Path(st, "Condition", "ArnLike", "aws:SourceArn").Value, ":events:${AWS::Region}:${AWS::AccountId}:rule/")
			policyOK = true
		}
	}
	require.True(t, policyOK, "the queue policy lets EventBridge send")
	require.Equal(t, queue, templatetest.Path(resources, "FeedbackDeadLetterQueuePolicy", "Properties", "Queues").Content[0].Value)

	var roleOK bool
	for _, pol := range templatetest.Path(resources, "FeedbackFunctionRole", "Properties", "Policies").Content {
		for _, st := range templatetest.Path(pol, "PolicyDocument", "Statement").Content {
			if templatetest.Child(st, "Action").Value == "sqs:SendMessage" {
				queueArn(templatetest.Child(st, "Resource"))
				roleOK = true
			}
		}
	}
	require.True(t, roleOK, "the function's role may write its failed invocations")

	alarm := templatetest.Path(resources, "FeedbackDeadLettersAlarm", "Properties")
	require.Equal(t, "ApproximateNumberOfMessagesVisible", templatetest.Child(alarm, "MetricName").Value)
	require.Equal(t, queue+".QueueName", templatetest.Path(alarm, "Dimensions").Content[0].Content[3].Value)
	require.Equal(t, "1", templatetest.Child(alarm, "Threshold").Value)
}
