package delivery_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
)

// TestNewClassHasOneHome: a class is declared once; Classes lists it, sorted.
func TestNewClassHasOneHome(t *testing.T) {
	c := delivery.NewClass("test_only_class")
	require.Contains(t, delivery.Classes(), c)
	require.Contains(t, delivery.Classes(), delivery.ClassInvalidMessage)
	require.True(t, slices.IsSorted(delivery.Classes()))
	require.PanicsWithValue(t, `delivery.NewClass: class "test_only_class" declared twice`, func() { delivery.NewClass("test_only_class") })
	require.PanicsWithValue(t, `delivery.NewClass: class "invalid_message" declared twice`, func() { delivery.NewClass("invalid_message") })
	require.Panics(t, func() { delivery.NewClass("") })
}
