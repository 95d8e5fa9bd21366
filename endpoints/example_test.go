package endpoints_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/heraldhq/herald/endpoints"
)

// Example registers an endpoint, then tries an update based on a version
// that is no longer the current one. (A stand-in answers as the API does;
// give New the stack's EndpointsApiUrl and your aws.Config.)
func Example() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.Method {
		case http.MethodPost:
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"endpoint":{"id":"ep_01m921tccrt0eax58fafvapteh","tenant":"acme","kind":"webhook","url":"https://hooks.acme.example/herald","url_host":"hooks.acme.example","state":"enabled","version":1,"created_at":"2026-12-05T10:00:00Z","updated_at":"2026-12-05T10:00:00Z"},"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`)
		case http.MethodPatch:
			w.WriteHeader(http.StatusPreconditionFailed)
			_, _ = io.WriteString(w, `{"error":{"code":"version_mismatch","field":"If-Match","message":"version 1 is not the current version 2: read the endpoint again"}}`)
		}
	}))
	defer api.Close()

	cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	c, err := endpoints.New(api.URL+"/api", cfg)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	created, err := c.Create(ctx, endpoints.CreateInput{Tenant: "acme", URL: "https://hooks.acme.example/herald", EventTypes: []string{"invoice.*"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(created.Endpoint.ID, "version", created.Endpoint.Version)
	fmt.Println("give the receiver:", created.Secret)

	description := "billing"
	_, err = c.Update(ctx, created.Endpoint.ID, 1, endpoints.Patch{Description: &description})
	var apiErr *endpoints.Error
	if errors.As(err, &apiErr) && apiErr.Code == endpoints.CodeVersionMismatch {
		fmt.Println("changed meanwhile:", apiErr.Field, apiErr.Status)
	}
	// Output:
	// ep_01m921tccrt0eax58fafvapteh version 1
	// give the receiver: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
	// changed meanwhile: If-Match 412
}
