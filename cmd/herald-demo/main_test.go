package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLocalOnly(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	require.NoError(t, localOnly(env(map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL_SESV2": "http://localhost:8005"})))
	require.NoError(t, localOnly(env(map[string]string{"AWS_ENDPOINT_URL": "http://[::1]:4566", "AWS_ENDPOINT_URL_SESV2": "http://127.0.0.2:8005"})))
	for _, m := range []map[string]string{
		{},
		{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566"},
		{"AWS_ENDPOINT_URL": "https://sqs.us-east-1.amazonaws.com", "AWS_ENDPOINT_URL_SESV2": "http://127.0.0.1:8005"},
		{"AWS_ENDPOINT_URL": "http://10.0.0.5:4566", "AWS_ENDPOINT_URL_SESV2": "http://127.0.0.1:8005"},
		{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL_SESV2": "http://127.0.0.1:8005", "AWS_ENDPOINT_URL_SQS": "https://u:p@sqs.example.com/x"},
	} {
		err := localOnly(env(m))
		require.Error(t, err, m)
		require.Contains(t, err.Error(), "make local-up")
		require.NotContains(t, err.Error(), "u:p@")
	}
}
