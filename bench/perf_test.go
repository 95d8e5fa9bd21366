package main

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// perfScript is perf script's default output for five samples of a
// deliver bootstrap, shaped as perf 6 prints it (frames innermost first).
const perfScript = `deliver-amd64 15944 18340.360002:     200040 cpu-clock: 
	ffffffff813aeb13 finish_task_switch.isra.0+0x93 ([kernel.kallsyms])
	ffffffff81000e06 asm_sysvec_apic_timer_interrupt+0x16 ([kernel.kallsyms])
	           22011 runtime.newobject+0x11 (/x/deliver-amd64)
	          2ac9c5 github.com/aws/smithy-go/transport/http.ClientHandler.Handle+0x645 (/x/deliver-amd64)
	          5d0a11 github.com/heraldhq/herald/internal/store.(*Store).claim+0x1f1 (/x/deliver-amd64)
	          5d0811 github.com/heraldhq/herald/internal/store.(*Store).Claim+0x51 (/x/deliver-amd64)
	           8bde1 runtime.goexit.abi0+0x1 (/x/deliver-amd64)

deliver-amd64 15946 18340.360210:     200040 cpu-clock: 
	ffffffff81a0b2c1 hrtimer_nanosleep+0x91 ([kernel.kallsyms])
	           8a1f3 runtime.usleep.abi0+0x43 (/x/deliver-amd64)
	           5c211 runtime.sysmon+0x1b1 (/x/deliver-amd64)
	           4f8e5 runtime.mstart1+0x95 (/x/deliver-amd64)

deliver-amd64 15944 18340.360412:     200040 cpu-clock: 
	           698a9 runtime.newstack+0x4c9 (/x/deliver-amd64)
	           5d0a11 github.com/heraldhq/herald/internal/store.(*Store).claim+0x1f1 (/x/deliver-amd64)

deliver-amd64 15944 18340.360611:     100000 cpu-clock: 
	           8bde1 runtime.goexit.abi0+0x1 (/x/deliver-amd64)

deliver-amd64 15944 18340.360812:     100000 cpu-clock: 
`

// TestPerfBreakdownChargesEachSampleToItsFirstCategory: a sample's period
// goes to the first of perfCategories with a frame in its stack (stack
// growth before the claim it grew for), to its kernel part when a frame
// is the kernel's, and to elsewhere when none matches or it has no frame.
func TestPerfBreakdownChargesEachSampleToItsFirstCategory(t *testing.T) {
	b := perfBreakdown(strings.NewReader(perfScript))
	require.Equal(t, 5, b.samples)
	claims := perfCategories[4].name
	require.Contains(t, claims, "claims")
	require.Equal(t, perfSplit{all: 200040, kernel: 200040}, b.by[claims])
	require.Equal(t, perfSplit{all: 200040, kernel: 200040}, b.by["sysmon (the runtime's monitor thread)"])
	require.Equal(t, perfSplit{all: 200040}, b.by["stack growth (runtime.newstack)"], "stack growth comes first")
	require.Equal(t, perfSplit{all: 200000}, b.by[perfElsewhere], "no category's frame, or no frame at all")
	require.Len(t, b.by, 4)
}

// TestSamplePeriodReadsTheHeader: the period is the number before the
// event's name, whatever the command name holds.
func TestSamplePeriodReadsTheHeader(t *testing.T) {
	for header, want := range map[string]int64{
		"deliver-amd64 15944 18340.360002:     200040 cpu-clock: ": 200040,
		"deliver-amd64 15944 18340.360002: 1 cpu-clock:":           1,
		"my app 2 15944 18340.360002:     4999 cpu-clock: ":        4999,
		"deliver-amd64 15944 18340.360002: 4999":                   4999,
		"deliver-amd64 15944 18340.360002: cpu-clock: ":            0,
		"": 0,
	} {
		require.Equal(t, want, samplePeriod(header), header)
	}
}

// TestPrintPerfBreakdownPerRecord: each category in perfCategories' order,
// then elsewhere and the total, in µs of CPU per record.
func TestPrintPerfBreakdownPerRecord(t *testing.T) {
	var out bytes.Buffer
	printPerfBreakdown(&out, perfBreakdown(strings.NewReader(perfScript)), 2)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, len(perfCategories)+2)
	for i, c := range perfCategories {
		require.Contains(t, lines[i], c.name)
	}
	require.Regexp(t, `^   stack growth \(runtime\.newstack\) +100\.0 µs  \(kernel   0\.0 µs\)$`, lines[0])
	require.Regexp(t, `claims, caller side .* +100\.0 µs  \(kernel 100\.0 µs\)$`, lines[4])
	require.Regexp(t, `^   elsewhere +100\.0 µs  \(kernel   0\.0 µs\)$`, lines[len(lines)-2])
	// 200,040 × 3 + 100,000 × 2 ns over 2 records.
	require.Regexp(t, `^   CPU per record, all samples +400\.1 µs  \(kernel 200\.0 µs\)$`, lines[len(lines)-1])
}

