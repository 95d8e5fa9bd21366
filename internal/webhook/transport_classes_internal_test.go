package webhook

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/outbound"
)

// TestEveryTransportFailureHasAClass: each kind outbound.TransportFailure
// returns is a webhook class of its own, transient and origin-down.
func TestEveryTransportFailureHasAClass(t *testing.T) {
	t.Parallel()
	seen := map[delivery.Class]bool{}
	for _, f := range outbound.Failures {
		c, ok := transportClasses[f]
		require.True(t, ok, "%s has no class", f)
		require.Equal(t, delivery.Class("webhook_"+string(f)), c)
		require.True(t, delivery.OriginDown(c), "%s", c)
		require.False(t, seen[c], "%s twice", c)
		seen[c] = true
	}
	err := target{id: "n-1", endpoint: "https://h.example.com"}.transportError(errors.New("something else"), 0)
	permanent, class, _ := delivery.Classify(err)
	require.False(t, permanent)
	require.Equal(t, ClassNetwork, class)
}
