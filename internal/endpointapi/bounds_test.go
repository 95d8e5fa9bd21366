package endpointapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/endpoints"
	"github.com/heraldhq/herald/internal/endpoint"
)

// handle sends ev through the handler as it is (no request helper: the
// event's own header and body shapes are what the test is about).
func (b *bundle) handle(t *testing.T, ev events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	t.Helper()
	resp, err := b.h.Handle(t.Context(), ev)
	require.NoError(t, err, "Handle never returns an error")
	return resp
}

// TestListStateAndLimitAtTheirBounds: state=enabled keeps the enabled
// endpoints; a page of 1 and of endpoint.MaxListLimit are accepted, 0 and
// one over are 400 naming limit.
func TestListStateAndLimitAtTheirBounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	on := b.create(t, `{"tenant":"acme","url":"https://h.example/on"}`).Endpoint.ID
	off := b.create(t, `{"tenant":"acme","url":"https://h.example/off"}`).Endpoint.ID
	resp := b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + off + "/disable", header: jsonHeader, body: `{"reason":"x"}`})
	require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)

	resp = b.do(t, request{method: http.MethodGet, path: "/v1/endpoints", query: url.Values{"tenant": {"acme"}, "state": {endpoints.StateEnabled}}})
	require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
	page := decode[endpoints.Page](t, resp)
	require.Len(t, page.Data, 1, resp.Body)
	require.Equal(t, on, page.Data[0].ID)
	require.Equal(t, endpoints.StateEnabled, page.Data[0].State)

	resp = b.do(t, request{method: http.MethodGet, path: "/v1/endpoints", query: url.Values{"tenant": {"acme"}, "limit": {"1"}}})
	require.Equal(t, http.StatusOK, resp.StatusCode, "limit 1 is the least page: %s", resp.Body)
	page = decode[endpoints.Page](t, resp)
	require.Len(t, page.Data, 1)
	require.NotEmpty(t, page.NextCursor, "a page of 1 of 2 endpoints has a next page")

	resp = b.do(t, request{method: http.MethodGet, path: "/v1/endpoints", query: url.Values{"tenant": {"acme"}, "limit": {strconv.Itoa(endpoint.MaxListLimit)}}})
	require.Equal(t, http.StatusOK, resp.StatusCode, "limit %d is the largest page: %s", endpoint.MaxListLimit, resp.Body)
	require.Len(t, decode[endpoints.Page](t, resp).Data, 2)

	for _, bad := range []string{"0", strconv.Itoa(endpoint.MaxListLimit + 1)} {
		p := requireProblem(t, b.do(t, request{method: http.MethodGet, path: "/v1/endpoints", query: url.Values{"limit": {bad}}}),
			http.StatusBadRequest, endpoints.CodeInvalidField, "limit")
		require.Contains(t, p.Message, "from 1 to "+strconv.Itoa(endpoint.MaxListLimit))
	}
}

// TestFailuresLimitAtItsBounds: limit 1 and MaxFailuresLimit are
// accepted, one over MaxFailuresLimit is 400 naming limit.
func TestFailuresLimitAtItsBounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h"}`).Endpoint.ID
	// Failures an hour old, by the real clock the store reads: inside
	// their retention on any day.
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 2 {
		require.NoError(t, b.store.RecordFailure(t.Context(), id, endpoint.Failure{At: base.Add(time.Duration(i) * time.Second), MessageID: "msg_" + strconv.Itoa(i), Class: "webhook_http_5xx", Reason: "HTTP 503", Attempt: 1}))
	}
	path := "/v1/endpoints/" + id + "/failures"
	resp := b.do(t, request{method: http.MethodGet, path: path, query: url.Values{"limit": {"1"}}})
	require.Equal(t, http.StatusOK, resp.StatusCode, "limit 1 is accepted: %s", resp.Body)
	got := decode[endpoints.FailureList](t, resp).Data
	require.Len(t, got, 1)
	require.Equal(t, "msg_1", got[0].MessageID, "the newest")

	resp = b.do(t, request{method: http.MethodGet, path: path, query: url.Values{"limit": {strconv.Itoa(MaxFailuresLimit)}}})
	require.Equal(t, http.StatusOK, resp.StatusCode, "limit %d is accepted: %s", MaxFailuresLimit, resp.Body)
	require.Len(t, decode[endpoints.FailureList](t, resp).Data, 2)

	p := requireProblem(t, b.do(t, request{method: http.MethodGet, path: path, query: url.Values{"limit": {strconv.Itoa(MaxFailuresLimit + 1)}}}),
		http.StatusBadRequest, endpoints.CodeInvalidField, "limit")
	require.Contains(t, p.Message, "from 1 to "+strconv.Itoa(MaxFailuresLimit))
}

