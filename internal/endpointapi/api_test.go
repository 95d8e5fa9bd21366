package endpointapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/endpoints"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/notification"
)

// TestEndpointLifecycle: create, get, list, update with the version read,
// disable, enable, rotate, delete; each answer as the document says.
func TestEndpointLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	created := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/herald?token=abc","event_types":["invoice.*"],"headers":{"X-Team":"billing-secret"},"metadata":{"plan":"gold"},"description":"billing"}`)
	e := created.Endpoint
	require.True(t, endpoint.ValidID(e.ID), e.ID)
	require.Equal(t, int64(1), e.Version)
	require.Equal(t, "acme", e.Tenant)
	require.Equal(t, endpoints.KindWebhook, e.Kind, "kind defaults to webhook")
	require.Equal(t, "https://hooks.acme.example/herald?token=abc", e.URL, "a webhook's URL is shown")
	require.Equal(t, "hooks.acme.example", e.URLHost)
	require.Equal(t, []string{"X-Team"}, e.HeaderNames)
	require.Equal(t, endpoints.StateEnabled, e.State)
	require.Regexp(t, `^whsec_[A-Za-z0-9+/]+=*$`, created.Secret)
	stored, err := b.store.Get(t.Context(), e.ID)
	require.NoError(t, err)
	require.Equal(t, stored.Secrets[0].String(), created.Secret, "the secret is the stored one")

	resp := b.do(t, request{method: http.MethodGet, path: "/v1/endpoints/" + e.ID})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, `"1"`, resp.Headers["ETag"])
	got := decode[endpoints.Endpoint](t, resp)
	require.Equal(t, e.ID, got.ID)
	require.Len(t, got.Secrets, 1)
	require.NotContains(t, resp.Body, "whsec_", "get never shows a secret")
	require.NotContains(t, resp.Body, "billing-secret", "get never shows a header value")

	resp = b.do(t, request{method: http.MethodPatch, path: "/v1/endpoints/" + e.ID, header: withIfMatch(1), body: `{"description":"billing v2","event_types":[]}`})
	require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
	require.Equal(t, `"2"`, resp.Headers["ETag"])
	got = decode[endpoints.Endpoint](t, resp)
	require.Equal(t, "billing v2", got.Description)
	require.Empty(t, got.EventTypes, "[] subscribes to every type")
	require.Equal(t, []string{"X-Team"}, got.HeaderNames, "a member left out stays")

	resp = b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + e.ID + "/disable", header: jsonHeader, body: `{"reason":"customer asked"}`})
	require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
	got = decode[endpoints.Endpoint](t, resp)
	require.Equal(t, endpoints.StateDisabled, got.State)
	require.Equal(t, "customer asked", got.Disabled.Reason)
	require.Equal(t, "operator", got.Disabled.By)

	resp = b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + e.ID + "/enable"})
	require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
	require.Equal(t, endpoints.StateEnabled, decode[endpoints.Endpoint](t, resp).State)

	resp = b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + e.ID + "/rotate-secret", header: jsonHeader, body: `{"grace_seconds":3600}`})
	require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
	rotated := decode[endpoints.WithSecret](t, resp)
	require.NotEqual(t, created.Secret, rotated.Secret)
	require.Len(t, rotated.Endpoint.Secrets, 2)
	require.Equal(t, 2, rotated.Endpoint.Secrets[0].Version)
	require.NotNil(t, rotated.Endpoint.Secrets[1].Until, "the previous secret signs until its grace ends")
	require.WithinDuration(t, time.Now().Add(time.Hour), *rotated.Endpoint.Secrets[1].Until, time.Minute)

	resp = b.do(t, request{method: http.MethodDelete, path: "/v1/endpoints/" + e.ID, header: map[string]string{"If-Match": resp.Headers["ETag"]}})
	require.Equal(t, http.StatusNoContent, resp.StatusCode, resp.Body)
	require.Empty(t, resp.Body)
	requireProblem(t, b.do(t, request{method: http.MethodGet, path: "/v1/endpoints/" + e.ID}), http.StatusNotFound, endpoints.CodeNotFound, "")
}

