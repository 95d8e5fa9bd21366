package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/endpoints"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointapi"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/kmstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// endpointsAPI serves the endpoints API's real handler (over the endpoint
// store on the DynamoDB and KMS wire fakes) as API Gateway's proxy
// integration would, under the stage /api; it returns the base URL and
// the store.
func endpointsAPI(t *testing.T) (string, *endpoint.Table) {
	t.Helper()
	db := dynamotest.New(t)
	db.AddTable("herald-store", store.AttrPK, store.AttrSK)
	db.AddIndex("herald-store", endpoint.TenantIndex, endpoint.AttrGSI1PK, endpoint.AttrGSI1SK, []string{endpoint.AttrEventTypes, endpoint.AttrDisabledAt, endpoint.AttrKind})
	k := kmstest.New(t)
	k.CreateKey("alias/herald-endpoints")
	table, err := endpoint.NewTable(endpoint.TableConfig{Table: "herald-store", KeyID: "alias/herald-endpoints", DB: db.Client(), KMS: k.Client()})
	require.NoError(t, err)
	q := sqstest.New(t)
	h, err := endpointapi.New(endpointapi.Config{Store: table, Queue: q.Client(), EventQueueURL: q.AddQueue(q.URL()+"/000000000000/herald-event", nil)})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.True(t, strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="), "every request is signed")
		body, _ := io.ReadAll(r.Body)
		ev := events.APIGatewayProxyRequest{HTTPMethod: r.Method, Path: strings.TrimPrefix(r.URL.Path, "/api"), Headers: map[string]string{}, MultiValueHeaders: map[string][]string{}, Body: string(body)}
		if !utf8.Valid(body) {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
		for k, v := range r.Header {
			ev.Headers[k], ev.MultiValueHeaders[k] = v[len(v)-1], v
		}
		if q := r.URL.Query(); len(q) > 0 {
			ev.QueryStringParameters, ev.MultiValueQueryStringParameters = map[string]string{}, map[string][]string(q)
			for k, v := range q {
				ev.QueryStringParameters[k] = v[len(v)-1]
			}
		}
		resp, err := h.Handle(r.Context(), ev)
		require.NoError(t, err)
		for k, v := range resp.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.WriteString(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api", table
}

// TestEndpointsCommands: the commands through the real API handler: create
// prints the secret once, ls and show find the endpoint, a stale update
// writes nothing and says so, disable/enable, rotate-secret, test, delete
// --dry-run deletes nothing, delete deletes.
func TestEndpointsCommands(t *testing.T) { // t.Setenv: not parallel
	awstest.Setenv(t, nil)
	base, table := endpointsAPI(t)
	vars := map[string]string{envEndpointsAPIURL: base}
	run := func(args ...string) result { return heraldWith(t, vars, append([]string{"endpoints"}, args...)...) }

	r := run("create", "--tenant", "acme", "--url", "https://hooks.acme.example/herald", "--event-type", "invoice.*", "--header", "X-Team: billing-value", "--metadata", "plan=gold")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "secret       whsec_")
	require.Contains(t, r.stdout, "shown only now")
	require.Contains(t, r.stdout, "headers      X-Team (values not shown)")
	require.NotContains(t, r.stdout, "billing-value")
	page, err := table.List(context.Background(), endpoint.ListQuery{Tenant: "acme"})
	require.NoError(t, err)
	require.Len(t, page.Endpoints, 1)
	id := page.Endpoints[0].ID

	r = run("ls", "--tenant", "acme")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, id)
	require.Contains(t, r.stdout, "hooks.acme.example")
	r = run("show", id)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "invoice.*")
	require.Contains(t, r.stdout, "failures     none kept")
	require.NotContains(t, r.stdout, "whsec_", "show never prints a secret")

	r = run("update", id, "--version", "7", "--description", "lost")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "changed since version 7")
	require.Contains(t, r.stderr, "nothing was written")
	r = run("update", id, "--description", "billing", "--all-types")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "every type")
	require.Contains(t, r.stdout, "version      2")

	r = run("disable", id, "--reason", "customer asked")
	require.Equal(t, exitOK, r.code, "%+v", r)
	r = run("--json", "show", id)
	var shown struct{ Endpoint endpoints.Endpoint }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &shown), r.stdout)
	require.Equal(t, "customer asked", shown.Endpoint.Disabled.Reason)
	r = run("test", id)
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "endpoint_disabled")
	require.Equal(t, exitOK, run("enable", id).code)

	r = run("rotate-secret", id, "--grace", "2h")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "secret version 2")
	require.Contains(t, r.stdout, "whsec_")
	r = run("--json", "test", id, "--payload", `{"hello":"world"}`)
	require.Equal(t, exitOK, r.code, "%+v", r)
	var q endpoints.TestQueued
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &q))
	require.Equal(t, "herald.test", q.Type)

	r = run("delete", id, "--dry-run")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "nothing was changed")
	_, err = table.Get(context.Background(), id)
	require.NoError(t, err, "a dry run deletes nothing")
	require.Equal(t, exitOK, run("delete", id).code)
	_, err = table.Get(context.Background(), id)
	require.ErrorIs(t, err, endpoint.ErrNotFound)
}

