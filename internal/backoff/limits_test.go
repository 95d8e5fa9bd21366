package backoff_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/backoff"
)

// TestLimitsAreSQSs: the limits are the SQS figures, written out here as
// the SQS API Reference gives them (ChangeMessageVisibility
// VisibilityTimeout 0–43,200 s) and the Lambda timeout limit (900 s).
func TestLimitsAreSQSs(t *testing.T) {
	t.Parallel()
	require.Equal(t, 43200*time.Second, backoff.MaxVisibilityTimeout)
	require.Equal(t, (43200-900)*time.Second, backoff.MaxDelay)
	require.Equal(t, 60*time.Second, backoff.DefaultBase)
	require.Equal(t, 21600*time.Second, backoff.DefaultCap)
}