// TestChatURLAndHeaderValuesAreNeverShown: after creation a chat
// endpoint's URL (a credential) shows only its host, in every answer that
// shows the endpoint; header values show nowhere; the secret only in the
// answers of create and rotate-secret.
func TestChatURLAndHeaderValuesAreNeverShown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const token = "T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX"
	created := b.create(t, `{"tenant":"acme","kind":"slack","url":"https://hooks.slack.com/services/`+token+`","headers":{"X-Key":"value-secret"}}`)
	require.Empty(t, created.Endpoint.URL, "a chat URL is not returned, not even by create")
	require.Equal(t, "hooks.slack.com", created.Endpoint.URLHost)
	id := created.Endpoint.ID
	answers := []request{
		{method: http.MethodGet, path: "/v1/endpoints/" + id},
		{method: http.MethodGet, path: "/v1/endpoints", query: url.Values{"tenant": {"acme"}}},
		{method: http.MethodPatch, path: "/v1/endpoints/" + id, header: withIfMatch(1), body: `{"description":"ops room"}`},
		{method: http.MethodPost, path: "/v1/endpoints/" + id + "/disable", header: jsonHeader, body: `{"reason":"maintenance"}`},
		{method: http.MethodPost, path: "/v1/endpoints/" + id + "/enable"},
		{method: http.MethodPost, path: "/v1/endpoints/" + id + "/rotate-secret"},
	}
	for _, r := range answers {
		resp := b.do(t, r)
		require.Less(t, resp.StatusCode, 300, "%s %s: %s", r.method, r.path, resp.Body)
		require.NotContains(t, resp.Body, token, "%s %s", r.method, r.path)
		require.NotContains(t, resp.Body, "/services/", "%s %s", r.method, r.path)
		require.NotContains(t, resp.Body, "value-secret", "%s %s", r.method, r.path)
		require.Equal(t, strings.HasSuffix(r.path, "/rotate-secret"), strings.Contains(resp.Body, "whsec_"), "%s %s: a secret only from rotate", r.method, r.path)
	}
}

// TestUpdateChecksTheVersion: If-Match is required (428), must be the
// current version (412, nothing written) and an ETag or a bare number.
func TestUpdateChecksTheVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h"}`).Endpoint.ID
	path := "/v1/endpoints/" + id
	requireProblem(t, b.do(t, request{method: http.MethodPatch, path: path, header: jsonHeader, body: `{"description":"x"}`}),
		http.StatusPreconditionRequired, endpoints.CodeVersionRequired, "If-Match")
	p := requireProblem(t, b.do(t, request{method: http.MethodPatch, path: path, header: withIfMatch(7), body: `{"description":"x"}`}),
		http.StatusPreconditionFailed, endpoints.CodeVersionMismatch, "If-Match")
	require.Contains(t, p.Message, "current version 1")
	for _, bad := range []string{`"abc"`, `*`, `"0"`, `-1`, `"1`, `01`, `"1", "2"`} {
		requireProblem(t, b.do(t, request{method: http.MethodPatch, path: path, header: map[string]string{"Content-Type": "application/json", "If-Match": bad}, body: `{"description":"x"}`}),
			http.StatusBadRequest, endpoints.CodeInvalidField, "If-Match")
	}
	got, err := b.store.Get(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, int64(1), got.Version, "nothing was written")
	require.Empty(t, got.Description)
	for i, good := range []string{`"1"`, `W/"2"`, `3`} {
		resp := b.do(t, request{method: http.MethodPatch, path: path, header: map[string]string{"Content-Type": "application/json", "If-Match": good}, body: `{"rate_limit":5}`})
		require.Equal(t, http.StatusOK, resp.StatusCode, "If-Match %s: %s", good, resp.Body)
		require.Equal(t, `"`+strconv.Itoa(i+2)+`"`, resp.Headers["ETag"])
	}
	// A delete with a stale version is refused; without If-Match it goes.
	requireProblem(t, b.do(t, request{method: http.MethodDelete, path: path, header: map[string]string{"If-Match": `"1"`}}),
		http.StatusPreconditionFailed, endpoints.CodeVersionMismatch, "If-Match")
	require.Equal(t, http.StatusNoContent, b.do(t, request{method: http.MethodDelete, path: path}).StatusCode)
}

