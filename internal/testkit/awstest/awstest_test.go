package awstest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/awstest"
)

// failing is an SQS stand-in that answers every call 500 and keeps each
// request's Authorization header.
type failing struct {
	mu    sync.Mutex
	auths []string
}

func (f *failing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.auths = append(f.auths, r.Header.Get("Authorization"))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte(`{"__type":"com.amazon.coral.service#InternalFailure","message":"injected"}`))
}

func (f *failing) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auths...)
}

func serve(t *testing.T) (*failing, string) {
	f := &failing{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// TestConfig: a client of Config calls the endpoint once for a call that
// fails with a retryable 500 (no SDK retries), unsigned (anonymous).
func TestConfig(t *testing.T) {
	t.Parallel()
	f, url := serve(t)
	cfg := awstest.Config(url)
	require.Equal(t, "us-east-1", cfg.Region)
	_, err := sqs.NewFromConfig(cfg).GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url + "/123456789012/q")})
	require.ErrorContains(t, err, "InternalFailure")
	require.Equal(t, []string{""}, f.calls(), "one call, no Authorization header")
}

// TestSetenv: the SDK's default configuration, loaded after Setenv, sends
// a service's calls to its endpoint, signed with the test credentials for
// Region, once each; a service not given goes to the closed port; an AWS_
// variable set before (a profile that does not exist) is emptied.
func TestSetenv(t *testing.T) { // t.Setenv: not parallel
	f, url := serve(t)
	t.Setenv("AWS_PROFILE", "no-such-profile")
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", url)
	awstest.Setenv(t, map[string]string{"SQS": url})

	cfg, err := awsconfig.LoadDefaultConfig(context.Background())
	require.NoError(t, err, "AWS_PROFILE emptied")
	require.Equal(t, awstest.Region, cfg.Region)
	_, err = sqs.NewFromConfig(cfg).GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url + "/123456789012/q")})
	require.ErrorContains(t, err, "InternalFailure")
	calls := f.calls()
	require.Len(t, calls, 1, "one attempt")
	require.Contains(t, calls[0], "Credential=AKIDTEST/")
	require.Contains(t, calls[0], "/us-east-1/sqs/aws4_request")

	_, err = dynamodb.NewFromConfig(cfg).ListTables(context.Background(), &dynamodb.ListTablesInput{})
	require.ErrorContains(t, err, "127.0.0.1:1", "a service not given goes to Unreachable")
	require.ErrorContains(t, err, "connection refused")
	require.Len(t, f.calls(), 1, "AWS_ENDPOINT_URL_DYNAMODB of before was emptied")
}
