//go:build integration

package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/endpoints"
	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	fanoutpkg "github.com/heraldhq/herald/internal/fanout"
)

// apiCaller calls the deployed endpoints API through LocalStack's API
// Gateway: the Go client, and signed raw requests for what the client
// cannot send (unknown members, other content types, no If-Match).
type apiCaller struct {
	t      *testing.T
	ctx    context.Context
	c      *endpoints.Client
	base   string
	awsCfg aws.Config
}

// raw sends one signed request and returns the status and the error
// object of the answer (nil for a success).
func (a *apiCaller) raw(method, path string, header map[string]string, body string) (int, *endpoints.Error) {
	a.t.Helper()
	req, err := http.NewRequestWithContext(a.ctx, method, a.base+path, strings.NewReader(body))
	require.NoError(a.t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	creds, err := a.awsCfg.Credentials.Retrieve(a.ctx)
	require.NoError(a.t, err)
	sum := sha256.Sum256([]byte(body))
	require.NoError(a.t, v4.NewSigner().SignHTTP(a.ctx, creds, req, hex.EncodeToString(sum[:]), endpoints.SigningService, a.awsCfg.Region, time.Now()))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode < 300 {
		return resp.StatusCode, nil
	}
	var b endpoints.ErrorBody
	require.NoError(a.t, json.Unmarshal(raw, &b), "%s %s answered %d: %s", method, path, resp.StatusCode, raw)
	require.NotNil(a.t, b.Error, "%s", raw)
	return resp.StatusCode, b.Error
}

// requireAPIError checks that err is the API's *Error with status, code
// and field.
func requireAPIError(t *testing.T, err error, status int, code, field string) {
	t.Helper()
	var e *endpoints.Error
	require.True(t, errors.As(err, &e), "want the API's error, got %v", err)
	require.Equal(t, status, e.Status, "%v", e)
	require.Equal(t, code, e.Code, "%v", e)
	require.Equal(t, field, e.Field, "%v", e)
}

// TestEndpointsAPIDeployed deploys template.yaml into the local stack and
// calls the endpoints API through LocalStack's API Gateway (REST API,
// AWS_PROXY to the deployed function) with the Go client: the whole life
// of an endpoint, then bad input of each kind, each refused naming its
// field with nothing written. LocalStack does not check the AWS_IAM
// authorization (unit tests over the template do): the requests are
// signed as on AWS.
func TestEndpointsAPIDeployed(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, os.Getenv("AWS_ENDPOINT_URL"), "run the integration tests with `make test`, which starts the local stack")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	cfn := cloudformation.NewFromConfig(awsCfg)
	stack := deployStackPrefix + "api-" + randHex(3)
	t.Cleanup(func() {
		_, _ = cfn.DeleteStack(context.Background(), &cloudformation.DeleteStackInput{StackName: aws.String(stack)})
	})
	deployLocal(ctx, t, stack, deployTestParameters)
	d := readStack(ctx, t, cfn, lambda.NewFromConfig(awsCfg), stack)
	fn := d.functions["EndpointsFunction"]
	require.NotNil(t, fn, "the stack has no EndpointsFunction")
	apiCfg, read := loadRecorded(fn.Environment.Variables, config.LoadEndpointsAPI)
	require.NoError(t, apiCfg.err, "the deployed EndpointsFunction's environment loads")
	requireEnvMatchesLoader(t, "EndpointsFunction", fn.Environment.Variables, read)
	apiID := d.outputs["EndpointsApiId"]
	require.NotEmpty(t, apiID, "outputs: %v", d.outputs)
	require.Contains(t, d.outputs["EndpointsApiUrl"], apiID)
	base := strings.TrimRight(os.Getenv("AWS_ENDPOINT_URL"), "/") + "/_aws/execute-api/" + apiID + "/api"
	c, err := endpoints.New(base, awsCfg)
	require.NoError(t, err)
	a := &apiCaller{t: t, ctx: ctx, c: c, base: base, awsCfg: awsCfg}
	tenant := "it-" + randHex(4)

	t.Run("lifecycle", func(t *testing.T) {
		created, err := c.Create(ctx, endpoints.CreateInput{Tenant: tenant, URL: "https://hooks.acme.example/herald", EventTypes: []string{"invoice.*"},
			Headers: map[string]string{"X-Team": "billing-value"}, Metadata: map[string]string{"plan": "gold"}})
		require.NoError(t, err)
		e := created.Endpoint
		require.Regexp(t, `^whsec_`, created.Secret)
		require.Equal(t, int64(1), e.Version)
		require.Equal(t, []string{"X-Team"}, e.HeaderNames)
		chat, err := c.Create(ctx, endpoints.CreateInput{Tenant: tenant, Kind: endpoints.KindSlack, URL: "https://hooks.slack.com/services/T0/B0/SECRETTOKEN"})
		require.NoError(t, err)
		require.Empty(t, chat.Endpoint.URL, "a chat URL is never returned")
		require.Equal(t, "hooks.slack.com", chat.Endpoint.URLHost)

		got, err := c.Get(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, e.ID, got.ID)
		require.Len(t, got.Secrets, 1)
		require.Equal(t, []string{"X-Team"}, got.HeaderNames, "the sealed headers' names, read back through KMS")

		// Two pages of one, then the end.
		var seen []string
		q := endpoints.ListQuery{Tenant: tenant, Limit: 1}
		for range 4 {
			page, err := c.List(ctx, q)
			require.NoError(t, err)
			for _, x := range page.Data {
				seen = append(seen, x.ID)
			}
			if page.NextCursor == "" {
				break
			}
			q.Cursor = page.NextCursor
		}
		require.ElementsMatch(t, []string{e.ID, chat.Endpoint.ID}, seen)

		// An update with the version read; one with a stale version is refused.
		updated, err := c.Update(ctx, e.ID, 1, endpoints.Patch{Description: aws.String("billing")})
		require.NoError(t, err)
		require.Equal(t, int64(2), updated.Version)
		_, err = c.Update(ctx, e.ID, 1, endpoints.Patch{Description: aws.String("lost update")})
		requireAPIError(t, err, http.StatusPreconditionFailed, endpoints.CodeVersionMismatch, "If-Match")
		got, err = c.Get(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, "billing", got.Description, "the stale update wrote nothing")

		disabled, err := c.Disable(ctx, e.ID, "customer asked")
		require.NoError(t, err)
		require.Equal(t, endpoints.StateDisabled, disabled.State)
		page, err := c.List(ctx, endpoints.ListQuery{Tenant: tenant, State: endpoints.StateDisabled})
		require.NoError(t, err)
		require.Len(t, page.Data, 1)
		_, err = c.Test(ctx, e.ID, nil)
		requireAPIError(t, err, http.StatusConflict, endpoints.CodeEndpointDisabled, "")
		enabled, err := c.Enable(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, endpoints.StateEnabled, enabled.State)

		rotated, err := c.RotateSecret(ctx, e.ID, time.Hour)
		require.NoError(t, err)
		require.NotEqual(t, created.Secret, rotated.Secret)
		require.Len(t, rotated.Endpoint.Secrets, 2)

		queued, err := c.Test(ctx, e.ID, json.RawMessage(`{"hello":"world"}`))
		require.NoError(t, err)
		require.Equal(t, endpoints.TestEventType, queued.Type)
		require.Equal(t, e.ID, queued.Endpoint)
		// The deployed fan-out function takes the test event from the event
		// queue and enqueues one delivery, to this endpoint only.
		fanout := functionLog{cloudwatchlogs.NewFromConfig(awsCfg), aws.ToString(d.functions["FanoutFunction"].FunctionName)}
		recs := fanout.waitRecords(ctx, t, fanoutpkg.LineFanout, 90*time.Second, func(recs []map[string]any) bool {
			return len(recordsOf(recs, queued.EventID)) > 0
		})
		line := recordsOf(recs, queued.EventID)[0]
		require.Equal(t, fanoutpkg.OutcomeFannedOut, line["fanout"], "%v", line)
		require.Equal(t, e.ID, line["endpoint"], "%v", line)
		require.Equal(t, endpoints.TestEventType, line["event_type"], "%v", line)
		require.Equal(t, "1", jsonNumber(line["total"]), "%v", line)

		fs, err := c.Failures(ctx, e.ID, 5)
		require.NoError(t, err)
		require.Empty(t, fs)

		require.NoError(t, c.Delete(ctx, e.ID, rotated.Endpoint.Version))
		_, err = c.Get(ctx, e.ID)
		requireAPIError(t, err, http.StatusNotFound, endpoints.CodeNotFound, "")
		require.NoError(t, c.Delete(ctx, chat.Endpoint.ID, 0))
	})

	t.Run("bad input", func(t *testing.T) {
		tenant := tenant + "-bad" // apart from what the lifecycle left if it failed
		for _, c2 := range []struct {
			name  string
			in    endpoints.CreateInput
			field string
		}{
			{"http URL", endpoints.CreateInput{Tenant: tenant, URL: "http://hooks.acme.example/"}, "url"},
			{"loopback URL", endpoints.CreateInput{Tenant: tenant, URL: "https://127.0.0.2/hook"}, "url"},
			{"metadata service URL", endpoints.CreateInput{Tenant: tenant, URL: "https://169.254.169.254/latest/meta-data"}, "url"},
			{"URL with a password", endpoints.CreateInput{Tenant: tenant, URL: "https://u:p@hooks.acme.example/"}, "url"},
			{"slack endpoint elsewhere", endpoints.CreateInput{Tenant: tenant, Kind: endpoints.KindSlack, URL: "https://hooks.acme.example/services/x"}, "url"},
			{"hop-by-hop header", endpoints.CreateInput{Tenant: tenant, URL: "https://hooks.acme.example/", Headers: map[string]string{"Connection": "close"}}, "headers.Connection"},
			{"header with a bad name", endpoints.CreateInput{Tenant: tenant, URL: "https://hooks.acme.example/", Headers: map[string]string{"X Bad": "v"}}, ""},
			{"signature header", endpoints.CreateInput{Tenant: tenant, URL: "https://hooks.acme.example/", Headers: map[string]string{"webhook-signature": "v1,x"}}, ""},
			{"bad event type", endpoints.CreateInput{Tenant: tenant, URL: "https://hooks.acme.example/", EventTypes: []string{"invoice paid"}}, "event_types[0]"},
			{"unknown kind", endpoints.CreateInput{Tenant: tenant, Kind: "sms", URL: "https://hooks.acme.example/"}, "kind"},
			{"tenant with a space", endpoints.CreateInput{Tenant: "acme corp", URL: "https://hooks.acme.example/"}, "tenant"},
		} {
			_, err := c.Create(ctx, c2.in)
			var e *endpoints.Error
			require.True(t, errors.As(err, &e), "%s: %v", c2.name, err)
			require.Equal(t, http.StatusBadRequest, e.Status, "%s: %v", c2.name, e)
			require.Equal(t, endpoints.CodeInvalidField, e.Code, "%s: %v", c2.name, e)
			if c2.field != "" {
				require.Equal(t, c2.field, e.Field, "%s: %v", c2.name, e)
			} else {
				require.True(t, strings.HasPrefix(e.Field, "headers"), "%s: %v", c2.name, e)
			}
		}
		for _, q := range []struct {
			q     endpoints.ListQuery
			field string
		}{
			{endpoints.ListQuery{State: "paused"}, "state"},
			{endpoints.ListQuery{Limit: 101}, "limit"},
			{endpoints.ListQuery{Limit: -1}, "limit"},
			{endpoints.ListQuery{Tenant: "acme corp"}, "tenant"},
			{endpoints.ListQuery{EventType: "invoice.*"}, "event_type"},
		} {
			_, err := c.List(ctx, q.q)
			requireAPIError(t, err, http.StatusBadRequest, endpoints.CodeInvalidField, q.field)
		}
		status, e := a.raw(http.MethodGet, "/v1/endpoints?page=2", nil, "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Equal(t, "page", e.Field)

		// What the client cannot send.
		jsonType := map[string]string{"Content-Type": "application/json"}
		body := `{"tenant":"` + tenant + `","url":"https://hooks.acme.example/"`
		status, e = a.raw(http.MethodPost, "/v1/endpoints", jsonType, body+`,"secret":"whsec_AAAA"}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.Equal(t, endpoints.Error{Code: endpoints.CodeUnknownField, Field: "secret", Message: e.Message}, *e)
		status, e = a.raw(http.MethodPost, "/v1/endpoints", jsonType, body+`,"Tenant":"x"}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.Equal(t, "Tenant", e.Field)
		status, e = a.raw(http.MethodPost, "/v1/endpoints", map[string]string{"Content-Type": "text/plain"}, body+`}`)
		require.Equal(t, http.StatusUnsupportedMediaType, status)
		require.Equal(t, endpoints.CodeUnsupportedMediaType, e.Code)
		status, e = a.raw(http.MethodPost, "/v1/endpoints", jsonType, body+`,"description":"`+strings.Repeat("x", 70<<10)+`"}`)
		require.Equal(t, http.StatusRequestEntityTooLarge, status)
		require.Equal(t, endpoints.CodeBodyTooLarge, e.Code)
		status, e = a.raw(http.MethodPost, "/v1/endpoints", jsonType, body)
		require.Equal(t, http.StatusBadRequest, status)
		require.Equal(t, endpoints.CodeInvalidJSON, e.Code)

		created, err := c.Create(ctx, endpoints.CreateInput{Tenant: tenant, URL: "https://hooks.acme.example/v"})
		require.NoError(t, err)
		id := created.Endpoint.ID
		status, e = a.raw(http.MethodPatch, "/v1/endpoints/"+id, jsonType, `{"description":"x"}`)
		require.Equal(t, http.StatusPreconditionRequired, status)
		require.Equal(t, endpoints.CodeVersionRequired, e.Code)
		_, err = c.Update(ctx, id, 9, endpoints.Patch{Description: aws.String("x")})
		requireAPIError(t, err, http.StatusPreconditionFailed, endpoints.CodeVersionMismatch, "If-Match")
		_, err = c.Update(ctx, id, 1, endpoints.Patch{URL: aws.String("https://10.1.2.3/")})
		requireAPIError(t, err, http.StatusBadRequest, endpoints.CodeInvalidField, "url")
		_, err = c.Disable(ctx, id, "")
		requireAPIError(t, err, http.StatusBadRequest, endpoints.CodeInvalidField, "reason")
		_, err = c.RotateSecret(ctx, id, 8*24*time.Hour)
		requireAPIError(t, err, http.StatusBadRequest, endpoints.CodeInvalidField, "grace_seconds")
		_, err = c.Get(ctx, "ep_nope")
		requireAPIError(t, err, http.StatusBadRequest, endpoints.CodeInvalidField, "id")

		got, err := c.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, int64(1), got.Version, "no refused request wrote")
		require.Empty(t, got.Description)
		require.Len(t, got.Secrets, 1)
		page, err := c.List(ctx, endpoints.ListQuery{Tenant: tenant})
		require.NoError(t, err)
		require.Len(t, page.Data, 1, "only the one endpoint created after the refused ones")
		var buf bytes.Buffer
		_ = json.NewEncoder(&buf).Encode(page)
		require.NotContains(t, buf.String(), "SECRETTOKEN")
	})
}