// TestBadBodies: each kind of bad body is 400 (or 413, 415) naming the
// field, and nothing is written.
func TestBadBodies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	big := `{"tenant":"acme","url":"https://h.example/","description":"` + strings.Repeat("x", MaxRequestBytes) + `"}`
	cases := []struct {
		name          string
		header        map[string]string
		body          string
		status        int
		code, field   string
		messageSubstr string
	}{
		{"unknown member", jsonHeader, `{"tenant":"acme","url":"https://h.example/","secret":"whsec_AAAA"}`, 400, endpoints.CodeUnknownField, "secret", "secret"},
		{"member in another case", jsonHeader, `{"tenant":"acme","URL":"https://h.example/"}`, 400, endpoints.CodeUnknownField, "URL", ""},
		{"member twice", jsonHeader, `{"tenant":"acme","tenant":"beta","url":"https://h.example/"}`, 400, endpoints.CodeInvalidJSON, "tenant", "duplicate"},
		{"wrong type", jsonHeader, `{"tenant":"acme","url":"https://h.example/","rate_limit":"fast"}`, 400, endpoints.CodeInvalidField, "rate_limit", "a number"},
		{"wrong type in array", jsonHeader, `{"tenant":"acme","url":"https://h.example/","event_types":["a",7]}`, 400, endpoints.CodeInvalidField, "event_types[1]", "a string"},
		{"wrong type in map", jsonHeader, `{"tenant":"acme","url":"https://h.example/","headers":{"X-A":1}}`, 400, endpoints.CodeInvalidField, "headers.X-A", "a string"},
		{"wrong type under a key of digits", jsonHeader, `{"tenant":"acme","url":"https://h.example/","headers":{"1":1}}`, 400, endpoints.CodeInvalidField, "headers.1", "a string"},
		{"wrong type in metadata under a key of digits", jsonHeader, `{"tenant":"acme","url":"https://h.example/","metadata":{"42":true}}`, 400, endpoints.CodeInvalidField, "metadata.42", "a string"},
		{"not an object", jsonHeader, `["tenant"]`, 400, endpoints.CodeInvalidJSON, "", ""},
		{"not JSON", jsonHeader, `{"tenant":`, 400, endpoints.CodeInvalidJSON, "", ""},
		{"trailing data", jsonHeader, `{"tenant":"acme","url":"https://h.example/"} {}`, 400, endpoints.CodeInvalidJSON, "", ""},
		{"no body", jsonHeader, ``, 400, endpoints.CodeInvalidJSON, "", "required"},
		{"too large", jsonHeader, big, 413, endpoints.CodeBodyTooLarge, "", "65536"},
		{"no content type", nil, `{"tenant":"acme","url":"https://h.example/"}`, 415, endpoints.CodeUnsupportedMediaType, "Content-Type", ""},
		{"form content type", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `tenant=acme`, 415, endpoints.CodeUnsupportedMediaType, "Content-Type", ""},
		{"text content type", map[string]string{"content-type": "text/plain"}, `{"tenant":"acme","url":"https://h.example/"}`, 415, endpoints.CodeUnsupportedMediaType, "Content-Type", ""},
		{"other charset", map[string]string{"Content-Type": "application/json; charset=latin1"}, `{"tenant":"acme","url":"https://h.example/"}`, 415, endpoints.CodeUnsupportedMediaType, "Content-Type", ""},
		// The store's rules, named by their field.
		{"http URL", jsonHeader, `{"tenant":"acme","url":"http://h.example/"}`, 400, endpoints.CodeInvalidField, "url", ""},
		{"loopback URL", jsonHeader, `{"tenant":"acme","url":"https://127.0.0.1/hook"}`, 400, endpoints.CodeInvalidField, "url", ""},
		{"metadata IP URL", jsonHeader, `{"tenant":"acme","url":"https://169.254.169.254/latest"}`, 400, endpoints.CodeInvalidField, "url", ""},
		{"URL with userinfo", jsonHeader, `{"tenant":"acme","url":"https://u:p@h.example/"}`, 400, endpoints.CodeInvalidField, "url", ""},
		{"relative URL", jsonHeader, `{"tenant":"acme","url":"/hook"}`, 400, endpoints.CodeInvalidField, "url", ""},
		{"slack kind, other host", jsonHeader, `{"tenant":"acme","kind":"slack","url":"https://h.example/services/x"}`, 400, endpoints.CodeInvalidField, "url", ""},
		{"unknown kind", jsonHeader, `{"tenant":"acme","kind":"sms","url":"https://h.example/"}`, 400, endpoints.CodeInvalidField, "kind", ""},
		{"no tenant", jsonHeader, `{"url":"https://h.example/"}`, 400, endpoints.CodeInvalidField, "tenant", ""},
		{"hop-by-hop header", jsonHeader, `{"tenant":"acme","url":"https://h.example/","headers":{"Connection":"close"}}`, 400, endpoints.CodeInvalidField, "headers.Connection", ""},
		{"signature header", jsonHeader, `{"tenant":"acme","url":"https://h.example/","headers":{"webhook-signature":"v1,x"}}`, 400, endpoints.CodeInvalidField, "", ""},
		{"bad event type", jsonHeader, `{"tenant":"acme","url":"https://h.example/","event_types":["invoice paid"]}`, 400, endpoints.CodeInvalidField, "event_types[0]", ""},
		{"rate limit too high", jsonHeader, `{"tenant":"acme","url":"https://h.example/","rate_limit":1001}`, 400, endpoints.CodeInvalidField, "rate_limit", ""},
	}
	for _, c := range cases {
		resp := b.do(t, request{method: http.MethodPost, path: "/v1/endpoints", header: c.header, body: c.body})
		require.Equal(t, c.status, resp.StatusCode, "%s: %s", c.name, resp.Body)
		e := decode[endpoints.ErrorBody](t, resp).Error
		require.Equal(t, c.code, e.Code, "%s: %s", c.name, resp.Body)
		if c.field != "" {
			require.Equal(t, c.field, e.Field, "%s: %s", c.name, resp.Body)
		} else if c.code == endpoints.CodeInvalidField {
			require.NotEmpty(t, e.Field, "%s: an invalid field is named: %s", c.name, resp.Body)
		}
		require.Contains(t, e.Message, c.messageSubstr, c.name)
		require.NotContains(t, resp.Body, "whsec_AAAA", c.name)
	}
	page, err := b.store.List(t.Context(), endpoint.ListQuery{Limit: 100})
	require.NoError(t, err)
	require.Empty(t, page.Endpoints, "no bad body wrote an endpoint")
}

