package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary stand in for the built tool: run through a
// link named go, it is the wrapper (TestExecPassesThrough).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "go" {
		main()
	}
	os.Exit(m.Run())
}

// realGo is the go binary: the one mutate.sh's wrapper runs when the tests run
// under it, else the first on PATH.
func realGo(t *testing.T) string {
	t.Helper()
	if g := os.Getenv("MUTATECOVER_GO"); g != "" {
		return g
	}
	g, err := exec.LookPath("go")
	require.NoError(t, err)
	return g
}

func TestCoverProfileArg(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		file string
	}{
		{[]string{"test", "-cover", "-coverprofile", "/tmp/c", "./x/..."}, "/tmp/c"},
		{[]string{"test", "-coverprofile=/tmp/c", "./x"}, "/tmp/c"},
		{[]string{"test", "--coverprofile=/tmp/c"}, "/tmp/c"},
		{[]string{"test", "--coverprofile", "/tmp/c"}, "/tmp/c"},
		{[]string{"test", "-coverprofile"}, ""},
		{[]string{"test", "-coverpkg", "x", "./x"}, ""},
		{[]string{"test", "coverprofile", "x"}, ""},
		{[]string{"test", "./x", "-args", "-coverprofile", "/tmp/c"}, ""},
		{[]string{"test", "./x", "--args", "-coverprofile", "/tmp/c"}, ""},
		{[]string{"build", "-coverprofile", "/tmp/c"}, ""},
		{[]string{"vet", "-coverprofile=/tmp/c"}, ""},
		{nil, ""},
	} {
		file, ok := coverProfileArg(tc.args)
		require.Equal(t, tc.file, file, "%q", tc.args)
		require.Equal(t, tc.file != "", ok, "%q", tc.args)
	}
}

// The end to end run: go test on testdata/mod through the wrapper writes a
// profile with the case expressions of Clamp, which TestClamp evaluates
// (Clamp(5) passes the switch) and the constant used in one of them.
func TestRunGoWidensTheProfile(t *testing.T) {
	dir := t.TempDir()
	file, logFile := filepath.Join(dir, "coverage"), filepath.Join(dir, "log")
	t.Chdir("testdata/mod")
	var stdout, stderr bytes.Buffer
	code := runGo([]string{"test", "-count=1", "-cover", "-coverprofile", file, "./..."}, realGo(t), logFile, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stdout.String(), "ok  \texample.com/mod/clamp")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), "example.com/mod/clamp/clamp.go:12.7,12.12 0 1\n", "case x < 0")
	require.Contains(t, string(data), "example.com/mod/clamp/clamp.go:14.7,14.16 0 1\n", "case x > limit")
	require.Contains(t, string(data), "example.com/mod/clamp/clamp.go:7.15,7.22 0 1\n", "limit's value")
	logText, err := os.ReadFile(logFile)
	require.NoError(t, err)
	require.Equal(t, "mutatecover "+file+": 3 blocks added to 5 (expressions: case 2, const 1)\n", string(logText))

	// A second widening appends its line.
	require.Equal(t, 0, runGo([]string{"test", "-count=1", "-coverprofile=" + file, "./..."}, realGo(t), logFile, &stdout, &stderr), stderr.String())
	logText, err = os.ReadFile(logFile)
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(logText), "3 blocks added to 5"))

	// No log file: the profile is still widened.
	require.Equal(t, 0, runGo([]string{"test", "-count=1", "-coverprofile=" + file, "./..."}, realGo(t), "", &stdout, &stderr), stderr.String())
	data, err = os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, 9, strings.Count(string(data), "\n"), "mode line, the 5 blocks, Clamp's 2 case expressions and the constant")

	// A log file that cannot be written fails the run.
	stderr.Reset()
	require.Equal(t, 1, runGo([]string{"test", "-coverprofile=" + file, "./..."}, realGo(t), dir, &stdout, &stderr))
	require.Contains(t, stderr.String(), "mutatecover: open "+dir)
}

func TestRunGoFailures(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "coverage")
	t.Chdir("testdata/mod")
	var stdout, stderr bytes.Buffer

	require.Equal(t, 1, runGo([]string{"test", "-coverprofile", file, "./..."}, "", "", &stdout, &stderr))
	require.Equal(t, "mutatecover: MUTATECOVER_GO must name the real go binary\n", stderr.String())

	// go's own exit status, the profile go wrote not widened.
	stderr.Reset()
	require.Equal(t, 1, runGo([]string{"test", "-coverprofile", file, "./nothing"}, realGo(t), "", &stdout, &stderr))
	require.Contains(t, stderr.String(), "nothing")
	data, _ := os.ReadFile(file)
	require.NotContains(t, string(data), " 0 1\n")

	stderr.Reset()
	require.Equal(t, 1, runGo([]string{"test", "-coverprofile", file, "./..."}, filepath.Join(dir, "no-go"), "", &stdout, &stderr))
	require.Contains(t, stderr.String(), "mutatecover: go: fork/exec "+filepath.Join(dir, "no-go"))
}

