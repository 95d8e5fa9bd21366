package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/notification"
)

func TestLoadDeliverStore(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"HERALD_QUEUE_URL":      "http://127.0.0.1:4566/000000000000/q",
		"HERALD_DLQ_URL":        "http://127.0.0.1:4566/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}

	d, err := config.LoadDeliver(env(base))
	require.NoError(t, err)
	require.False(t, d.DeliveredOnce(), "no table, no store")
	require.Equal(t, 24*time.Hour, d.DeliveredOnceWindow)
	require.False(t, d.SendOnStoreError)

	d, err = config.LoadDeliver(env(with("HERALD_STORE_TABLE", " herald-store ")))
	require.NoError(t, err)
	require.Equal(t, "herald-store", d.StoreTable)
	require.True(t, d.DeliveredOnce())

	d, err = config.LoadDeliver(env(with("HERALD_STORE_TABLE", "herald-store", "HERALD_DELIVERED_ONCE_WINDOW_SECONDS", "0")))
	require.NoError(t, err)
	require.False(t, d.DeliveredOnce(), "a window of 0 turns it off")

	d, err = config.LoadDeliver(env(with("HERALD_DELIVERED_ONCE_WINDOW_SECONDS", "1209600", "HERALD_ON_STORE_ERROR", "SEND")))
	require.NoError(t, err)
	require.Equal(t, 14*24*time.Hour, d.DeliveredOnceWindow)
	require.True(t, d.SendOnStoreError)

	_, err = config.LoadDeliver(env(with("HERALD_DELIVERED_ONCE_WINDOW_SECONDS", "1209601", "HERALD_ON_STORE_ERROR", "drop")))
	require.ErrorContains(t, err, `HERALD_DELIVERED_ONCE_WINDOW_SECONDS: "1209601": want a whole number from 0 to 1209600`)
	require.ErrorContains(t, err, `HERALD_ON_STORE_ERROR: "drop": want retry or send`)
	_, err = config.LoadDeliver(env(with("HERALD_DELIVERED_ONCE_WINDOW_SECONDS", "-1")))
	require.ErrorContains(t, err, "HERALD_DELIVERED_ONCE_WINDOW_SECONDS")
}

func TestLoadDeliverCircuit(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"HERALD_QUEUE_URL":      "http://127.0.0.1:4566/000000000000/q",
		"HERALD_DLQ_URL":        "http://127.0.0.1:4566/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}
	d, err := config.LoadDeliver(env(base))
	require.NoError(t, err)
	require.Equal(t, 10, d.CircuitThreshold)
	require.Equal(t, time.Minute, d.CircuitProbeInterval)
	require.Equal(t, 5*24*time.Hour, d.DestinationDisableAfter)
	require.Empty(t, d.EventBus, "no bus, no events")
	require.False(t, d.Circuit(), "no table, no circuit")

	base["HERALD_STORE_TABLE"] = "herald-store"
	base["HERALD_DELIVERED_ONCE_WINDOW_SECONDS"] = "0"
	d, err = config.LoadDeliver(env(base))
	require.NoError(t, err)
	require.True(t, d.Circuit(), "the circuit does not need delivered-once")
	require.False(t, d.DeliveredOnce())

	base["HERALD_CIRCUIT_THRESHOLD"] = "0"
	base["HERALD_CIRCUIT_PROBE_INTERVAL_SECONDS"] = "43200"
	base["HERALD_DESTINATION_DISABLE_AFTER_SECONDS"] = "2592000"
	base["HERALD_EVENT_BUS"] = " default "
	d, err = config.LoadDeliver(env(base))
	require.NoError(t, err)
	require.Equal(t, "default", d.EventBus)
	require.Equal(t, 30*24*time.Hour, d.DestinationDisableAfter)
	require.False(t, d.Circuit(), "a threshold of 0 turns it off")
	require.Equal(t, 12*time.Hour, d.CircuitProbeInterval)

	base["HERALD_CIRCUIT_THRESHOLD"] = "1001"
	base["HERALD_CIRCUIT_PROBE_INTERVAL_SECONDS"] = "0"
	base["HERALD_DESTINATION_DISABLE_AFTER_SECONDS"] = "2592001"
	_, err = config.LoadDeliver(env(base))
	require.ErrorContains(t, err, `HERALD_DESTINATION_DISABLE_AFTER_SECONDS: "2592001": want a whole number from 0 to 2592000`)
	require.ErrorContains(t, err, `HERALD_CIRCUIT_THRESHOLD: "1001": want a whole number from 0 to 1000`)
	require.ErrorContains(t, err, `HERALD_CIRCUIT_PROBE_INTERVAL_SECONDS: "0": want a whole number from 1 to 43200`)
}

// TestLoadDeliveredOnceChannels: email and chat by default (unset or
// empty); any list of known channels, in any case, once each; an unknown
// or repeated channel is refused, naming the variable.
func TestLoadDeliveredOnceChannels(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"HERALD_QUEUE_URL":      "http://127.0.0.1:4566/000000000000/q",
		"HERALD_DLQ_URL":        "http://127.0.0.1:4566/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"HERALD_STORE_TABLE":    "herald-store",
	}
	load := func(v string, set bool) (config.Deliver, error) {
		m := map[string]string{}
		for k, x := range base {
			m[k] = x
		}
		if set {
			m["HERALD_DELIVERED_ONCE_CHANNELS"] = v
		}
		return config.LoadDeliver(env(m))
	}
	for v, want := range map[string][]notification.Channel{
		"":                      {notification.ChannelEmail, notification.ChannelChat},
		" , ":                   {notification.ChannelEmail, notification.ChannelChat},
		"webhook":               {notification.ChannelWebhook},
		"EMAIL,Webhook , chat ": {notification.ChannelEmail, notification.ChannelWebhook, notification.ChannelChat},
		"chat,":                 {notification.ChannelChat},
	} {
		d, err := load(v, true)
		require.NoError(t, err, "%q", v)
		require.Equal(t, want, d.DeliveredOnceChannels, "%q", v)
	}
	d, err := load("", false)
	require.NoError(t, err)
	require.Equal(t, config.DefaultDeliveredOnceChannels, d.DeliveredOnceChannels)
	d.DeliveredOnceChannels[0] = "x"
	require.Equal(t, notification.ChannelEmail, config.DefaultDeliveredOnceChannels[0], "the default is not shared")

	for v, msg := range map[string]string{
		"sms":           `HERALD_DELIVERED_ONCE_CHANNELS: "sms": want channel names (email, webhook, chat), comma-separated`,
		"email,webhoks": `HERALD_DELIVERED_ONCE_CHANNELS: "webhoks": want channel names`,
		"email,EMAIL":   `HERALD_DELIVERED_ONCE_CHANNELS: "email" named twice`,
		"none":          `HERALD_DELIVERED_ONCE_CHANNELS: "none": want channel names`,
	} {
		_, err := load(v, true)
		require.ErrorContains(t, err, msg, "%q", v)
	}
}