// TestBadPatchAndActionBodies: the other operations' bodies have their own
// members, and refuse others.
func TestBadPatchAndActionBodies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h"}`).Endpoint.ID
	p := "/v1/endpoints/" + id
	cases := []struct {
		name        string
		r           request
		status      int
		code, field string
	}{
		{"patch of nothing", request{method: http.MethodPatch, path: p, header: withIfMatch(1), body: `{}`}, 400, endpoints.CodeInvalidJSON, ""},
		{"patch of the tenant", request{method: http.MethodPatch, path: p, header: withIfMatch(1), body: `{"tenant":"beta"}`}, 400, endpoints.CodeUnknownField, "tenant"},
		{"patch of the id", request{method: http.MethodPatch, path: p, header: withIfMatch(1), body: `{"id":"ep_x"}`}, 400, endpoints.CodeUnknownField, "id"},
		{"patch to a blocked URL", request{method: http.MethodPatch, path: p, header: withIfMatch(1), body: `{"url":"https://10.0.0.1/"}`}, 400, endpoints.CodeInvalidField, "url"},
		{"patch of a bad header", request{method: http.MethodPatch, path: p, header: withIfMatch(1), body: `{"headers":{"Transfer-Encoding":"chunked"}}`}, 400, endpoints.CodeInvalidField, "headers.Transfer-Encoding"},
		{"patch as text", request{method: http.MethodPatch, path: p, header: map[string]string{"If-Match": `"1"`, "Content-Type": "text/plain"}, body: `{"description":"x"}`}, 415, endpoints.CodeUnsupportedMediaType, "Content-Type"},
		{"disable without reason", request{method: http.MethodPost, path: p + "/disable", header: jsonHeader, body: `{}`}, 400, endpoints.CodeInvalidField, "reason"},
		{"disable without body", request{method: http.MethodPost, path: p + "/disable"}, 400, endpoints.CodeInvalidJSON, ""},
		{"disable, reason too long", request{method: http.MethodPost, path: p + "/disable", header: jsonHeader, body: `{"reason":"` + strings.Repeat("r", MaxReasonChars+1) + `"}`}, 400, endpoints.CodeInvalidField, "reason"},
		{"disable, reason with a newline", request{method: http.MethodPost, path: p + "/disable", header: jsonHeader, body: `{"reason":"a\nb"}`}, 400, endpoints.CodeInvalidField, "reason"},
		{"disable, other member", request{method: http.MethodPost, path: p + "/disable", header: jsonHeader, body: `{"reason":"x","until":"tomorrow"}`}, 400, endpoints.CodeUnknownField, "until"},
		{"enable with a member", request{method: http.MethodPost, path: p + "/enable", header: jsonHeader, body: `{"force":true}`}, 400, endpoints.CodeUnknownField, "force"},
		{"rotate, negative grace", request{method: http.MethodPost, path: p + "/rotate-secret", header: jsonHeader, body: `{"grace_seconds":-1}`}, 400, endpoints.CodeInvalidField, "grace_seconds"},
		{"rotate, grace over 7 days", request{method: http.MethodPost, path: p + "/rotate-secret", header: jsonHeader, body: `{"grace_seconds":604801}`}, 400, endpoints.CodeInvalidField, "grace_seconds"},
		{"rotate, grace not whole", request{method: http.MethodPost, path: p + "/rotate-secret", header: jsonHeader, body: `{"grace_seconds":1.5}`}, 400, endpoints.CodeInvalidField, "grace_seconds"},
		{"rotate, grace as text", request{method: http.MethodPost, path: p + "/rotate-secret", header: jsonHeader, body: `{"grace":"24h"}`}, 400, endpoints.CodeUnknownField, "grace"},
		{"test, other member", request{method: http.MethodPost, path: p + "/test", header: jsonHeader, body: `{"type":"invoice.paid"}`}, 400, endpoints.CodeUnknownField, "type"},
		{"delete with a body member", request{method: http.MethodDelete, path: p, header: jsonHeader, body: `{"force":true}`}, 400, endpoints.CodeUnknownField, "force"},
	}
	for _, c := range cases {
		requireProblem(t, b.do(t, c.r), c.status, c.code, c.field)
	}
	got, err := b.store.Get(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, int64(1), got.Version, "no bad request wrote")
	require.Len(t, got.Secrets, 1)
}

