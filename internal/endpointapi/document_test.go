package endpointapi

import (
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/testkit/templatetest"
)

// document is the OpenAPI document as YAML nodes.
func document(t *testing.T) *yaml.Node {
	t.Helper()
	raw, err := os.ReadFile(documentPath)
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	return doc.Content[0]
}

// TestDocumentIsValidOpenAPI31: the document is OpenAPI 3.1 and valid by
// the OpenAPI 3.1 schema (libopenapi-validator's ValidateDocument).
func TestDocumentIsValidOpenAPI31(t *testing.T) {
	t.Parallel()
	require.Equal(t, "3.1.0", templatetest.Child(document(t), "openapi").Value)
	ok, errs := openAPI(t).ValidateDocument()
	for _, e := range errs {
		t.Errorf("%s: %s", e.Message, e.Reason)
	}
	require.True(t, ok)
}

// TestRoutesAreTheDocumentsOperations: every route of the router is an
// operation of the document (same method, path and operationId), and
// every operation of the document is a route.
func TestRoutesAreTheDocumentsOperations(t *testing.T) {
	t.Parallel()
	var documented []string
	paths := templatetest.Child(document(t), "paths")
	require.NotNil(t, paths)
	for i := 0; i+1 < len(paths.Content); i += 2 {
		p, item := paths.Content[i].Value, paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			method := strings.ToUpper(item.Content[j].Value)
			if method == "PARAMETERS" {
				continue
			}
			op := templatetest.Child(item.Content[j+1], "operationId")
			require.NotNil(t, op, "%s %s has no operationId", method, p)
			documented = append(documented, method+" "+p+" "+op.Value)
		}
	}
	var routed []string
	for _, r := range routes {
		routed = append(routed, r.method+" "+r.path+" "+r.operation)
	}
	slices.Sort(documented)
	slices.Sort(routed)
	require.Equal(t, documented, routed)
}

// TestDocumentLimitsAreTheCodes: the bounds the document states are the
// constants the code enforces (one home: internal/endpoint and this
// package; the document repeats them).
func TestDocumentLimitsAreTheCodes(t *testing.T) {
	t.Parallel()
	schemas := templatetest.Path(document(t), "components", "schemas")
	num := func(keys ...string) int {
		n := templatetest.Path(schemas, keys...)
		require.NotNil(t, n, "%v", keys)
		v, err := strconv.Atoi(n.Value)
		require.NoError(t, err, "%v", keys)
		return v
	}
	require.Equal(t, endpoint.MaxDescriptionChars, num("Description", "maxLength"))
	require.Equal(t, endpoint.MaxDescriptionChars, num("EndpointPatch", "properties", "description", "maxLength"))
	require.Equal(t, endpoint.MaxEventTypes, num("EventTypes", "maxItems"))
	require.Equal(t, endpoint.MaxEventTypes, num("EndpointPatch", "properties", "event_types", "maxItems"))
	require.Equal(t, endpoint.MaxEventTypeChars, num("EventType", "maxLength"))
	require.Equal(t, endpoint.MaxEventTypeChars, num("EventTypeFilter", "maxLength"))
	require.Equal(t, endpoint.MaxTenantChars, num("Tenant", "maxLength"))
	require.Equal(t, endpoint.MaxHeaders, num("Headers", "maxProperties"))
	require.Equal(t, endpoint.MaxHeaders, num("EndpointPatch", "properties", "headers", "maxProperties"))
	require.Equal(t, endpoint.MaxMetadataEntries, num("Metadata", "maxProperties"))
	require.Equal(t, endpoint.MaxMetadataKeyChars, num("Metadata", "propertyNames", "maxLength"))
	require.Equal(t, endpoint.MaxMetadataValueChars, num("Metadata", "additionalProperties", "maxLength"))
	require.Equal(t, endpoint.MaxRateLimit, num("RateLimit", "maximum"))
	require.Equal(t, endpoint.MaxURLBytes, num("EndpointCreate", "properties", "url", "maxLength"))
	require.Equal(t, int(endpoint.MaxGrace.Seconds()), num("RotateRequest", "properties", "grace_seconds", "maximum"))
	require.Equal(t, MaxReasonChars, num("DisableRequest", "properties", "reason", "maxLength"))
	params := templatetest.Path(document(t), "paths", "/v1/endpoints", "get", "parameters")
	require.NotNil(t, params)
	for _, p := range params.Content {
		if templatetest.Child(p, "name").Value == "limit" {
			require.Equal(t, strconv.Itoa(endpoint.MaxListLimit), templatetest.Path(p, "schema", "maximum").Value)
			require.Equal(t, strconv.Itoa(endpoint.DefaultListLimit), templatetest.Path(p, "schema", "default").Value)
		}
	}
	for _, p := range templatetest.Path(document(t), "paths", "/v1/endpoints/{id}/failures", "get", "parameters").Content {
		require.Equal(t, strconv.Itoa(MaxFailuresLimit), templatetest.Path(p, "schema", "maximum").Value)
		require.Equal(t, strconv.Itoa(DefaultFailuresLimit), templatetest.Path(p, "schema", "default").Value)
	}
}

// TestValidatorRefusesAnUndocumentedAnswer: the answer check is not
// vacuous: an endpoint without its id, an unknown member, an error
// without its code, and an undocumented status all fail it.
func TestValidatorRefusesAnUndocumentedAnswer(t *testing.T) {
	t.Parallel()
	v := openAPI(t)
	const id = "ep_01m921tccrt0eax58fafvapteh"
	good := `{"id":"` + id + `","tenant":"acme","kind":"webhook","url_host":"h.example","state":"enabled","version":1,"created_at":"2026-12-01T00:00:00Z","updated_at":"2026-12-01T00:00:00Z"}`
	check := func(status int, body string) bool {
		req, err := http.NewRequest(http.MethodGet, deployedBase+"/v1/endpoints/"+id, nil)
		require.NoError(t, err)
		resp := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}, "Etag": {`"1"`}}, Body: io.NopCloser(strings.NewReader(body)), Request: req}
		ok, _ := v.ValidateHttpResponse(req, resp)
		return ok
	}
	require.True(t, check(200, good), "the well-formed answer passes")
	require.False(t, check(200, strings.Replace(good, `"id":"`+id+`",`, "", 1)), "no id")
	require.False(t, check(200, strings.Replace(good, `"version":1`, `"version":1,"secret":"whsec_AAAA"`, 1)), "an undocumented member")
	require.False(t, check(200, strings.Replace(good, `"state":"enabled"`, `"state":"paused"`, 1)), "a state not in the enum")
	require.False(t, check(404, `{"error":{"message":"no endpoint"}}`), "an error without its code")
	require.False(t, check(418, `{"error":{"code":"internal","message":"x"}}`), "an undocumented status")
}