// TestDisableReasonBounds: a reason of MaxReasonChars characters is
// accepted however many bytes they take, one more is 400 naming reason;
// C0 controls, DEL and C1 controls (U+0080–U+009F) are refused, the
// characters right beside them (space, '~', U+00A0, 'é') are not.
func TestDisableReasonBounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h"}`).Endpoint.ID
	path := "/v1/endpoints/" + id
	disable := func(reason string) events.APIGatewayProxyResponse {
		body, err := json.Marshal(endpoints.DisableRequest{Reason: reason})
		require.NoError(t, err)
		return b.do(t, request{method: http.MethodPost, path: path + "/disable", header: jsonHeader, body: string(body)})
	}
	for _, good := range []string{
		strings.Repeat("r", MaxReasonChars),
		strings.Repeat("é", MaxReasonChars), // 2 bytes each: the bound counts characters
		"a b~c",
		"no-break\u00a0space",
		"\u00a0",
		"\u00ff",
	} {
		resp := disable(good)
		require.Equal(t, http.StatusOK, resp.StatusCode, "reason %q (%d characters): %s", good, len([]rune(good)), resp.Body)
		require.Equal(t, good, decode[endpoints.Endpoint](t, resp).Disabled.Reason)
		require.Equal(t, http.StatusOK, b.do(t, request{method: http.MethodPost, path: path + "/enable"}).StatusCode)
	}
	for _, bad := range []string{
		"",
		strings.Repeat("r", MaxReasonChars+1),
		strings.Repeat("é", MaxReasonChars+1),
		"a\x1fb",
		"a\x7fb",
		"a\u0080b",
		"a\u0085b",
		"a\u009fb",
	} {
		p := requireProblem(t, disable(bad), http.StatusBadRequest, endpoints.CodeInvalidField, "reason")
		require.Contains(t, p.Message, "1–"+strconv.Itoa(MaxReasonChars))
	}
	got, err := b.store.Get(t.Context(), id)
	require.NoError(t, err)
	require.Nil(t, got.Disabled, "no refused reason disabled the endpoint")
}

// TestRotateGraceBounds: grace_seconds 0 ends the previous secret now and
// endpoint.MaxGrace in seconds keeps it that long; -1 and one second over
// are 400 naming grace_seconds.
func TestRotateGraceBounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h"}`).Endpoint.ID
	path := "/v1/endpoints/" + id + "/rotate-secret"
	maxSeconds := int64(endpoint.MaxGrace / time.Second)

	resp := b.do(t, request{method: http.MethodPost, path: path, header: jsonHeader, body: `{"grace_seconds":0}`})
	require.Equal(t, http.StatusOK, resp.StatusCode, "grace 0 is accepted: %s", resp.Body)
	rotated := decode[endpoints.WithSecret](t, resp).Endpoint
	require.Len(t, rotated.Secrets, 1, "grace 0: the previous secret stops at once")
	require.Equal(t, 2, rotated.Secrets[0].Version)

	resp = b.do(t, request{method: http.MethodPost, path: path, header: jsonHeader, body: `{"grace_seconds":` + strconv.FormatInt(maxSeconds, 10) + `}`})
	require.Equal(t, http.StatusOK, resp.StatusCode, "grace %d is accepted: %s", maxSeconds, resp.Body)
	rotated = decode[endpoints.WithSecret](t, resp).Endpoint
	require.Len(t, rotated.Secrets, 2)
	require.NotNil(t, rotated.Secrets[1].Until)
	// The store stamps the rotation with the real clock; a minute covers a
	// slow machine.
	require.WithinDuration(t, time.Now().Add(endpoint.MaxGrace), *rotated.Secrets[1].Until, time.Minute)

	for _, bad := range []int64{-1, maxSeconds + 1} {
		p := requireProblem(t, b.do(t, request{method: http.MethodPost, path: path, header: jsonHeader, body: `{"grace_seconds":` + strconv.FormatInt(bad, 10) + `}`}),
			http.StatusBadRequest, endpoints.CodeInvalidField, "grace_seconds")
		require.Contains(t, p.Message, "from 0 to "+strconv.FormatInt(maxSeconds, 10))
	}
	got, err := b.store.Get(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, 3, got.Secrets[0].Version, "the refused graces rotated nothing")
}

