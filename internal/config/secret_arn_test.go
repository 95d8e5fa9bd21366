package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
)

// TestLoadDeliverNeverQuotesASecretGivenAsTheARN: a setup error is logged
// (the paused function's ERROR line), so the secret itself pasted into
// HERALD_WEBHOOK_SECRET_ARN is not quoted back; the error says what it is.
func TestLoadDeliverNeverQuotesASecretGivenAsTheARN(t *testing.T) {
	t.Parallel()
	for _, value := range []string{
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw,whsec_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
	} {
		_, err := config.LoadDeliver(env(map[string]string{
			"HERALD_QUEUE_URL": "q", "HERALD_DLQ_URL": "d", "HERALD_WEBHOOK_SECRET_ARN": value,
		}))
		require.ErrorContains(t, err, "HERALD_WEBHOOK_SECRET_ARN: ")
		require.ErrorContains(t, err, "HERALD_WEBHOOK_SECRET")
		require.NotContains(t, err.Error(), "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
		require.NotContains(t, err.Error(), "AbCdEfGhIjKlMnOp")
	}
}
