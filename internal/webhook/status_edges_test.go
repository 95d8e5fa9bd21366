package webhook_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSendRedirectRangeEnds: 300 and 399 are redirects, never followed and
// named as such; 299 is delivered.
func TestSendRedirectRangeEnds(t *testing.T) {
	t.Parallel()
	for _, code := range []int{300, 399} {
		b := setup(t, status(code))
		err := b.sender.Send(t.Context(), message(b.srv.URL))
		require.ErrorContains(t, err, "redirects are not followed", "HTTP %d", code)
	}
	b := setup(t, status(299))
	require.NoError(t, b.sender.Send(t.Context(), message(b.srv.URL)))
}