// TestHeadersOnlyInMultiValueHeaders: a header API Gateway gives only in
// multiValueHeaders is read (If-Match and Content-Type, any case); a name
// there with no value is not sent (428, not a malformed If-Match).
func TestHeadersOnlyInMultiValueHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h"}`).Endpoint.ID
	ev := events.APIGatewayProxyRequest{HTTPMethod: http.MethodPatch, Path: "/v1/endpoints/" + id, Body: `{"description":"x"}`,
		MultiValueHeaders: map[string][]string{"content-type": {"application/json"}, "if-match": {`"1"`}}}
	resp := b.handle(t, ev)
	require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
	require.Equal(t, `"2"`, resp.Headers["ETag"])

	ev.MultiValueHeaders["if-match"] = []string{}
	requireProblem(t, b.handle(t, ev), http.StatusPreconditionRequired, endpoints.CodeVersionRequired, "If-Match")

	ev.MultiValueHeaders["if-match"] = []string{`"2"`, `"3"`}
	requireProblem(t, b.handle(t, ev), http.StatusBadRequest, endpoints.CodeInvalidField, "If-Match")
}

// TestBodySizeAndBase64: a body of exactly MaxRequestBytes is read, one
// byte more is 413; a base64 body (as API Gateway sends one that is not
// UTF-8) is decoded first and bounded by its decoded size; a body that is
// not base64 is 400.
func TestBodySizeAndBase64(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const obj = `{"tenant":"acme","url":"https://h.example/"}`
	atLimit := obj + strings.Repeat(" ", MaxRequestBytes-len(obj)) // JSON allows trailing white space
	require.Len(t, atLimit, MaxRequestBytes)

	resp := b.do(t, request{method: http.MethodPost, path: "/v1/endpoints", header: jsonHeader, body: atLimit})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "a body of %d bytes is read: %.200s", MaxRequestBytes, resp.Body)
	p := requireProblem(t, b.do(t, request{method: http.MethodPost, path: "/v1/endpoints", header: jsonHeader, body: atLimit + " "}),
		http.StatusRequestEntityTooLarge, endpoints.CodeBodyTooLarge, "")
	require.Contains(t, p.Message, strconv.Itoa(MaxRequestBytes+1))

	encoded := func(body string) events.APIGatewayProxyRequest {
		return events.APIGatewayProxyRequest{HTTPMethod: http.MethodPost, Path: "/v1/endpoints", IsBase64Encoded: true,
			Headers: map[string]string{"Content-Type": "application/json"}, Body: base64.StdEncoding.EncodeToString([]byte(body))}
	}
	resp = b.handle(t, encoded(atLimit))
	require.Equal(t, http.StatusCreated, resp.StatusCode, "the bound is on the decoded body: %.200s", resp.Body)
	require.Equal(t, "https://h.example/", decode[endpoints.WithSecret](t, resp).Endpoint.URL)
	requireProblem(t, b.handle(t, encoded(atLimit+" ")), http.StatusRequestEntityTooLarge, endpoints.CodeBodyTooLarge, "")

	bad := encoded(obj)
	bad.Body = "{not base64}"
	p = requireProblem(t, b.handle(t, bad), http.StatusBadRequest, endpoints.CodeInvalidJSON, "")
	require.Contains(t, p.Message, "base64")

	page, err := b.store.List(t.Context(), endpoint.ListQuery{Tenant: "acme"})
	require.NoError(t, err)
	require.Len(t, page.Endpoints, 2, "the two bodies within the bound, no other")
}

// TestUnsupportedMediaTypeNamesIt: the 415's message quotes the
// Content-Type sent, or says none was.
func TestUnsupportedMediaTypeNamesIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const body = `{"tenant":"acme","url":"https://h.example/"}`
	p := requireProblem(t, b.do(t, request{method: http.MethodPost, path: "/v1/endpoints", body: body}),
		http.StatusUnsupportedMediaType, endpoints.CodeUnsupportedMediaType, "Content-Type")
	require.Contains(t, p.Message, `"none"`)
	p = requireProblem(t, b.do(t, request{method: http.MethodPost, path: "/v1/endpoints", header: map[string]string{"Content-Type": "text/plain"}, body: body}),
		http.StatusUnsupportedMediaType, endpoints.CodeUnsupportedMediaType, "Content-Type")
	require.Contains(t, p.Message, `"text/plain"`)
	require.NotContains(t, p.Message, "none")
}

