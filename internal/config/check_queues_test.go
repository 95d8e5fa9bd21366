package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
)

func TestLoadDeliverCheckQueues(t *testing.T) {
	t.Parallel()
	base := map[string]string{"HERALD_QUEUE_URL": "q", "HERALD_DLQ_URL": "d", "HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
	with := func(v string) map[string]string {
		m := map[string]string{"HERALD_CHECK_QUEUES": v}
		for k, val := range base {
			m[k] = val
		}
		return m
	}
	d, err := config.LoadDeliver(env(base))
	require.NoError(t, err)
	require.True(t, d.CheckQueues, "on by default")
	d, err = config.LoadDeliver(env(with("false")))
	require.NoError(t, err)
	require.False(t, d.CheckQueues)
	_, err = config.LoadDeliver(env(with("maybe")))
	require.ErrorContains(t, err, `HERALD_CHECK_QUEUES: "maybe": want true or false`)
}
