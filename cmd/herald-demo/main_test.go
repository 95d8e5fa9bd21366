package main

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
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

// TestDemoEnvLoadsAsTheInProcessDemo: a deployed function given demoEnv
// loads the settings the in-process demo uses, keeps the rest of its
// deployed environment, and the deployed map is left as it was.
func TestDemoEnvLoadsAsTheInProcessDemo(t *testing.T) {
	t.Parallel()
	deployed := map[string]string{
		"HERALD_QUEUE_URL": "http://127.0.0.1:4566/queue/us-east-1/000000000000/q", "HERALD_DLQ_URL": "http://127.0.0.1:4566/queue/us-east-1/000000000000/d",
		"HERALD_MAX_RECEIVE_COUNT": "13", "HERALD_WEBHOOK_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:000000000000:secret:s-AbCdEf",
		"HERALD_BACKOFF_BASE_SECONDS": "60", "HERALD_LOG_LEVEL": "INFO", "HERALD_WEBHOOK_SECRET_VERSION": "1",
		"HERALD_STORE_TABLE": "herald-local-StoreTable-1",
	}
	env := demoEnv(deployed, "/tmp/demo.pem", time.Unix(1796000000, 0))
	require.Equal(t, "60", deployed["HERALD_BACKOFF_BASE_SECONDS"], "the deployed environment is not changed")
	cfg, err := config.LoadDeliver(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, demoBackoffBase, cfg.BackoffBase)
	require.Equal(t, demoBackoffCap, cfg.BackoffCap)
	require.Equal(t, demoWebhookTimeout, cfg.WebhookTimeout)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix(demoAllowCIDR)}, cfg.WebhookAllowCIDRs)
	require.Equal(t, []string{demoChatHost}, cfg.ChatAllowHosts)
	require.Equal(t, deployed["HERALD_QUEUE_URL"], cfg.QueueURL, "the rest as deployed")
	require.False(t, cfg.DeliveredOnce(), "the demo's fixed ids are sent on every run")
	require.Equal(t, "DEBUG", env["HERALD_LOG_LEVEL"], "every line names its SQS message id")
	require.Equal(t, "/tmp/demo.pem", env["SSL_CERT_FILE"])
	require.NotEqual(t, deployed["HERALD_WEBHOOK_SECRET_VERSION"], env["HERALD_WEBHOOK_SECRET_VERSION"], "fresh execution environments")
}