// TestIDsAndRoutes: a malformed id names the field; an unknown endpoint
// is 404 for every operation on it; an unknown path 404 no_route; a known
// path with another method 405 with Allow.
func TestIDsAndRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	missing := endpoint.NewID()
	for _, r := range routes {
		if !strings.Contains(r.path, "{id}") {
			continue
		}
		req := request{method: r.method, path: strings.Replace(r.path, "{id}", "ep_nope", 1), header: withIfMatch(1)}
		if r.method == http.MethodPatch {
			req.body = `{"description":"x"}`
		}
		if r.operation == "disableEndpoint" {
			req.body = `{"reason":"x"}`
		}
		requireProblem(t, b.do(t, req), http.StatusBadRequest, endpoints.CodeInvalidField, "id")
		req.path = strings.Replace(r.path, "{id}", missing, 1)
		requireProblem(t, b.do(t, req), http.StatusNotFound, endpoints.CodeNotFound, "")
	}
	for _, p := range []string{"/", "/v1", "/v1/endpoint", "/v1/endpoints/", "/v2/endpoints", "/v1/endpoints/" + missing + "/rotate", "/v1/endpoints/" + missing + "/test/x"} {
		resp, err := b.h.Handle(t.Context(), request{method: http.MethodGet, path: p}.proxyEvent())
		require.NoError(t, err)
		requireProblem(t, resp, http.StatusNotFound, endpoints.CodeNoRoute, "")
	}
	resp, err := b.h.Handle(t.Context(), request{method: http.MethodPut, path: "/v1/endpoints/" + missing}.proxyEvent())
	require.NoError(t, err)
	requireProblem(t, resp, http.StatusMethodNotAllowed, endpoints.CodeMethodNotAllowed, "")
	require.Equal(t, "GET, PATCH, DELETE", resp.Headers["Allow"])
}

