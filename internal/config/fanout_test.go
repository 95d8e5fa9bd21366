package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/redrive"
)

func fanoutEnv(over map[string]string) func(string) string {
	env := map[string]string{
		"HERALD_EVENT_QUEUE_URL":   "https://sqs/e",
		"HERALD_EVENT_DLQ_URL":     "https://sqs/e-dlq",
		"HERALD_WEBHOOK_QUEUE_URL": "https://sqs/w",
		"HERALD_CHAT_QUEUE_URL":    "https://sqs/c",
		"HERALD_STORE_TABLE":       "herald",
	}
	for k, v := range over {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

// TestLoadFanout: the fan-out function reads the event queue pair, the
// delivery queues, the table and the deliver function's retry settings.
func TestLoadFanout(t *testing.T) {
	t.Parallel()
	f, err := config.LoadFanout(fanoutEnv(nil))
	require.NoError(t, err)
	require.Equal(t, redrive.Queue{Channel: "event", URL: "https://sqs/e", DeadLetterURL: "https://sqs/e-dlq"}, f.EventQueue)
	require.Equal(t, "https://sqs/w", f.WebhookQueueURL)
	require.Equal(t, "https://sqs/c", f.ChatQueueURL)
	require.Equal(t, "herald", f.StoreTable)
	require.Equal(t, 13, f.MaxReceiveCount)
	require.Equal(t, config.DefaultFanoutConcurrency, f.Concurrency)
	require.Equal(t, 24*time.Hour, f.Window)
	require.Equal(t, 60*time.Second, f.Backoff().Base)

	for name, want := range map[string]string{
		"HERALD_EVENT_QUEUE_URL":   "HERALD_EVENT_QUEUE_URL: required with HERALD_EVENT_DLQ_URL",
		"HERALD_EVENT_DLQ_URL":     "HERALD_EVENT_DLQ_URL: required with HERALD_EVENT_QUEUE_URL",
		"HERALD_CHAT_QUEUE_URL":    "HERALD_CHAT_QUEUE_URL: required by the fan-out function",
		"HERALD_WEBHOOK_QUEUE_URL": "HERALD_WEBHOOK_QUEUE_URL: required by the fan-out function",
		"HERALD_STORE_TABLE":       "HERALD_STORE_TABLE: required by the fan-out function",
	} {
		_, err := config.LoadFanout(fanoutEnv(map[string]string{name: ""}))
		require.ErrorContains(t, err, want, name)
	}
	_, err = config.LoadFanout(fanoutEnv(map[string]string{"HERALD_EVENT_QUEUE_URL": "", "HERALD_EVENT_DLQ_URL": "", "HERALD_CONCURRENCY": "0"}))
	require.ErrorContains(t, err, "HERALD_EVENT_QUEUE_URL: required, with HERALD_EVENT_DLQ_URL")
	require.ErrorContains(t, err, "HERALD_CONCURRENCY")
}

// TestDeliverIgnoresTheEventQueue: the deliver function does not serve the
// event queue (the fan-out function does), and delivered-once names no
// event channel.
func TestDeliverIgnoresTheEventQueue(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"HERALD_WEBHOOK_QUEUE_URL": "https://sqs/w", "HERALD_WEBHOOK_DLQ_URL": "https://sqs/w-dlq",
		"HERALD_EVENT_QUEUE_URL": "https://sqs/e", "HERALD_EVENT_DLQ_URL": "https://sqs/e-dlq",
		"HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}
	d, err := config.LoadDeliver(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, []redrive.Queue{{Channel: "webhook", URL: "https://sqs/w", DeadLetterURL: "https://sqs/w-dlq"}}, d.Queues)
	env["HERALD_DELIVERED_ONCE_CHANNELS"] = "email,event"
	_, err = config.LoadDeliver(func(k string) string { return env[k] })
	require.ErrorContains(t, err, `"event": want channel names (email, webhook, chat)`)
}
