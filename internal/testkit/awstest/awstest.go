// Package awstest gives tests the AWS SDK configuration for a service
// stand-in on 127.0.0.1 (a wire-format fake or an httptest server): its
// endpoint, a Region, anonymous credentials and no SDK retries, so that each
// fault a test injects reaches the code under test once. Config builds a
// client's configuration; Setenv gives the same to code that loads the SDK's
// default configuration from the environment (a function's cold start).
package awstest

import (
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Region is the Region every test client names.
const Region = "us-east-1"

// Unreachable is the endpoint Setenv gives every service it is not told
// of: a closed port on 127.0.0.1, so that a call a test did not plan for
// fails at once (connection refused) instead of leaving the machine.
const Unreachable = "http://127.0.0.1:1"

// Config returns the configuration of a client of the service at endpoint
// (a URL such as httptest.Server.URL); pass it to a service's NewFromConfig.
func Config(endpoint string) aws.Config {
	return aws.Config{
		Region:           Region,
		Credentials:      aws.AnonymousCredentials{},
		BaseEndpoint:     aws.String(endpoint),
		RetryMaxAttempts: 1,
	}
}

// Setenv sets, for the rest of t, the environment the SDK's default
// configuration chain (config.LoadDefaultConfig) reads: Region (AWS_REGION),
// static test credentials, one attempt per call (AWS_MAX_ATTEMPTS=1), no
// shared config or credentials file and no instance metadata, and each
// service's endpoint from endpoints, keyed by the service's suffix of the
// SDK's variable AWS_ENDPOINT_URL_<SERVICE> ("SQS", "LAMBDA", "DYNAMODB",
// "EVENTBRIDGE", "SESV2", "SECRETS_MANAGER"); every other service is sent to
// [Unreachable] (AWS_ENDPOINT_URL). Every other AWS_ variable of the
// process is emptied first. Like t.Setenv, it cannot be used in a parallel
// test.
func Setenv(t testing.TB, endpoints map[string]string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "")
		}
	}
	for k, v := range map[string]string{
		"AWS_REGION":                  Region,
		"AWS_ACCESS_KEY_ID":           "AKIDTEST",
		"AWS_SECRET_ACCESS_KEY":       "test-secret",
		"AWS_MAX_ATTEMPTS":            "1",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_ENDPOINT_URL":            Unreachable,
	} {
		t.Setenv(k, v)
	}
	for service, url := range endpoints {
		t.Setenv("AWS_ENDPOINT_URL_"+service, url)
	}
}
