package endpointapi

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/testkit/templatetest"
)

// resourcesOfType returns template.yaml's resources of type typ by
// logical id.
func resourcesOfType(t *testing.T, typ string) map[string]*yaml.Node {
	t.Helper()
	rs := templatetest.Child(templatetest.Root(t), "Resources")
	require.NotNil(t, rs)
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(rs.Content); i += 2 {
		if ty := templatetest.Child(rs.Content[i+1], "Type"); ty != nil && ty.Value == typ {
			out[rs.Content[i].Value] = rs.Content[i+1]
		}
	}
	return out
}

// TestEveryMethodNeedsIAM: every API Gateway method of the stack needs
// AWS IAM authorization (LocalStack does not enforce it, so this test and
// cfn-lint are what check it), and no API is made another way that could
// leave a method open (SAM's Api events and AWS::Serverless::Api, whose
// DefaultAuthorizer some deployers drop; HTTP APIs).
func TestEveryMethodNeedsIAM(t *testing.T) {
	t.Parallel()
	methods := resourcesOfType(t, "AWS::ApiGateway::Method")
	require.NotEmpty(t, methods)
	for id, m := range methods {
		auth := templatetest.Path(m, "Properties", "AuthorizationType")
		require.NotNil(t, auth, "%s has no AuthorizationType (CloudFormation's default is NONE)", id)
		require.Equal(t, "AWS_IAM", auth.Value, "%s", id)
		require.Equal(t, yaml.ScalarNode, auth.Kind, "%s: a literal, not a parameter or condition", id)
		require.Equal(t, "AWS_PROXY", templatetest.Path(m, "Properties", "Integration", "Type").Value, "%s", id)
		uri := templatetest.Path(m, "Properties", "Integration", "Uri")
		require.Contains(t, uri.Value, "${EndpointsFunction.Arn}", "%s invokes the endpoints function", id)
	}
	for _, typ := range []string{"AWS::Serverless::Api", "AWS::Serverless::HttpApi", "AWS::ApiGatewayV2::Api", "AWS::ApiGatewayV2::Route", "AWS::ApiGateway::Authorizer"} {
		require.Empty(t, resourcesOfType(t, typ), "the stack has an %s", typ)
	}
	for id, fn := range resourcesOfType(t, "AWS::Serverless::Function") {
		events := templatetest.Path(fn, "Properties", "Events")
		if events == nil {
			continue
		}
		for i := 0; i+1 < len(events.Content); i += 2 {
			typ := templatetest.Child(events.Content[i+1], "Type").Value
			require.NotContains(t, []string{"Api", "HttpApi"}, typ, "%s has an %s event: SAM would make a method of its own", id, typ)
		}
	}
}

// TestTheAPIServesEveryRoute: the REST API's resources reach every route
// of the router (its /v1/endpoints resource and a {proxy+} below it, each
// with a method), and API Gateway may invoke the function for them.
func TestTheAPIServesEveryRoute(t *testing.T) {
	t.Parallel()
	res := resourcesOfType(t, "AWS::ApiGateway::Resource")
	path := map[string]string{} // logical id → full path
	var resolve func(id string) string
	resolve = func(id string) string {
		if p, ok := path[id]; ok {
			return p
		}
		r := res[id]
		require.NotNil(t, r, "no resource %s", id)
		parent := templatetest.Path(r, "Properties", "ParentId")
		p := "/" + templatetest.Path(r, "Properties", "PathPart").Value
		if parent.Tag == "!Ref" {
			p = resolve(parent.Value) + p
		} else {
			require.Equal(t, "EndpointsApi.RootResourceId", parent.Value, "%s", id)
		}
		path[id] = p
		return p
	}
	served := map[string][]string{} // path → methods
	for id, m := range resourcesOfType(t, "AWS::ApiGateway::Method") {
		r := templatetest.Path(m, "Properties", "ResourceId")
		require.Equal(t, "!Ref", r.Tag, "%s", id)
		p := resolve(r.Value)
		served[p] = append(served[p], templatetest.Path(m, "Properties", "HttpMethod").Value)
	}
	for _, r := range routes {
		p := r.path
		if strings.Contains(p, "{id}") {
			p = "/v1/endpoints/{proxy+}"
		}
		ms := served[p]
		require.True(t, slices.Contains(ms, "ANY") || slices.Contains(ms, r.method), "%s %s: no method of the API reaches it (served: %v)", r.method, r.path, served)
	}
	perms := resourcesOfType(t, "AWS::Lambda::Permission")
	p := perms["EndpointsApiInvokePermission"]
	require.NotNil(t, p)
	require.Equal(t, "apigateway.amazonaws.com", templatetest.Path(p, "Properties", "Principal").Value)
	require.True(t, strings.HasSuffix(templatetest.Path(p, "Properties", "SourceArn").Value, "${EndpointsApi}/*/*/v1/endpoints*"))
}