// TestBuildLambdaWithKeepsSymbols: the bootstrap perf profiles keeps its
// symbol table; make build's flags strip it.
func TestBuildLambdaWithKeepsSymbols(t *testing.T) {
	dir := t.TempDir()
	symtab := func(file string) bool {
		f, err := elf.Open(file)
		require.NoError(t, err)
		defer f.Close()
		return f.Section(".symtab") != nil
	}
	with, _, err := buildLambdaWith(context.Background(), "..", dir, "noop-symbols", "./bench/noop", runtime.GOARCH, "")
	require.NoError(t, err)
	require.True(t, symtab(with))
	stripped, _, err := buildLambda(context.Background(), "..", dir, "noop", "./bench/noop", runtime.GOARCH)
	require.NoError(t, err)
	require.False(t, symtab(stripped))
	require.Equal(t, filepath.Join(dir, "noop-"+runtime.GOARCH), stripped)
}

// fakePerf puts an executable "perf" running script first on the PATH:
// the recording's life without the kernel's perf events.
func fakePerf(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perf"), []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestStartPerfRefusesARecorderThatEndsAtOnce: a perf that cannot attach
// (no such process, perf_event_paranoid) ends at once; the section fails
// then, saying so, not later at its stop.
func TestStartPerfRefusesARecorderThatEndsAtOnce(t *testing.T) {
	fakePerf(t, "echo 'no permission' >&2; exit 255")
	// Long enough for the fake to end first on a loaded machine; it ends
	// at once, so the wait is short.
	attach := perfAttach
	perfAttach = time.Minute
	t.Cleanup(func() { perfAttach = attach })
	_, err := startPerf(filepath.Join(t.TempDir(), "x.perf.data"), os.Getpid())
	require.ErrorContains(t, err, "BENCH_PERF=1: perf record ended before the recording (exit status 255)")
}

// TestPerfStopsOnInterrupt: stop interrupts perf; ending on the signal it
// re-raises, or with status 0, is success, any other end an error, and so
// is a perf that ended before stop.
func TestPerfStopsOnInterrupt(t *testing.T) {
	for name, tc := range map[string]struct {
		script  string
		wantErr string
	}{
		"re-raises SIGINT": {script: `trap 'trap - INT; kill -INT $$' INT; while :; do sleep 0.02; done`},
		"exits 0":          {script: `trap 'exit 0' INT; while :; do sleep 0.02; done`},
		"exits 3":          {script: `trap 'exit 3' INT; while :; do sleep 0.02; done`, wantErr: "exit status 3"},
		"ended before stop": {
			script:  `sleep ` + fmt.Sprintf("%.1f", (perfAttach+200*time.Millisecond).Seconds()) + `; exit 0`,
			wantErr: "ended before it was stopped",
		},
	} {
		t.Run(name, func(t *testing.T) {
			fakePerf(t, tc.script)
			rec, err := startPerf(filepath.Join(t.TempDir(), "x.perf.data"), os.Getpid())
			require.NoError(t, err)
			if strings.Contains(name, "before stop") {
				<-rec.done
			}
			err = rec.stop()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// TestPerfReportReadsPerfScript: report runs perf script on the recording
// and prints its breakdown under a line naming the row, the records, the
// samples and the recording flags.
func TestPerfReportReadsPerfScript(t *testing.T) {
	dir := t.TempDir()
	fixture := filepath.Join(dir, "script.txt")
	require.NoError(t, os.WriteFile(fixture, []byte(perfScript), 0o644))
	fakePerf(t, `[ "$1 $2" = "script -i" ] && [ "$3" = "`+filepath.Join(dir, "x.perf.data")+`" ] && exec cat '`+fixture+`'; exit 9`)
	var out bytes.Buffer
	rec := &perfRecording{file: filepath.Join(dir, "x.perf.data")}
	require.NoError(t, rec.report(context.Background(), &out, "herald + store", 2))
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Equal(t, "-- perf (BENCH_PERF=1): herald + store, 2 records, 5 samples (perf record -e cpu-clock -F 4999 -g; perf script -i "+rec.file+")", lines[0])
	require.Len(t, lines, len(perfCategories)+3)
	require.Regexp(t, `^   CPU per record, all samples +400\.1 µs`, lines[len(lines)-1])
}
