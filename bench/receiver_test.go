package main

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScaleDefaultsToMakeBenchsRun: a zero scale is `make bench`'s run:
// the fan-out receiver at 100 ms, large batches of 100, tables on standard
// output; a test's figures replace them.
func TestScaleDefaultsToMakeBenchsRun(t *testing.T) {
	t.Parallel()
	var o opts
	require.Equal(t, 100*time.Millisecond, o.receiverDelay())
	require.Equal(t, 100, o.largeBatch())
	require.Equal(t, os.Stdout, o.stdout())
	o.small = scale{fanDelay: time.Millisecond, large: 7}
	o.out = os.Stderr
	require.Equal(t, time.Millisecond, o.receiverDelay())
	require.Equal(t, 7, o.largeBatch())
	require.Equal(t, os.Stderr, o.stdout())
}
