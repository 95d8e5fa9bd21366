package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
)

// read returns every variable name the loaders ask for.
func read() map[string]bool {
	names := map[string]bool{}
	rec := func(k string) string { names[k] = true; return "" }
	_, _ = config.LoadDeliver(rec)
	_, _ = config.LoadRetention(rec)
	return names
}

func TestTemplateLeavesUnsetNamesVariablesTheLoadersRead(t *testing.T) {
	t.Parallel()
	names := read()
	for _, n := range config.TemplateLeavesUnset {
		require.True(t, names[n], "%s is read by no loader", n)
	}
}

func TestSetButNotReadNamesVariablesNoLoaderReads(t *testing.T) {
	t.Parallel()
	names := read()
	for _, n := range config.SetButNotRead {
		require.False(t, names[n], "%s is read by a loader", n)
	}
}
