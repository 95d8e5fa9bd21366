package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProfileHandleOfNoBatch: the CPU profile of handling no batch is
// written to the work directory and read by pprof against this binary:
// the title line, then pprof's header and no function; a work directory
// that is not there is an error before any profile.
func TestProfileHandleOfNoBatch(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	o := opts{workDir: t.TempDir(), out: &out, goTool: testGo()}
	require.NoError(t, profileHandle(context.Background(), o, "none", "no batch", nil, 0, nil))
	file := filepath.Join(o.workDir, "none.cpu.pprof")
	require.FileExists(t, file)
	require.Equal(t, "-- profile: no batch ("+file+"; go tool pprof -top -cum -focus='processor.(*Processor).Handle')\n"+
		"         flat  flat%   sum%        cum   cum%\n", out.String())

	out.Reset()
	o.workDir = filepath.Join(o.workDir, "gone")
	require.ErrorContains(t, profileHandle(context.Background(), o, "none", "no batch", nil, 0, nil), "no such file or directory")
	require.Empty(t, out.String())
}
