package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/webhook"
)

func deliverEnv(extra map[string]string) func(string) string {
	m := map[string]string{
		"HERALD_QUEUE_URL":      "http://127.0.0.1:4566/000000000000/q",
		"HERALD_DLQ_URL":        "http://127.0.0.1:4566/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}
	for k, v := range extra {
		m[k] = v
	}
	return env(m)
}

func TestLoadDeliverWebhookPolicyDefaults(t *testing.T) {
	t.Parallel()
	d, err := config.LoadDeliver(deliverEnv(nil))
	require.NoError(t, err)
	require.Empty(t, d.WebhookStopStatuses, "every non-2xx but 410 is retried")
	require.Equal(t, webhook.ScopeDestination, d.WebhookSecretScope, "per-destination keys by default")
	require.Zero(t, d.FunctionTimeout)
	require.Zero(t, d.BatchingWindow)
}

func TestLoadDeliverWebhookPolicy(t *testing.T) {
	t.Parallel()
	d, err := config.LoadDeliver(deliverEnv(map[string]string{
		"HERALD_WEBHOOK_STOP_STATUSES":    " 404, 300,,599 ",
		"HERALD_WEBHOOK_SECRET_SCOPE":     "Shared",
		"HERALD_FUNCTION_TIMEOUT_SECONDS": "60",
		"HERALD_BATCHING_WINDOW_SECONDS":  "20",
	}))
	require.NoError(t, err)
	require.Equal(t, []int{404, 300, 599}, d.WebhookStopStatuses, "300 and 599, the ends, are stop statuses")
	require.Equal(t, webhook.ScopeShared, d.WebhookSecretScope)
	require.Equal(t, time.Minute, d.FunctionTimeout)
	require.Equal(t, 20*time.Second, d.BatchingWindow)
}

func TestLoadDeliverWebhookPolicyErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ key, value, want string }{
		"2xx stop status":  {"HERALD_WEBHOOK_STOP_STATUSES", "404,299", `HERALD_WEBHOOK_STOP_STATUSES: "299": want HTTP status codes from 300 to 599`},
		"600 stop status":  {"HERALD_WEBHOOK_STOP_STATUSES", "600", `"600"`},
		"word stop status": {"HERALD_WEBHOOK_STOP_STATUSES", "gone", `"gone"`},
		"unknown scope":    {"HERALD_WEBHOOK_SECRET_SCOPE", "per-url", `HERALD_WEBHOOK_SECRET_SCOPE: "per-url": want destination or shared`},
		"timeout too long": {"HERALD_FUNCTION_TIMEOUT_SECONDS", "901", "HERALD_FUNCTION_TIMEOUT_SECONDS"},
		"window too long":  {"HERALD_BATCHING_WINDOW_SECONDS", "301", "HERALD_BATCHING_WINDOW_SECONDS"},
		"negative window":  {"HERALD_BATCHING_WINDOW_SECONDS", "-1", "HERALD_BATCHING_WINDOW_SECONDS"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := config.LoadDeliver(deliverEnv(map[string]string{tc.key: tc.value}))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// WebhookSecretScope, which the herald commands read, agrees with
// LoadDeliver on every spelling.
func TestWebhookSecretScopeAgreesWithLoadDeliver(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "shared", "Shared", " SHARED ", "destination", "Destination", "per-url"} {
		d, derr := config.LoadDeliver(deliverEnv(map[string]string{"HERALD_WEBHOOK_SECRET_SCOPE": v}))
		scope, err := config.WebhookSecretScope(func(k string) string {
			if k == "HERALD_WEBHOOK_SECRET_SCOPE" {
				return v
			}
			return ""
		})
		if derr != nil {
			require.Error(t, err, v)
			require.ErrorContains(t, derr, err.Error(), v)
			continue
		}
		require.NoError(t, err, v)
		require.Equal(t, d.WebhookSecretScope, scope, v)
	}
}