// TestListFiltersAndPages: the filters combine; pages follow next_cursor
// to the end, each endpoint once; bad filters name the parameter.
func TestListFiltersAndPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var acme []string
	for i := range 5 {
		e := b.create(t, `{"tenant":"acme","url":"https://h.example/`+strconv.Itoa(i)+`","event_types":["invoice.*"]}`).Endpoint
		acme = append(acme, e.ID)
	}
	b.create(t, `{"tenant":"beta","url":"https://h.example/b"}`)
	b.create(t, `{"tenant":"acme","url":"https://h.example/o","event_types":["order.created"]}`)
	disabled := acme[0]
	b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + disabled + "/disable", header: jsonHeader, body: `{"reason":"x"}`})

	var seen []string
	q := url.Values{"tenant": {"acme"}, "event_type": {"invoice.paid"}, "limit": {"2"}}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		resp := b.do(t, request{method: http.MethodGet, path: "/v1/endpoints", query: q})
		require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
		page := decode[endpoints.Page](t, resp)
		require.LessOrEqual(t, len(page.Data), 2)
		for _, e := range page.Data {
			require.Empty(t, e.Secrets, "list shows no secrets")
			seen = append(seen, e.ID)
		}
		if page.NextCursor == "" {
			break
		}
		q.Set("cursor", page.NextCursor)
	}
	slices.Sort(acme)
	require.Equal(t, acme, seen, "every acme endpoint subscribed to invoice.paid, once, in id order")

	resp := b.do(t, request{method: http.MethodGet, path: "/v1/endpoints", query: url.Values{"state": {"disabled"}}})
	page := decode[endpoints.Page](t, resp)
	require.Len(t, page.Data, 1)
	require.Equal(t, disabled, page.Data[0].ID, "ids made in one millisecond sort at random: the disabled one is not acme[0] once sorted")
	require.Equal(t, "x", page.Data[0].Disabled.Reason)

	for _, c := range []struct {
		q     url.Values
		field string
		code  string
	}{
		{url.Values{"state": {"paused"}}, "state", endpoints.CodeInvalidField},
		{url.Values{"state": {"Enabled"}}, "state", endpoints.CodeInvalidField},
		{url.Values{"limit": {"0"}}, "limit", endpoints.CodeInvalidField},
		{url.Values{"limit": {"101"}}, "limit", endpoints.CodeInvalidField},
		{url.Values{"limit": {"ten"}}, "limit", endpoints.CodeInvalidField},
		{url.Values{"limit": {"+5"}}, "limit", endpoints.CodeInvalidField},
		{url.Values{"tenant": {"acme corp"}}, "tenant", endpoints.CodeInvalidField},
		{url.Values{"tenant": {strings.Repeat("a", 129)}}, "tenant", endpoints.CodeInvalidField},
		{url.Values{"tenant": {""}}, "tenant", endpoints.CodeInvalidField},
		{url.Values{"event_type": {"invoice paid"}}, "event_type", endpoints.CodeInvalidField},
		{url.Values{"event_type": {"invoice.*"}}, "event_type", endpoints.CodeInvalidField},
		{url.Values{"tenant": {"acme", "beta"}}, "tenant", endpoints.CodeInvalidField},
		{url.Values{"kind": {"slack"}}, "kind", endpoints.CodeUnknownField},
		{url.Values{"page": {"2"}}, "page", endpoints.CodeUnknownField},
	} {
		resp, err := b.h.Handle(t.Context(), request{method: http.MethodGet, path: "/v1/endpoints", query: c.q}.proxyEvent())
		require.NoError(t, err)
		requireProblem(t, resp, http.StatusBadRequest, c.code, c.field)
	}
}

// TestSendATestEvent: the event queue gets an event of type herald.test
// for the endpoint's tenant naming the endpoint; a disabled endpoint is
// refused and nothing is queued.
func TestSendATestEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h","event_types":["invoice.*"]}`).Endpoint
	resp := b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + e.ID + "/test"})
	require.Equal(t, http.StatusAccepted, resp.StatusCode, resp.Body)
	queued := decode[endpoints.TestQueued](t, resp)
	resp = b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + e.ID + "/test", header: jsonHeader, body: `{"payload":{"invoice":"in_1"}}`})
	require.Equal(t, http.StatusAccepted, resp.StatusCode, resp.Body)

	msgs := b.sqs.Messages(b.queueURL)
	require.Len(t, msgs, 2)
	parsed, err := notification.Parse([]byte(msgs[0].Body))
	require.NoError(t, err, "the test event is a valid message of the contract")
	m := *parsed
	require.Equal(t, notification.ChannelEvent, m.Channel)
	require.Equal(t, queued.EventID, m.ID)
	require.Regexp(t, `^evt_[0-7][0-9a-hjkmnp-tv-z]{25}$`, m.ID)
	require.Equal(t, notification.Event{Tenant: "acme", Type: "herald.test", Payload: json.RawMessage(`{"test":true}`), Endpoint: e.ID}, *m.Event)
	require.NoError(t, json.Unmarshal([]byte(msgs[1].Body), &m))
	require.JSONEq(t, `{"invoice":"in_1"}`, string(m.Event.Payload))
	require.NotEqual(t, queued.EventID, m.ID)

	b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + e.ID + "/disable", header: jsonHeader, body: `{"reason":"x"}`})
	requireProblem(t, b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + e.ID + "/test"}), http.StatusConflict, endpoints.CodeEndpointDisabled, "")
	require.Len(t, b.sqs.Messages(b.queueURL), 2, "nothing queued for a disabled endpoint")

	// SQS failing is a 500 that says nothing of the queue.
	b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + e.ID + "/enable"})
	b.sqs.FailAction("SendMessage")
	p := requireProblem(t, b.do(t, request{method: http.MethodPost, path: "/v1/endpoints/" + e.ID + "/test"}), http.StatusInternalServerError, endpoints.CodeInternal, "")
	require.NotContains(t, p.Message, b.queueURL)
}

