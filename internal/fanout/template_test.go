package fanout_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/testkit/templatetest"
)

// statements are the fan-out function role's policy statements by Sid.
func statements(t *testing.T, res *yaml.Node) map[string]*yaml.Node {
	t.Helper()
	out := map[string]*yaml.Node{}
	for _, p := range templatetest.Path(res, "FanoutFunctionRole", "Properties", "Policies").Content {
		for _, st := range templatetest.Path(p, "PolicyDocument", "Statement").Content {
			sid := templatetest.Child(st, "Sid")
			require.NotNil(t, sid, "every statement of FanoutFunctionRole has a Sid")
			require.Equal(t, "Allow", templatetest.Child(st, "Effect").Value)
			out[sid.Value] = st
		}
	}
	return out
}

// TestTemplateFanoutFunction: template.yaml gives the fan-out function what
// it calls and no more (LocalStack does not enforce IAM, so this test and
// cfn-lint are what check it): Query on the tenant index only; GetItem of
// progress and endpoint items, PutItem of progress items only (leading
// keys); Decrypt of data keys bound to an endpoint id; SendMessage to the
// webhook, chat and event queues and the event dead-letter queue; the
// event queue's mapping reports partial batch failures and its redrive
// policy dead-letters after MaxReceiveCount; its visibility timeout is the
// function's 120 s timeout's row of the FunctionTimeout map.
func TestTemplateFanoutFunction(t *testing.T) {
	t.Parallel()
	res := templatetest.Child(templatetest.Root(t), "Resources")
	st := statements(t, res)
	require.ElementsMatch(t, []string{"WriteOwnLogs", "ConsumeEventQueue", "EnqueueDeliveries", "ListSubscribers", "ReadProgressAndEndpoints", "WriteProgress", "UnsealEndpoints"}, keys(st))

	require.Equal(t, "dynamodb:Query", templatetest.Child(st["ListSubscribers"], "Action").Value)
	require.Equal(t, "${StoreTable.Arn}/index/"+endpoint.TenantIndex, templatetest.Child(st["ListSubscribers"], "Resource").Value)

	require.Equal(t, "dynamodb:GetItem", templatetest.Child(st["ReadProgressAndEndpoints"], "Action").Value)
	require.Equal(t, []string{"event#*", "endpoint#*"}, templatetest.Scalars(t, templatetest.Path(st["ReadProgressAndEndpoints"], "Condition", "ForAllValues:StringLike", "dynamodb:LeadingKeys")))
	require.Equal(t, "dynamodb:PutItem", templatetest.Child(st["WriteProgress"], "Action").Value)
	require.Equal(t, []string{"event#*"}, templatetest.Scalars(t, templatetest.Path(st["WriteProgress"], "Condition", "ForAllValues:StringLike", "dynamodb:LeadingKeys")))

	unseal := st["UnsealEndpoints"]
	require.Equal(t, "kms:Decrypt", templatetest.Child(unseal, "Action").Value)
	require.Equal(t, "EndpointKey.Arn", templatetest.Child(unseal, "Resource").Value)
	require.Equal(t, endpoint.IDPrefix+"*", templatetest.Path(unseal, "Condition", "StringLike", "kms:EncryptionContext:"+endpoint.ContextKey).Value)

	require.Equal(t, "sqs:SendMessage", templatetest.Child(st["EnqueueDeliveries"], "Action").Value)
	require.Equal(t, []string{"WebhookQueue.Arn", "ChatQueue.Arn", "EventQueue.Arn", "EventDeadLetterQueue.Arn"}, templatetest.Scalars(t, templatetest.Child(st["EnqueueDeliveries"], "Resource")))
	require.Equal(t, "EventQueue.Arn", templatetest.Child(st["ConsumeEventQueue"], "Resource").Value)

	mapping := templatetest.Path(res, "EventEventSourceMapping", "Properties")
	require.Equal(t, "FanoutFunction", templatetest.Child(mapping, "FunctionName").Value)
	require.Equal(t, []string{"ReportBatchItemFailures"}, templatetest.Scalars(t, templatetest.Child(mapping, "FunctionResponseTypes")))
	queue := templatetest.Path(res, "EventQueue", "Properties")
	require.Equal(t, "EventDeadLetterQueue.Arn", templatetest.Path(queue, "RedrivePolicy", "deadLetterTargetArn").Value)
	require.Equal(t, "MaxReceiveCount", templatetest.Path(queue, "RedrivePolicy", "maxReceiveCount").Value)
	fn := templatetest.Path(res, "FanoutFunction", "Properties")
	require.Equal(t, "120", templatetest.Child(fn, "Timeout").Value)
	require.Equal(t, []string{"FunctionTimeout", "120", "QueueVisibilityTimeout"}, templatetest.Scalars(t, templatetest.Child(queue, "VisibilityTimeout")))
}

func keys(m map[string]*yaml.Node) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