// TestEndpointsFunctionSettingsAndGrants: the function gets every
// variable its configuration requires, and its role grants what the store
// and the test event call, on the table, the endpoint key (bound to
// endpoint ids) and the event queue only.
func TestEndpointsFunctionSettingsAndGrants(t *testing.T) {
	t.Parallel()
	root := templatetest.Root(t)
	vars := templatetest.Path(root, "Resources", "EndpointsFunction", "Properties", "Environment", "Variables")
	require.NotNil(t, vars)
	env := map[string]string{}
	for i := 0; i+1 < len(vars.Content); i += 2 {
		env[vars.Content[i].Value] = vars.Content[i+1].Value
	}
	// A parameter stands for its default value.
	loadable := map[string]string{}
	for k, v := range env {
		loadable[k] = v
		if d := templatetest.Path(root, "Parameters", v, "Default"); d != nil {
			loadable[k] = d.Value
		}
	}
	_, err := config.LoadEndpointsAPI(func(k string) string { return loadable[k] })
	require.NoError(t, err, "the template sets every variable the configuration requires")
	require.Equal(t, "StoreTable", env[config.EnvStoreTable])
	require.Equal(t, "EndpointKey.Arn", env[config.EnvEndpointKeyID])
	require.Equal(t, "EventQueue", env["HERALD_EVENT_QUEUE_URL"])

	stmts := templatetest.Path(root, "Resources", "EndpointsFunctionRole", "Properties", "Policies")
	require.NotNil(t, stmts)
	grants := map[string][]string{} // resource → actions
	for _, pol := range stmts.Content {
		for _, st := range templatetest.Path(pol, "PolicyDocument", "Statement").Content {
			require.Equal(t, "Allow", templatetest.Child(st, "Effect").Value)
			actions := templatetest.Child(st, "Action")
			var as []string
			if actions.Kind == yaml.SequenceNode {
				as = templatetest.Scalars(t, actions)
			} else {
				as = []string{actions.Value}
			}
			r := templatetest.Child(st, "Resource")
			require.NotEqual(t, "*", r.Value, "no grant on every resource")
			for _, a := range as {
				require.NotContains(t, a, "*", "no wildcard action")
			}
			grants[r.Value] = append(grants[r.Value], as...)
			if r.Value == "EndpointKey.Arn" {
				require.Equal(t, "ep_*", templatetest.Path(st, "Condition", "StringLike", "kms:EncryptionContext:herald:endpoint").Value, "KMS only for data keys bound to an endpoint")
			}
		}
	}
	require.ElementsMatch(t, []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:BatchGetItem"}, grants["StoreTable.Arn"])
	require.ElementsMatch(t, []string{"dynamodb:Query"}, grants["${StoreTable.Arn}/index/tenant-index"])
	require.ElementsMatch(t, []string{"kms:GenerateDataKey", "kms:Decrypt"}, grants["EndpointKey.Arn"])
	require.ElementsMatch(t, []string{"sqs:SendMessage"}, grants["EventQueue.Arn"])
	require.ElementsMatch(t, []string{"logs:CreateLogStream", "logs:PutLogEvents"}, grants["EndpointsFunctionLogGroup.Arn"])
	require.Len(t, grants, 5, "no other resource: %v", grants)
}
