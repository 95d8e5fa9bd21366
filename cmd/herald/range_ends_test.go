package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFlagRangeEndsAreAccepted: each end of a documented range is inside
// it; the step past it is not.
func TestFlagRangeEndsAreAccepted(t *testing.T) {
	t.Parallel()
	require.NoError(t, checkHold(time.Second))
	require.NoError(t, checkHold(12*time.Hour))
	require.Error(t, checkHold(time.Second-time.Millisecond))
	require.Error(t, checkHold(12*time.Hour+time.Second))

	require.NoError(t, checkRunFlags(1, 0, time.Second))
	require.NoError(t, checkRunFlags(10, 20*time.Second, 15*time.Minute))
	require.ErrorContains(t, checkRunFlags(11, 0, time.Second), "--batch-size")
	require.ErrorContains(t, checkRunFlags(1, 20*time.Second+time.Millisecond, time.Second), "--wait")
	require.ErrorContains(t, checkRunFlags(1, 0, 15*time.Minute+time.Second), "--function-timeout")
}

// TestPrintableEscapesC0AndC1Apart: DEL (the last C0-range control) is a
// byte escape, U+0080 (the first C1 control) a code point escape.
func TestPrintableEscapesC0AndC1Apart(t *testing.T) {
	t.Parallel()
	require.Equal(t, `a\x1b\x7f\u0080\u009bb`, printable("a\x1b\x7f\u0080\u009bb"))
}