func TestExecPassesThrough(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "go")
	require.NoError(t, os.Symlink(exe, link))

	cmd := exec.Command(link, "env", "GOROOT")
	cmd.Env = append(os.Environ(), "MUTATECOVER_GO="+realGo(t))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	goroot, err := exec.Command(realGo(t), "env", "GOROOT").Output()
	require.NoError(t, err)
	require.Equal(t, string(goroot), string(out))

	// go's exit status comes back.
	cmd = exec.Command(link, "no-such-command")
	cmd.Env = append(os.Environ(), "MUTATECOVER_GO="+realGo(t))
	out, err = cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 2, exit.ExitCode(), string(out))

	cmd = exec.Command(link, "version")
	cmd.Env = append(os.Environ(), "MUTATECOVER_GO="+filepath.Join(t.TempDir(), "no-go"))
	out, err = cmd.CombinedOutput()
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 1, exit.ExitCode())
	require.Contains(t, string(out), "mutatecover: exec go: no such file or directory")
}

func TestWidenFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := widenFile(filepath.Join(dir, "missing"), realGo(t))
	require.ErrorIs(t, err, os.ErrNotExist)

	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("mode: set\nnot a block\n"), 0o600))
	_, err = widenFile(bad, realGo(t))
	require.ErrorContains(t, err, bad+": profile line 2: want")

	// A profile of a package go list cannot find.
	unknown := filepath.Join(dir, "unknown")
	require.NoError(t, os.WriteFile(unknown, []byte("mode: set\nexample.invalid/nothing/a.go:1.1,2.2 1 1\n"), 0o600))
	_, err = widenFile(unknown, realGo(t))
	require.ErrorContains(t, err, "package example.invalid/nothing: ")

	// go list cannot run.
	_, err = widenFile(unknown, filepath.Join(dir, "no-go"))
	require.ErrorContains(t, err, "go list: fork/exec "+filepath.Join(dir, "no-go"))

	// An empty profile (go test of packages without statements) stays as it is.
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("mode: set\n"), 0o600))
	line, err := widenFile(empty, realGo(t))
	require.NoError(t, err)
	require.Equal(t, "mutatecover "+empty+": 0 blocks added to 0 (expressions: )", line)
}

func TestRunCommand(t *testing.T) {
	t.Parallel()
	env := func(string) string { return "" }
	for _, args := range [][]string{
		{"mutatecover"},
		{"mutatecover", "-profile", ""},
		{"mutatecover", "-profile", "a", "b"},
		{"mutatecover", "-nothing"},
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 2, run(args, env, &stdout, &stderr), "%q", args)
		require.Contains(t, stderr.String(), "usage: mutatecover -profile FILE\n", "%q", args)
		require.Empty(t, stdout.String())
	}

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("mode: set\n"), 0o600))
	var stdout, stderr bytes.Buffer
	// Without MUTATECOVER_GO, go from PATH (an empty profile needs no go list).
	require.Equal(t, 0, run([]string{"mutatecover", "-profile", empty}, env, &stdout, &stderr), stderr.String())
	require.Equal(t, "mutatecover "+empty+": 0 blocks added to 0 (expressions: )\n", stdout.String())

	stdout.Reset()
	require.Equal(t, 1, run([]string{"mutatecover", "-profile", filepath.Join(dir, "missing")}, env, &stdout, &stderr))
	require.Contains(t, stderr.String(), "mutatecover: open "+filepath.Join(dir, "missing"))
	require.Empty(t, stdout.String())

	// MUTATECOVER_GO names the go that runs go list.
	unknown := filepath.Join(dir, "unknown")
	require.NoError(t, os.WriteFile(unknown, []byte("mode: set\nexample.invalid/x/a.go:1.1,2.2 1 1\n"), 0o600))
	stderr.Reset()
	goEnv := func(k string) string {
		if k == "MUTATECOVER_GO" {
			return filepath.Join(dir, "no-go")
		}
		return ""
	}
	require.Equal(t, 1, run([]string{"mutatecover", "-profile", unknown}, goEnv, &stdout, &stderr))
	require.Contains(t, stderr.String(), "fork/exec "+filepath.Join(dir, "no-go"))

	// Invoked as go: the wrapper, with MUTATECOVER_GO and MUTATECOVER_LOG.
	logFile := filepath.Join(dir, "log")
	wrapEnv := func(k string) string {
		return map[string]string{"MUTATECOVER_GO": filepath.Join(dir, "no-go"), "MUTATECOVER_LOG": logFile}[k]
	}
	stderr.Reset()
	require.Equal(t, 1, run([]string{"/x/go", "test", "-coverprofile", unknown}, wrapEnv, &stdout, &stderr))
	require.Contains(t, stderr.String(), "mutatecover: go: fork/exec "+filepath.Join(dir, "no-go"))
}
