package config_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDeliverDefaults(t *testing.T) {
	t.Parallel()
	d, err := config.LoadDeliver(env(map[string]string{
		"HERALD_QUEUE_URL":      "http://127.0.0.1:4566/000000000000/q",
		"HERALD_DLQ_URL":        "http://127.0.0.1:4566/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}))
	require.NoError(t, err)
	require.Equal(t, 13, d.MaxReceiveCount)
	require.Equal(t, 60*time.Second, d.BackoffBase)
	require.Equal(t, 6*time.Hour, d.BackoffCap)
	require.Equal(t, 10, d.Concurrency)
	require.Equal(t, 15*time.Second, d.WebhookTimeout)
	require.Equal(t, slog.LevelInfo, d.LogLevel)
}

func TestLoadDeliverNamesEveryBadVariable(t *testing.T) {
	t.Parallel()
	_, err := config.LoadDeliver(env(map[string]string{
		"HERALD_MAX_RECEIVE_COUNT":    "zero",
		"HERALD_BACKOFF_CAP_SECONDS":  "86400",
		"HERALD_WEBHOOK_TIMEOUT_MS":   "5",
		"HERALD_LOG_LEVEL":            "LOUD",
		"HERALD_BACKOFF_BASE_SECONDS": "30",
	}))
	require.Error(t, err)
	for _, name := range []string{
		"HERALD_QUEUE_URL: required", "HERALD_DLQ_URL: required", "HERALD_WEBHOOK_SECRET: required",
		`HERALD_MAX_RECEIVE_COUNT: "zero": want a whole number from 1 to 1000`,
		`HERALD_BACKOFF_CAP_SECONDS: "86400": want a whole number from 1 to 43200`,
		`HERALD_WEBHOOK_TIMEOUT_MS: "5"`, `HERALD_LOG_LEVEL: "LOUD"`,
	} {
		require.Contains(t, err.Error(), name)
	}
}

func TestLoadDeliverBaseAboveCap(t *testing.T) {
	t.Parallel()
	_, err := config.LoadDeliver(env(map[string]string{
		"HERALD_QUEUE_URL": "q", "HERALD_DLQ_URL": "d", "HERALD_WEBHOOK_SECRET": "whsec_x",
		"HERALD_BACKOFF_BASE_SECONDS": "600", "HERALD_BACKOFF_CAP_SECONDS": "60",
	}))
	require.ErrorContains(t, err, "HERALD_BACKOFF_BASE_SECONDS: 600 is above HERALD_BACKOFF_CAP_SECONDS (60)")
}

func TestLoadRetention(t *testing.T) {
	t.Parallel()
	r, err := config.LoadRetention(env(map[string]string{"HERALD_DLQ_URL": "d", "HERALD_DLQ_MAX_AGE_HOURS": "24"}))
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, r.MaxAge)
	_, err = config.LoadRetention(env(map[string]string{"HERALD_DLQ_MAX_AGE_HOURS": "400"}))
	require.ErrorContains(t, err, "HERALD_DLQ_URL: required")
	require.ErrorContains(t, err, "HERALD_DLQ_MAX_AGE_HOURS")
}
