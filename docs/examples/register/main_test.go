package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/endpoints"
)

// TestRegister: the guide's Go sample posts the endpoint to the API,
// signed for execute-api, and returns the API's refusal as an
// *endpoints.Error naming the field.
func TestRegister(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []map[string]any
	refuse := false
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		require.Equal(t, "/api/v1/endpoints", r.URL.Path)
		require.True(t, strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKID/"), r.Header.Get("Authorization"))
		require.Contains(t, r.Header.Get("Authorization"), "/eu-west-1/execute-api/aws4_request")
		mu.Lock()
		got = append(got, m)
		no := refuse
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if no {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"code":"invalid","field":"event_types[0]","message":"not an event type or prefix"}}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"endpoint":{"id":"ep_01m921tccrt0eax58fafvapteh","tenant":"acme","kind":"webhook","url":"https://hooks.acme.example/herald","url_host":"hooks.acme.example","state":"enabled","version":1,"created_at":"2026-12-05T10:00:00Z","updated_at":"2026-12-05T10:00:00Z"},"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`)
	}))
	t.Cleanup(api.Close)
	c, err := endpoints.New(api.URL+"/api", aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", "")})
	require.NoError(t, err)
	require.NoError(t, register(context.Background(), c))
	require.Equal(t, []map[string]any{{"tenant": "acme", "url": "https://hooks.acme.example/herald", "description": "Acme's billing system",
		"event_types": []any{"invoice.*", "customer.deleted"}}}, got)

	mu.Lock()
	refuse = true
	mu.Unlock()
	err = register(context.Background(), c)
	var ae *endpoints.Error
	require.True(t, errors.As(err, &ae), "%v", err)
	require.Equal(t, "event_types[0]", ae.Field)
}