// TestFailuresNewestFirst: the failures route lists the newest first, at
// most limit.
func TestFailuresNewestFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.create(t, `{"tenant":"acme","url":"https://hooks.acme.example/h"}`).Endpoint.ID
	// An hour ago by the real clock the store reads: failures older than
	// endpoint.FailureRetention are left out, so a fixed date would fail
	// once it is that old.
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 3 {
		require.NoError(t, b.store.RecordFailure(t.Context(), id, endpoint.Failure{At: base.Add(time.Duration(i) * time.Minute), MessageID: "msg_" + strconv.Itoa(i), EventID: "evt_1", Class: "webhook_http_5xx", Reason: "HTTP 503 from hooks.acme.example", Attempt: i + 1}))
	}
	resp := b.do(t, request{method: http.MethodGet, path: "/v1/endpoints/" + id + "/failures", query: url.Values{"limit": {"2"}}})
	require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
	got := decode[endpoints.FailureList](t, resp).Data
	require.Len(t, got, 2)
	require.Equal(t, "msg_2", got[0].MessageID)
	require.Equal(t, 3, got[0].Attempt)
	require.Equal(t, "msg_1", got[1].MessageID)
	resp = b.do(t, request{method: http.MethodGet, path: "/v1/endpoints/" + id + "/failures"})
	require.Len(t, decode[endpoints.FailureList](t, resp).Data, 3)
	for _, bad := range []string{"0", "101", "x"} {
		requireProblem(t, b.do(t, request{method: http.MethodGet, path: "/v1/endpoints/" + id + "/failures", query: url.Values{"limit": {bad}}}), http.StatusBadRequest, endpoints.CodeInvalidField, "limit")
	}
}

// TestStoreFailureIsA500Logged: DynamoDB or KMS failing is a 500
// "internal" whose message names neither the table nor the error, and one
// log line with the operation, the endpoint and the error, without the
// endpoint's URL, header values or secret.
func TestStoreFailureIsA500Logged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var logs bytes.Buffer
	b.h.log = slog.New(slog.NewJSONHandler(&logs, nil))
	created := b.create(t, `{"tenant":"acme","kind":"slack","url":"https://hooks.slack.com/services/T0/B0/TOKENVALUE","headers":{"X-Key":"header-value"}}`)
	id := created.Endpoint.ID
	logs.Reset()

	b.db.Fail("GetItem", 1)
	p := requireProblem(t, b.do(t, request{method: http.MethodGet, path: "/v1/endpoints/" + id}), http.StatusInternalServerError, endpoints.CodeInternal, "")
	require.NotContains(t, p.Message, tableName)
	b.kms.Fail("GenerateDataKey", 1)
	requireProblem(t, b.do(t, request{method: http.MethodPost, path: "/v1/endpoints", header: jsonHeader, body: `{"tenant":"acme","url":"https://hooks.acme.example/h?token=QUERYSECRET"}`}), http.StatusInternalServerError, endpoints.CodeInternal, "")

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 2, logs.String())
	require.Contains(t, lines[0], `"operation":"get"`)
	require.Contains(t, lines[0], `"endpoint":"`+id+`"`)
	require.Contains(t, lines[1], `"operation":"create"`)
	for _, secret := range []string{"TOKENVALUE", "header-value", "QUERYSECRET", created.Secret} {
		require.NotContains(t, logs.String(), secret)
	}
	page, err := b.store.List(t.Context(), endpoint.ListQuery{Tenant: "acme"})
	require.NoError(t, err)
	require.Len(t, page.Endpoints, 1, "the failed create wrote nothing")
}
