package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/endpoints"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/kmstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// TestStartServesTheAPI: the cold start's handler, invoked as Lambda
// invokes it with a REST API proxy event (testdata/create.json, in the
// shape LocalStack's API Gateway sends), creates the endpoint in the table
// (DynamoDB and KMS wire fakes) and answers the proxy response.
func TestStartServesTheAPI(t *testing.T) { // t.Setenv: not parallel
	db := dynamotest.New(t)
	db.AddTable("herald-store", store.AttrPK, store.AttrSK)
	db.AddIndex("herald-store", endpoint.TenantIndex, endpoint.AttrGSI1PK, endpoint.AttrGSI1SK, []string{endpoint.AttrEventTypes, endpoint.AttrDisabledAt, endpoint.AttrKind})
	k := kmstest.New(t)
	keyARN := k.CreateKey("alias/herald-endpoints")
	q := sqstest.New(t)
	queue := q.AddQueue(q.URL()+"/000000000000/herald-event", nil)
	awstest.Setenv(t, map[string]string{"DYNAMODB": db.URL(), "KMS": k.URL(), "SQS": q.URL()})
	env := map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_ENDPOINT_KEY_ID": keyARN, "HERALD_EVENT_QUEUE_URL": queue}
	var stdout bytes.Buffer
	handle, err := start(context.Background(), func(k string) string { return env[k] }, &stdout)
	require.NoError(t, err)

	event, err := os.ReadFile("testdata/create.json")
	require.NoError(t, err)
	out, err := lambda.NewHandler(handle).Invoke(context.Background(), event)
	require.NoError(t, err)
	var resp events.APIGatewayProxyResponse
	require.NoError(t, json.Unmarshal(out, &resp))
	require.Equal(t, 201, resp.StatusCode, resp.Body)
	var created endpoints.WithSecret
	require.NoError(t, json.Unmarshal([]byte(resp.Body), &created))
	require.Equal(t, "acme", created.Endpoint.Tenant)
	require.Equal(t, `"1"`, resp.Headers["ETag"])
	require.Equal(t, "/v1/endpoints/"+created.Endpoint.ID, resp.Headers["Location"])
	require.Contains(t, stdout.String(), `"msg":"endpoint created"`)
	require.NotContains(t, stdout.String(), created.Secret)
	require.Len(t, db.Items("herald-store"), 1)
}

// TestStartNamesWhatIsMissing: a configuration without the table, the key
// or the event queue fails the start naming each variable.
func TestStartNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	_, err := start(context.Background(), func(string) string { return "" }, &bytes.Buffer{})
	require.Error(t, err)
	for _, v := range []string{"HERALD_STORE_TABLE", "HERALD_ENDPOINT_KEY_ID", "HERALD_EVENT_QUEUE_URL"} {
		require.True(t, strings.Contains(err.Error(), v), "%v names %s", err, v)
	}
}
