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

// TestNewOriginDownClass: a class declared as origin-down is a class like
// any other, and OriginDown tells it apart.
func TestNewOriginDownClass(t *testing.T) {
	down := delivery.NewOriginDownClass("test_only_origin_down")
	other := delivery.NewClass("test_only_not_origin_down")
	require.Contains(t, delivery.Classes(), down)
	require.True(t, delivery.OriginDown(down))
	require.False(t, delivery.OriginDown(other))
	require.False(t, delivery.OriginDown(delivery.ClassDeadline), "herald's own deadline says nothing of the origin")
	require.Panics(t, func() { delivery.NewOriginDownClass("test_only_origin_down") })
}
