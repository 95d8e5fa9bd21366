package delivery_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
)

// TestHasEmptyLabel: a name is refused when any of its labels is empty:
// none at all, a dot first, a dot last, two dots in a row anywhere.
func TestHasEmptyLabel(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"":                      true,
		".":                     true,
		"..":                    true,
		".a":                    true,
		"a.":                    true, // absolute form: the caller drops the dot first
		"a..b":                  true,
		"a.b..":                 true,
		"a.b.c..d":              true, // two dots after the first
		"a":                     false,
		"ab":                    false,
		"a.b":                   false,
		"x.a.b":                 false,
		"xn--bcher-kva.example": false,
		"[127.0.0.1]":           false,
	} {
		require.Equal(t, want, delivery.HasEmptyLabel(name), "%q", name)
	}
}
