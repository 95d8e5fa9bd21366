package endpointapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/endpoints"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/kmstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// documentPath is the OpenAPI document, from this package's directory.
const documentPath = "../../api/endpoints.openapi.yaml"

// deployedBase is the document's first server with its variables' defaults:
// requests are written against it so that the validator finds their paths.
const deployedBase = "https://abcdef1234.execute-api.us-east-1.amazonaws.com/api"

var (
	docOnce      sync.Once
	docValidator validator.Validator
	docErr       error
)

// openAPI returns the validator of the document, built once.
func openAPI(t *testing.T) validator.Validator {
	t.Helper()
	docOnce.Do(func() {
		raw, err := os.ReadFile(documentPath)
		if err != nil {
			docErr = err
			return
		}
		doc, err := libopenapi.NewDocument(raw)
		if err != nil {
			docErr = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			docErr = errs[0]
			return
		}
		docValidator = v
	})
	require.NoError(t, docErr)
	return docValidator
}

// The table and key of the tests' store, on the wire-format fakes of
// DynamoDB (dynamotest) and KMS (kmstest).
const (
	tableName = "herald-store"
	keyAlias  = "alias/herald-endpoints"
)

type bundle struct {
	h        *Handler
	store    *endpoint.Table
	db       *dynamotest.Server
	kms      *kmstest.Server
	sqs      *sqstest.Server
	queueURL string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	srv := sqstest.New(t)
	q := srv.AddQueue(srv.URL()+"/000000000000/herald-event", nil)
	db := dynamotest.New(t)
	db.AddTable(tableName, store.AttrPK, store.AttrSK)
	db.AddIndex(tableName, endpoint.TenantIndex, endpoint.AttrGSI1PK, endpoint.AttrGSI1SK, []string{endpoint.AttrEventTypes, endpoint.AttrDisabledAt, endpoint.AttrKind})
	k := kmstest.New(t)
	k.CreateKey(keyAlias)
	st, err := endpoint.NewTable(endpoint.TableConfig{Table: tableName, KeyID: keyAlias, DB: db.Client(), KMS: k.Client()})
	require.NoError(t, err)
	h, err := New(Config{Store: st, Queue: srv.Client(), EventQueueURL: q})
	require.NoError(t, err)
	return &bundle{h: h, store: st, db: db, kms: k, sqs: srv, queueURL: q}
}

// request is one call as API Gateway hands it to the function.
type request struct {
	method, path string
	query        url.Values
	header       map[string]string
	body         string
}

// proxyEvent is r as the REST API's proxy integration writes it: single-
// and multi-value headers and query parameters, the path without the stage.
func (r request) proxyEvent() events.APIGatewayProxyRequest {
	ev := events.APIGatewayProxyRequest{HTTPMethod: r.method, Path: r.path, Body: r.body,
		Headers: map[string]string{}, MultiValueHeaders: map[string][]string{}}
	for k, v := range r.header {
		ev.Headers[k] = v
		ev.MultiValueHeaders[k] = []string{v}
	}
	if len(r.query) > 0 {
		ev.QueryStringParameters = map[string]string{}
		ev.MultiValueQueryStringParameters = map[string][]string{}
		for k, vs := range r.query {
			ev.QueryStringParameters[k] = vs[len(vs)-1]
			ev.MultiValueQueryStringParameters[k] = vs
		}
	}
	return ev
}

// do sends r through the handler and checks the answer against the
// OpenAPI document (status, headers, body) for r's operation.
func (b *bundle) do(t *testing.T, r request) events.APIGatewayProxyResponse {
	t.Helper()
	resp, err := b.h.Handle(context.Background(), r.proxyEvent())
	require.NoError(t, err, "Handle never returns an error")
	requireDocumented(t, r, resp)
	return resp
}

// requireDocumented validates resp as the document's answer to r.
func requireDocumented(t *testing.T, r request, resp events.APIGatewayProxyResponse) {
	t.Helper()
	u := deployedBase + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	req, err := http.NewRequest(r.method, u, strings.NewReader(r.body))
	require.NoError(t, err)
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	hr := &http.Response{StatusCode: resp.StatusCode, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(resp.Body)), Request: req}
	for k, v := range resp.Headers {
		hr.Header.Set(k, v)
	}
	ok, errs := openAPI(t).ValidateHttpResponse(req, hr)
	if !ok {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Message+": "+e.Reason)
			for _, se := range e.SchemaValidationErrors {
				msgs = append(msgs, "  "+se.FieldPath+": "+se.Reason)
			}
		}
		t.Fatalf("%s %s answered %d, not as documented:\n%s\nbody: %s", r.method, r.path, resp.StatusCode, strings.Join(msgs, "\n"), resp.Body)
	}
}

// jsonHeader is the header of a JSON body.
var jsonHeader = map[string]string{"Content-Type": "application/json"}

func withIfMatch(version int64) map[string]string {
	return map[string]string{"Content-Type": "application/json", "If-Match": `"` + strconv.FormatInt(version, 10) + `"`}
}

// decode reads an answer's body.
func decode[T any](t *testing.T, resp events.APIGatewayProxyResponse) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(resp.Body), &v), "body: %s", resp.Body)
	return v
}

// requireProblem checks an error answer: status, code and field.
func requireProblem(t *testing.T, resp events.APIGatewayProxyResponse, status int, code, field string) endpoints.Error {
	t.Helper()
	require.Equal(t, status, resp.StatusCode, "body: %s", resp.Body)
	e := decode[endpoints.ErrorBody](t, resp).Error
	require.NotNil(t, e, "body: %s", resp.Body)
	require.Equal(t, code, e.Code, "body: %s", resp.Body)
	require.Equal(t, field, e.Field, "body: %s", resp.Body)
	require.NotEmpty(t, e.Message)
	return *e
}

// create registers a webhook endpoint for tenant and returns the answer.
func (b *bundle) create(t *testing.T, body string) endpoints.WithSecret {
	t.Helper()
	resp := b.do(t, request{method: http.MethodPost, path: "/v1/endpoints", header: jsonHeader, body: body})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "body: %s", resp.Body)
	created := decode[endpoints.WithSecret](t, resp)
	require.Equal(t, "/v1/endpoints/"+created.Endpoint.ID, resp.Headers["Location"])
	require.Equal(t, `"1"`, resp.Headers["ETag"])
	return created
}
