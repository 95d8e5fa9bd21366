package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runSetup is a repository root (a directory with a go.mod) and the
// environment make bench gives run.
type runSetup struct {
	root string
	env  map[string]string
}

func setupRun(t *testing.T) runSetup {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/herald\n"), 0o644))
	return runSetup{root: root, env: map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566"}}
}

func (s runSetup) getenv(k string) string { return s.env[k] }

// recorder is a step that records what run gave it and fails with err.
type recorder struct {
	calls []string
	o     opts
	r     *results
	ctx   context.Context
}

func (rec *recorder) step(id string, err error) step {
	return step{id: id, name: "section " + id, fn: func(ctx context.Context, o opts, r *results) error {
		rec.calls = append(rec.calls, id)
		rec.ctx, rec.o = ctx, o
		if rec.r != nil && rec.r != r {
			return errors.New("a new results for each step")
		}
		rec.r = r
		r.handlerNs++ // the next step sees it
		return err
	}}
}

// TestRunDefaultsRunEveryStep: without BENCH_* variables every step runs,
// in order, with the full run's knobs, one results between them, within
// 30 minutes, each followed by its time rounded to 100 ms.
func TestRunDefaultsRunEveryStep(t *testing.T) {
	t.Parallel()
	s := setupRun(t)
	rec := &recorder{}
	var out strings.Builder
	require.NoError(t, run(s.getenv, s.root, &out, []step{rec.step("1", nil), rec.step("2", nil), rec.step("cost", nil)}))
	require.Equal(t, []string{"1", "2", "cost"}, rec.calls)
	require.Equal(t, 3.0, rec.r.handlerNs)
	require.Equal(t, opts{quick: false, e2eN: 5000, benchtime: "2s", reps: 5, workDir: filepath.Join(s.root, ".local", "bench"),
		out: &out, goTool: "go"}, rec.o)
	require.DirExists(t, rec.o.workDir)
	deadline, ok := rec.ctx.Deadline()
	require.True(t, ok)
	require.WithinDuration(t, time.Now().Add(30*time.Minute), deadline, time.Minute)

	lines := strings.Split(out.String(), "\n")
	require.Regexp(t, `^herald bench — full, \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, lines[0])
	require.Equal(t, machine(), lines[1])
	require.Equal(t, "", lines[2])
	// Round(100 ms) of a step that returns at once: 0s, or a multiple of
	// 100 ms on a loaded machine; never the nanoseconds themselves.
	took := regexp.MustCompile(`^   \(section (1|2|cost) took (0s|[1-9]00ms|\d+(\.\d)?s); load average \S+ at start, \S+ at end\)$`)
	for i, id := range []string{"1", "2", "cost"} {
		require.Regexp(t, took, lines[3+2*i])
		require.Contains(t, lines[3+2*i], "section "+id+" took")
		require.Equal(t, "", lines[4+2*i])
	}
	require.Regexp(t, `^bench done in \d+s$`, lines[9])
	require.Equal(t, "", lines[10])
	require.Len(t, lines, 11)
}

// TestRunQuickOnlyListedStepsCountsFailures: BENCH_QUICK=1 is the smoke
// run's knobs, BENCH_E2E_N overrides its count, BENCH_ONLY picks steps by
// id (spaces around ids ignored), a failed step is reported and the next
// still runs, and the error counts the failures.
func TestRunQuickOnlyListedStepsCountsFailures(t *testing.T) {
	t.Parallel()
	s := setupRun(t)
	s.env["BENCH_QUICK"] = "1"
	s.env["BENCH_E2E_N"] = "10"
	s.env["BENCH_ONLY"] = " 2, cost,,"
	rec := &recorder{}
	var out strings.Builder
	err := run(s.getenv, s.root, &out, []step{rec.step("1", nil), rec.step("2", errors.New("no queue")), rec.step("3", nil), rec.step("cost", errors.New("no rows"))})
	require.EqualError(t, err, "2 section(s) failed")
	require.Equal(t, []string{"2", "cost"}, rec.calls)
	require.Equal(t, opts{quick: true, e2eN: 10, benchtime: "2000x", reps: 1, workDir: filepath.Join(s.root, ".local", "bench"),
		out: &out, goTool: "go"}, rec.o)
	require.True(t, strings.HasPrefix(out.String(), "herald bench — quick (BENCH_QUICK=1: smoke figures, not for the docs), "))
	require.Contains(t, out.String(), "\n!! section 2 failed: no queue\n\n!! section cost failed: no rows\n\nbench done in ")
	require.NotContains(t, out.String(), "took")

	// One failure of one step; BENCH_QUICK other than 1 is a full run.
	s.env["BENCH_QUICK"], s.env["BENCH_ONLY"] = "true", "cost"
	delete(s.env, "BENCH_E2E_N")
	rec = &recorder{}
	out.Reset()
	err = run(s.getenv, s.root, &out, []step{rec.step("2", nil), rec.step("cost", errors.New("no rows"))})
	require.EqualError(t, err, "1 section(s) failed")
	require.Equal(t, []string{"cost"}, rec.calls)
	require.False(t, rec.o.quick)
	require.Equal(t, 5000, rec.o.e2eN)
}

// TestRunChecksBeforeAnyStep: a BENCH_E2E_N that is not an integer ≥ 10, a
// root without go.mod, no AWS_ENDPOINT_URL or a work directory that cannot
// be made stop the run before its first step, with nothing printed.
func TestRunChecksBeforeAnyStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*runSetup)
		want   string
	}{
		{"count under 10", func(s *runSetup) { s.env["BENCH_E2E_N"] = "9" }, `BENCH_E2E_N="9": want an integer ≥ 10`},
		{"count not a number", func(s *runSetup) { s.env["BENCH_E2E_N"] = "5k" }, `BENCH_E2E_N="5k": want an integer ≥ 10`},
		{"no go.mod", func(s *runSetup) { s.root = filepath.Join(s.root, "bench") }, "run from the repository root: "},
		{"no endpoint", func(s *runSetup) { delete(s.env, "AWS_ENDPOINT_URL") }, "AWS_ENDPOINT_URL is not set: run under scripts/with-local-stack.sh (make bench does)"},
		{"work directory", func(s *runSetup) {
			require.NoError(t, os.WriteFile(filepath.Join(s.root, ".local"), nil, 0o644))
		}, "not a directory"},
	} {
		s := setupRun(t)
		tc.change(&s)
		rec := &recorder{}
		var out strings.Builder
		err := run(s.getenv, s.root, &out, []step{rec.step("1", nil)})
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
		require.Empty(t, rec.calls, tc.name)
		require.Empty(t, out.String(), tc.name)
	}
}

// TestSectionsInOrder: make bench's steps, by BENCH_ONLY id, in the order
// their results feed each other (the cost estimate last).
func TestSectionsInOrder(t *testing.T) {
	t.Parallel()
	var ids, names []string
	for _, s := range sections {
		ids, names = append(ids, s.id), append(names, s.name)
		require.NotNil(t, s.fn, s.id)
	}
	require.Equal(t, []string{"1", "2", "3", "4", "5", "events", "cost"}, ids)
	require.Equal(t, []string{"1. Handler overhead", "2. Fan-out", "3. AWS calls", "4. End to end", "5+6. Cold start, footprint and peers",
		"Events: fan-out to registered endpoints", "Cost per million notifications"}, names)
}

// TestMachineNamesTheHost: CPUs, lscpu's model name, the memory in GiB
// from /proc/meminfo, platform and Go version.
func TestMachineNamesTheHost(t *testing.T) {
	t.Parallel()
	got := machine()
	m := regexp.MustCompile(`^machine: (\d+) CPUs \(nproc\), (.+), ([0-9.]+) GiB memory, (\S+)/(\S+), (\S+)$`).FindStringSubmatch(got)
	require.NotNil(t, m, got)
	require.Equal(t, []string{runtime.GOOS, runtime.GOARCH, runtime.Version()}, m[4:])
	require.Equal(t, strconv.Itoa(runtime.NumCPU()), m[1])
	meminfo, err := os.ReadFile("/proc/meminfo")
	require.NoError(t, err)
	kb := regexp.MustCompile(`(?m)^MemTotal:\s+(\d+) kB$`).FindSubmatch(meminfo)
	require.NotNil(t, kb)
	gib, err := strconv.ParseFloat(m[3], 64)
	require.NoError(t, err)
	memKB, err := strconv.ParseFloat(string(kb[1]), 64)
	require.NoError(t, err)
	require.InDelta(t, memKB/1024/1024, gib, 0.05, "GiB from kB")
	if lscpu, err := exec.Command("lscpu").Output(); err == nil {
		model := regexp.MustCompile(`(?m)^Model name:\s*(.*\S)\s*$`).FindSubmatch(lscpu)
		require.NotNil(t, model)
		require.Equal(t, string(model[1]), m[2])
	} else {
		require.Equal(t, "unknown CPU", m[2])
	}
}