// TestEndpointsCommandsBadInput: bad input is a usage error (exit 2)
// naming the flag, refused by the command or by the API, and nothing is
// written.
func TestEndpointsCommandsBadInput(t *testing.T) { // t.Setenv: not parallel
	awstest.Setenv(t, nil)
	base, table := endpointsAPI(t)
	vars := map[string]string{envEndpointsAPIURL: base}
	const id = "ep_01m921tccrt0eax58fafvapteh"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "--tenant", "acme", "--url", "http://hooks.acme.example/"}, "--url: url:"},
		{[]string{"create", "--tenant", "acme", "--url", "https://127.0.0.1/"}, "--url: url:"},
		{[]string{"create", "--tenant", "acme", "--kind", "slack", "--url", "https://hooks.acme.example/x"}, "--url: url:"},
		{[]string{"create", "--tenant", "acme corp", "--url", "https://hooks.acme.example/"}, "--tenant: tenant:"},
		{[]string{"create", "--tenant", "acme", "--url", "https://hooks.acme.example/", "--kind", "sms"}, "--kind: kind:"},
		{[]string{"create", "--tenant", "acme", "--url", "https://hooks.acme.example/", "--header", "Connection: close"}, "--header: headers.Connection:"},
		{[]string{"create", "--tenant", "acme", "--url", "https://hooks.acme.example/", "--header", "no colon"}, `--header "no colon"`},
		{[]string{"create", "--tenant", "acme", "--url", "https://hooks.acme.example/", "--event-type", "invoice paid"}, "--event-type: event_types[0]:"},
		{[]string{"create", "--tenant", "acme", "--url", "https://hooks.acme.example/", "--metadata", "novalue"}, "--metadata"},
		{[]string{"create", "--tenant", "acme", "--url", "https://hooks.acme.example/", "--rate-limit", "5000"}, "--rate-limit: rate_limit:"},
		{[]string{"create", "--url", "https://hooks.acme.example/"}, "needs --tenant and --url"},
		{[]string{"ls", "--state", "paused"}, "--state: state:"},
		{[]string{"ls", "--limit", "500"}, "--limit: limit:"},
		{[]string{"ls", "--event-type", "a b"}, "--event-type: event_type:"},
		{[]string{"show", "ep_nope"}, "ID \"ep_nope\""},
		{[]string{"disable", id}, "--reason"},
		{[]string{"rotate-secret", id, "--grace", "200h"}, "--grace"},
		{[]string{"update", id}, "changes nothing"},
		{[]string{"update", id, "--all-types", "--event-type", "a"}, "give one"},
		{[]string{"test", id, "--payload", "{not json"}, "--payload"},
	} {
		r := heraldWith(t, vars, append([]string{"endpoints"}, c.args...)...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", c.args, r)
		require.Contains(t, r.stderr, c.want, "%v", c.args)
	}
	page, err := table.List(context.Background(), endpoint.ListQuery{})
	require.NoError(t, err)
	require.Empty(t, page.Endpoints, "nothing was written")

	r := heraldWith(t, map[string]string{}, "endpoints", "ls")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "give --stack NAME")
}

// TestEndpointsAPIURL: --api-url, then the variable, then the stack's
// outputs; for the local stack (AWS_ENDPOINT_URL) the path-style URL of
// LocalStack's API Gateway built from the API's id.
func TestEndpointsAPIURL(t *testing.T) {
	t.Parallel()
	outputs := func(context.Context) (map[string]string, error) {
		return map[string]string{outputEndpointsAPIID: "abc123", outputEndpointsAPIURL: "https://abc123.execute-api.eu-west-1.amazonaws.com/api"}, nil
	}
	ctx := context.Background()
	get := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	u, err := endpointsAPIURL(ctx, &endpointsFlags{apiURL: "https://a/api"}, &globals{stack: "s"}, get(map[string]string{envEndpointsAPIURL: "https://b/api"}), outputs)
	require.NoError(t, err)
	require.Equal(t, "https://a/api", u)
	u, err = endpointsAPIURL(ctx, &endpointsFlags{}, &globals{stack: "s"}, get(map[string]string{envEndpointsAPIURL: "https://b/api"}), outputs)
	require.NoError(t, err)
	require.Equal(t, "https://b/api", u)
	u, err = endpointsAPIURL(ctx, &endpointsFlags{}, &globals{stack: "s"}, get(nil), outputs)
	require.NoError(t, err)
	require.Equal(t, "https://abc123.execute-api.eu-west-1.amazonaws.com/api", u)
	u, err = endpointsAPIURL(ctx, &endpointsFlags{}, &globals{stack: "herald-local"}, get(map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4630/"}), outputs)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:4630/_aws/execute-api/abc123/api", u)
	_, err = endpointsAPIURL(ctx, &endpointsFlags{}, &globals{stack: "old"}, get(nil), func(context.Context) (map[string]string, error) { return map[string]string{}, nil })
	require.ErrorContains(t, err, "no EndpointsApiId output")
}