// TestTypeErrorMessages: a wrong JSON type names the field, the type it
// must be (through a pointer member too) and the number sent when it is
// at most 40 characters, else the JSON kind sent.
func TestTypeErrorMessages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h"}`).Endpoint.ID
	rotate := "/v1/endpoints/" + id + "/rotate-secret"
	num40 := "1." + strings.Repeat("5", 38)
	num41 := num40 + "5"
	require.Len(t, num40, 40)
	cases := []struct {
		path, body, field, message string
	}{
		// grace_seconds is a *int64: the pointer is looked through.
		{rotate, `{"grace_seconds":1.5}`, "grace_seconds", "must be an integer, not 1.5"},
		{rotate, `{"grace_seconds":` + num40 + `}`, "grace_seconds", "must be an integer, not " + num40},
		{rotate, `{"grace_seconds":` + num41 + `}`, "grace_seconds", "must be an integer, not a JSON number"},
		{rotate, `{"grace_seconds":"soon"}`, "grace_seconds", "must be an integer, not a JSON string"},
		// A number where a string goes: the decoder keeps no value.
		{"/v1/endpoints", `{"tenant":"acme","url":"https://h.example/","event_types":["a",7]}`, "event_types[1]", "must be a string, not a JSON number"},
		{"/v1/endpoints", `{"tenant":7,"url":"https://h.example/"}`, "tenant", "must be a string, not a JSON number"},
	}
	for _, c := range cases {
		p := requireProblem(t, b.do(t, request{method: http.MethodPost, path: c.path, header: jsonHeader, body: c.body}),
			http.StatusBadRequest, endpoints.CodeInvalidField, c.field)
		require.Equal(t, c.message, p.Message, c.body)
	}
}

// TestNumericMemberName: a top-level member whose name is a number is
// named as a member ("7"), not as an array index ("[7]"); an index after
// a member is.
func TestNumericMemberName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	requireProblem(t, b.do(t, request{method: http.MethodPost, path: "/v1/endpoints", header: jsonHeader, body: `{"tenant":"acme","url":"https://h.example/","7":true}`}),
		http.StatusBadRequest, endpoints.CodeUnknownField, "7")
	requireProblem(t, b.do(t, request{method: http.MethodPost, path: "/v1/endpoints", header: jsonHeader, body: `{"tenant":"acme","url":"https://h.example/","event_types":[1]}`}),
		http.StatusBadRequest, endpoints.CodeInvalidField, "event_types[0]")
}

// TestETagOnlyWithAVersion: answers that show one endpoint carry its
// ETag; a list, the failures, a queued test event and a delete carry none.
func TestETagOnlyWithAVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h"}`).Endpoint.ID
	path := "/v1/endpoints/" + id
	resp := b.do(t, request{method: http.MethodGet, path: path})
	require.Equal(t, `"1"`, resp.Headers["ETag"])
	for _, r := range []request{
		{method: http.MethodGet, path: "/v1/endpoints", query: url.Values{"tenant": {"acme"}}},
		{method: http.MethodGet, path: path + "/failures"},
		{method: http.MethodPost, path: path + "/test"},
		{method: http.MethodDelete, path: path},
	} {
		resp := b.do(t, r)
		require.Less(t, resp.StatusCode, 300, "%s %s: %s", r.method, r.path, resp.Body)
		require.NotContains(t, resp.Headers, "ETag", "%s %s", r.method, r.path)
	}
}

// TestTypeNameLooksThroughPointers: typeName names what a pointer holds
// (a Patch's members are pointers). The decoder (go-json-experiment)
// reports the pointed-to type itself today, so this is checked on
// typeName directly: a decoder that reported *T would otherwise turn
// every Patch type error into "must be another type".
func TestTypeNameLooksThroughPointers(t *testing.T) {
	t.Parallel()
	require.Equal(t, "an integer", typeName(reflect.TypeFor[*int64]()))
	require.Equal(t, "a string", typeName(reflect.TypeFor[**string]()))
	require.Equal(t, "an array", typeName(reflect.TypeFor[*[]string]()))
	require.Equal(t, "an object", typeName(reflect.TypeFor[*map[string]string]()))
	require.Equal(t, "a number", typeName(reflect.TypeFor[float64]()))
	require.Equal(t, "another type", typeName(nil))
	require.Equal(t, "another type", typeName(reflect.TypeFor[bool]()))
}
