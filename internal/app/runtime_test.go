package app_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
)

func TestLambdaProcs(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		memory string
		numCPU int
		want   int
	}{
		{"128", 2, 1},
		{"1769", 2, 1},
		{"1770", 2, 2},
		{"3538", 6, 2},
		{"3539", 6, 3},
		{"10240", 6, 6},
		{"10240", 4, 4}, // never more than the environment shows
		{"", 2, 0},      // not under Lambda: Go's default
		{"0", 2, 0},
		{"-128", 2, 0},
		{"lots", 2, 0},
	} {
		require.Equal(t, tc.want, app.LambdaProcs(tc.memory, tc.numCPU), "%q MB, %d CPUs", tc.memory, tc.numCPU)
	}
}

func TestTuneRuntimeLeavesAnExplicitGOMAXPROCS(t *testing.T) {
	t.Parallel()

	env := map[string]string{"GOMAXPROCS": "2", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128"}
	require.Zero(t, app.TuneRuntime(func(k string) string { return env[k] }))
}
