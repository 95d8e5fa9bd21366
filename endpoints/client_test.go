package endpoints_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/endpoints"
)

// seen is one request the test server got.
type seen struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// server answers every request with status and body, and records it.
func server(t *testing.T, status int, body string) (*endpoints.Client, *[]seen) {
	t.Helper()
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), b})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	c, err := endpoints.New(srv.URL+"/_aws/execute-api/abc123/api/", cfg)
	require.NoError(t, err)
	c.Now = func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }
	return c, &got
}

// TestClientSignsForExecuteAPI: every request carries a Signature Version
// 4 Authorization for the service execute-api in the config's Region,
// over the host, the date and the body's hash.
func TestClientSignsForExecuteAPI(t *testing.T) {
	t.Parallel()
	c, got := server(t, http.StatusCreated, `{"endpoint":{"id":"ep_1","tenant":"acme","kind":"webhook","url_host":"h.example","state":"enabled","version":1,"created_at":"2026-12-01T10:00:00Z","updated_at":"2026-12-01T10:00:00Z"},"secret":"whsec_AAAA"}`)
	out, err := c.Create(context.Background(), endpoints.CreateInput{Tenant: "acme", URL: "https://h.example/"})
	require.NoError(t, err)
	require.Equal(t, "whsec_AAAA", out.Secret)
	require.Equal(t, int64(1), out.Endpoint.Version)
	r := (*got)[0]
	require.Equal(t, http.MethodPost, r.method)
	require.Equal(t, "/_aws/execute-api/abc123/api/v1/endpoints", r.path)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.JSONEq(t, `{"tenant":"acme","url":"https://h.example/"}`, string(r.body))
	auth := r.header.Get("Authorization")
	require.True(t, strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261201/eu-west-1/execute-api/aws4_request, SignedHeaders="), auth)
	require.Contains(t, auth, "host")
	require.Contains(t, auth, "x-amz-date")
	require.Equal(t, "20261201T100000Z", r.header.Get("X-Amz-Date"))

	// Another body, another signature.
	_, err = c.Create(context.Background(), endpoints.CreateInput{Tenant: "beta", URL: "https://h.example/"})
	require.NoError(t, err)
	require.NotEqual(t, auth, (*got)[1].header.Get("Authorization"))
}

// TestClientRequests: each method's path, query, If-Match and body.
func TestClientRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, got := server(t, http.StatusOK, `{}`)
	const id = "ep_01m921tccrt0eax58fafvapteh"
	_, _ = c.List(ctx, endpoints.ListQuery{Tenant: "acme", State: endpoints.StateDisabled, Limit: 5, Cursor: "c/1"})
	_, _ = c.Get(ctx, id)
	_, _ = c.Update(ctx, id, 3, endpoints.Patch{Description: aws.String("d")})
	_, _ = c.Disable(ctx, id, "why")
	_, _ = c.RotateSecret(ctx, id, 90*time.Minute)
	_, _ = c.RotateSecret(ctx, id, -1)
	_, _ = c.Test(ctx, id, json.RawMessage(`{"a":1}`))
	_, _ = c.Failures(ctx, id, 7)
	want := []struct{ method, path, query, ifMatch, body string }{
		{"GET", "/v1/endpoints", "cursor=c%2F1&limit=5&state=disabled&tenant=acme", "", ""},
		{"GET", "/v1/endpoints/" + id, "", "", ""},
		{"PATCH", "/v1/endpoints/" + id, "", `"3"`, `{"description":"d"}`},
		{"POST", "/v1/endpoints/" + id + "/disable", "", "", `{"reason":"why"}`},
		{"POST", "/v1/endpoints/" + id + "/rotate-secret", "", "", `{"grace_seconds":5400}`},
		{"POST", "/v1/endpoints/" + id + "/rotate-secret", "", "", `{}`},
		{"POST", "/v1/endpoints/" + id + "/test", "", "", `{"payload":{"a":1}}`},
		{"GET", "/v1/endpoints/" + id + "/failures", "limit=7", "", ""},
	}
	require.Len(t, *got, len(want))
	for i, w := range want {
		r := (*got)[i]
		require.Equal(t, w.method, r.method, i)
		require.Equal(t, "/_aws/execute-api/abc123/api"+w.path, r.path, i)
		require.Equal(t, w.query, r.query, i)
		require.Equal(t, w.ifMatch, r.header.Get("If-Match"), i)
		if w.body == "" {
			require.Empty(t, r.body, i)
			require.Empty(t, r.header.Get("Content-Type"), i)
		} else {
			require.JSONEq(t, w.body, string(r.body), i)
		}
	}
}

// TestClientErrors: the API's error body becomes an *Error with its
// status, code and field; API Gateway's own answers keep their message.
func TestClientErrors(t *testing.T) {
	t.Parallel()
	c, _ := server(t, http.StatusBadRequest, `{"error":{"code":"invalid_field","field":"url","message":"must be https"}}`)
	_, err := c.Create(context.Background(), endpoints.CreateInput{Tenant: "acme", URL: "http://h.example/"})
	var e *endpoints.Error
	require.True(t, errors.As(err, &e), "%v", err)
	require.Equal(t, endpoints.Error{Status: 400, Code: endpoints.CodeInvalidField, Field: "url", Message: "must be https"}, *e)
	require.Equal(t, "url: must be https (invalid_field, HTTP 400)", err.Error())

	c, _ = server(t, http.StatusForbidden, `{"message":"Missing Authentication Token"}`)
	_, err = c.Get(context.Background(), "ep_x")
	require.True(t, errors.As(err, &e))
	require.Equal(t, 403, e.Status)
	require.Equal(t, "Missing Authentication Token", e.Message)

	c, _ = server(t, http.StatusBadGateway, `{"message": "Internal server error"}`)
	err = c.Delete(context.Background(), "ep_x", 0)
	require.True(t, errors.As(err, &e))
	require.Equal(t, endpoints.CodeInternal, e.Code)
}

// TestNewRefusesWhatCannotSign: a relative URL, no Region, no credentials.
func TestNewRefusesWhatCannotSign(t *testing.T) {
	t.Parallel()
	cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	_, err := endpoints.New("/api", cfg)
	require.ErrorContains(t, err, "absolute")
	_, err = endpoints.New("ftp://h/api", cfg)
	require.ErrorContains(t, err, "absolute")
	_, err = endpoints.New("https://h/api", aws.Config{Credentials: cfg.Credentials})
	require.ErrorContains(t, err, "Region")
	_, err = endpoints.New("https://h/api", aws.Config{Region: "eu-west-1"})
	require.ErrorContains(t, err, "credentials")
}
