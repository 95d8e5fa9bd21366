package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testGo is the go command the tests run benchmarks with. Under make
// mutate the "go" first on PATH is tools/mutatecover, which points every go
// test at the package under mutation (MUTATECOVER_PACKAGE) and names the
// real go in MUTATECOVER_GO; these go tests are of testdata/benchmod.
func testGo() string {
	if g := os.Getenv("MUTATECOVER_GO"); g != "" {
		return g
	}
	return "go"
}

// benchmodOpts runs benchmarks in testdata/benchmod, whose notification
// package's report fixed figures, once each, in a quick run.
func benchmodOpts(t *testing.T, out io.Writer) opts {
	return opts{quick: true, benchtime: "1x", workDir: t.TempDir(), out: out, goTool: testGo(), modDir: filepath.Join("testdata", "benchmod")}
}

// TestParseBenchReadsGoTestOutput: herald's own benchmarks' output, as go
// test -bench -benchmem printed it (with MB/s between the figures), read
// line by line; other lines and figures skipped, a missing figure 0.
func TestParseBenchReadsGoTestOutput(t *testing.T) {
	t.Parallel()
	out, err := os.ReadFile(filepath.Join("testdata", "gobench-herald.txt"))
	require.NoError(t, err)
	require.Equal(t, []benchLine{
		{"BenchmarkHandleRecord/email_1KB-2", 427868, 59496, 283},
		{"BenchmarkHandleRecord/webhook_1KB-2", 195471, 12560, 105},
		{"BenchmarkHandleRecord/webhook_256KB-2", 724200, 538856, 71},
		{"BenchmarkSend1KB-2", 2678024, 231344, 1249},
		{"BenchmarkParse1KiB-2", 134651, 5008, 66},
		{"BenchmarkPlainDecode1KiB-2", 201621, 28088, 400},
		{"BenchmarkParseEmail1KiB-2", 290283, 126064, 137},
		{"BenchmarkPlainDecodeEmail1KiB-2", 79278, 2920, 50},
	}, parseBench(string(out)))

	require.Equal(t, []benchLine{
		{name: "BenchmarkShort-8", nsOp: 12.5},         // no -benchmem: four fields
		{name: "BenchmarkOdd-8", nsOp: 7, allocsOp: 3}, // a trailing value without its unit
	}, parseBench("goos: linux\nBenchmarkShort-8 \t 100 \t 12.5 ns/op\nBenchmarkTooShort 1 2\n"+
		"--- BENCH: BenchmarkOdd\nBenchmarkOdd-8 1 7 ns/op 3 allocs/op 9\nPASS\n"))
	require.Empty(t, parseBench("ok  \texample.com/benchmod\t0.01s\n"))
}

// TestGoBenchFailures: a go test that fails is an error naming the command
// and holding its output; one that prints no result line (-n only prints
// the commands) is one too.
func TestGoBenchFailures(t *testing.T) {
	t.Parallel()
	o := benchmodOpts(t, io.Discard)
	_, err := goBench(context.Background(), o, "./nosuch", ".", "1x")
	require.ErrorContains(t, err, "go test -run ^$ -bench . -benchmem -benchtime 1x -count 1 ./nosuch: exit status 1\n")
	require.ErrorContains(t, err, "nosuch")

	_, err = goBench(context.Background(), o, "./notification", ".", "1x", "-n")
	require.ErrorContains(t, err, "no benchmark results in:\n")
	require.ErrorContains(t, err, "notification.test")
}

// TestSectionHandlerStopsAtAFailedBenchmark: a benchmark run that fails
// ends the section before any table.
func TestSectionHandlerStopsAtAFailedBenchmark(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	o := benchmodOpts(t, &out)
	o.modDir = t.TempDir() // no module: go test cannot start
	err := sectionHandler(context.Background(), o, &results{})
	require.ErrorContains(t, err, "go test -run ^$ -bench ^BenchmarkHandleRecord$ -benchmem -benchtime 1x -count 1 ./internal/processor: exit status 1")
	require.Empty(t, out.String())
}

// TestHandlerTableVerdicts: a 1 KB record meets < 20 µs and < 60
// allocations one short of both and misses at either; other sizes have no
// goal and do not count as the slowest 1 KB record; webhook's send is
// there for scale.
func TestHandlerTableVerdicts(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	r := &results{handlerNs: 5}
	missed := handlerTable(&out, r, []benchLine{
		{"BenchmarkHandleRecord/email_1KB-2", 20000, 4096, 59},
		{"BenchmarkHandleRecord/webhook_1KB-2", 19960, 1500, 59},
		{"BenchmarkHandleRecord/chat_1KB-2", 15000, 2048, 60},
		{"BenchmarkHandleRecord/webhook_256KB-2", 90000, 538856, 71},
	}, []benchLine{{"BenchmarkSend1KB-2", 2678024, 231344, 1249}})
	require.Equal(t, []string{"email_1KB", "chat_1KB"}, missed)
	require.Equal(t, 20000.0, r.handlerNs, "the slowest 1 KB record")
	require.Equal(t, map[string][]string{
		"benchmark":                                    {"time/op", "B/op", "allocs/op", "goal", "verdict"},
		"HandleRecord email_1KB":                       {"20.0 µs", "4096", "59", "< 20 µs, < 60 allocs", "MISSED"},
		"HandleRecord webhook_1KB":                     {"20.0 µs", "1500", "59", "< 20 µs, < 60 allocs", "met"},
		"HandleRecord chat_1KB":                        {"15.0 µs", "2048", "60", "< 20 µs, < 60 allocs", "MISSED"},
		"HandleRecord webhook_256KB":                   {"90.0 µs", "538856", "71", "–", "–"},
		"for scale: webhook Send 1KB (TLS, local 204)": {"2678.0 µs", "231344", "1249", "–", "–"},
	}, cells(t, out.String(), "1. Handler overhead per record (decode, validate, route, log, batch response; instant transports)"))
}

// TestParseTableVerdicts: goal 3 per body, Parse at most 1.5 × the plain
// decode and 40 allocations: met at both limits, missed at 41
// allocations; its rows go to the goals table too.
func TestParseTableVerdicts(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	r := &results{}
	rows, err := parseTable(&out, r, parseLines())
	require.NoError(t, err)
	goals := [][]string{
		{"3. parse webhook 1 KiB: ≤ 1.5 × plain decode, ≤ 40 allocs", "150.0 µs, 40 allocs", "100.0 µs, 400 allocs", "1.50×", "met"},
		{"3. parse email 1 KiB: ≤ 1.5 × plain decode, ≤ 40 allocs", "120.0 µs, 41 allocs", "100.0 µs, 50 allocs", "1.20×", "MISSED"},
	}
	require.Equal(t, goals, rows)
	require.Equal(t, goals, r.parseGoals)
	require.Equal(t, map[string][]string{
		"goal":      {"Parse", "plain decode", "time ratio", "verdict"},
		goals[0][0]: goals[0][1:],
		goals[1][0]: goals[1][1:],
	}, cells(t, out.String(), "3. Contract parsing in one pass: notification.Parse vs one plain encoding/json decode into a Message (same body)"))

	// Over the ratio by a little: 1.5004 × prints as 1.50×, and misses.
	lines := parseLines()
	lines[0].nsOp = 150040
	rows, err = parseTable(io.Discard, &results{}, lines)
	require.NoError(t, err)
	require.Equal(t, []string{"3. parse webhook 1 KiB: ≤ 1.5 × plain decode, ≤ 40 allocs", "150.0 µs, 40 allocs", "100.0 µs, 400 allocs", "1.50×", "MISSED"}, rows[0])
}

// parseLines are goal 3's benchmark results: the webhook body's Parse at
// the goal's limits, the email body's one allocation over.
func parseLines() []benchLine {
	return []benchLine{
		{"BenchmarkParse1KiB-2", 150000, 5008, 40}, {"BenchmarkPlainDecode1KiB-2", 100000, 28088, 400},
		{"BenchmarkParseEmail1KiB-2", 120000, 126064, 41}, {"BenchmarkPlainDecodeEmail1KiB-2", 100000, 2920, 50},
	}
}

// TestParseTableNeedsBothBenchmarks: a body without its Parse or its plain
// decode result, or a plain decode of 0 ns, is an error and no table.
func TestParseTableNeedsBothBenchmarks(t *testing.T) {
	t.Parallel()
	for i, want := range []string{
		"parse benchmarks: want BenchmarkParse1KiB and BenchmarkPlainDecode1KiB in the results",
		"parse benchmarks: want BenchmarkParse1KiB and BenchmarkPlainDecode1KiB in the results",
		"parse benchmarks: want BenchmarkParseEmail1KiB and BenchmarkPlainDecodeEmail1KiB in the results",
		"parse benchmarks: want BenchmarkParseEmail1KiB and BenchmarkPlainDecodeEmail1KiB in the results",
	} {
		var out strings.Builder
		r := &results{}
		_, err := parseTable(&out, r, slices.Delete(parseLines(), i, i+1))
		require.EqualError(t, err, want, i)
		require.Empty(t, out.String())
		require.Nil(t, r.parseGoals)
	}
	zero := parseLines()
	zero[3].nsOp = 0
	_, err := parseTable(io.Discard, &results{}, zero)
	require.EqualError(t, err, "parse benchmarks: want BenchmarkParseEmail1KiB and BenchmarkPlainDecodeEmail1KiB in the results")
}

// TestWithoutProcs: go test's "-N" GOMAXPROCS suffix goes; a name whose
// last dash is not followed by a number, or begins it, stays.
func TestWithoutProcs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"BenchmarkSend1KB-2":                 "BenchmarkSend1KB",
		"BenchmarkHandleRecord/email_1KB-16": "BenchmarkHandleRecord/email_1KB",
		"BenchmarkHandleRecord/at-once":      "BenchmarkHandleRecord/at-once",
		"BenchmarkHandleRecord/at-once-4":    "BenchmarkHandleRecord/at-once",
		"BenchmarkSend1KB":                   "BenchmarkSend1KB",
		"-8":                                 "-8",
	} {
		require.Equal(t, want, withoutProcs(in), in)
	}
}

// TestParseGoalStopsAtAFailedBenchmark: a parse benchmark run that fails
// is goal 3's error, with no table.
func TestParseGoalStopsAtAFailedBenchmark(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	o := benchmodOpts(t, &out)
	o.modDir = t.TempDir() // no module: go test cannot start
	r := &results{}
	err := parseGoal(context.Background(), o, r)
	require.ErrorContains(t, err, "./notification: exit status 1")
	require.Empty(t, out.String())
	require.Nil(t, r.parseGoals)
}

// TestProfileBenchPrintsAllocations: go test's own run of one of
// testdata/benchmod's benchmarks (the email body's Parse, which allocates
// 64 bytes per op) with a memory profile of every allocation, and pprof's
// cumulative top of it by count: every op's allocation in the
// benchmark's loop. The profile stays in the work directory, the test binary does not.
func TestProfileBenchPrintsAllocations(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	o := benchmodOpts(t, &out)
	require.NoError(t, profileBench(context.Background(), o, "./notification", "^BenchmarkParseEmail1KiB$", "parse_email", false))

	memFile := filepath.Join(o.workDir, "parse_email.mem.pprof")
	profile, ok := strings.CutPrefix(out.String(), "-- profile: allocations by count, cumulative (parse_email, 20000 ops) ("+memFile+")\n")
	require.True(t, ok, out.String())
	lines := strings.Split(strings.TrimSuffix(profile, "\n"), "\n")
	require.Regexp(t, `^ +flat +flat% +sum% +cum +cum%$`, lines[0])
	// 20,000 ops of one allocation each, all in report's loop.
	require.Regexp(t, `(?m)^ +20000 +[0-9.]+% +[0-9.]+% +20000 +[0-9.]+%  example\.com/benchmod/notification\.report$`, profile)
	require.NotContains(t, out.String(), "CPU")
	require.FileExists(t, memFile)
	require.NoFileExists(t, filepath.Join(o.workDir, "parse_email.test"))
	require.NoFileExists(t, filepath.Join(o.workDir, "parse_email.cpu.pprof"))
}

// TestPrintPprofTopLeavesOutThePreamble: from pprof -top's output (herald's
// own allocation profile), the table from its header on, indented, blank
// lines left out.
func TestPrintPprofTopLeavesOutThePreamble(t *testing.T) {
	t.Parallel()
	top, err := os.ReadFile(filepath.Join("testdata", "pprof-top-herald.txt"))
	require.NoError(t, err)
	var out strings.Builder
	printPprofTop(&out, string(top)+"\n\n")
	lines := strings.Split(out.String(), "\n")
	require.Len(t, lines, 1+16+1, "the header, 16 nodes, the last newline")
	require.Equal(t, "         flat  flat%   sum%        cum   cum%", lines[0])
	require.Equal(t, "            0     0%     0%     114686 98.01%  testing.(*B).runN", lines[1])
	require.Equal(t, "", lines[17])
	var none strings.Builder
	printPprofTop(&none, "File: p.test\nType: alloc_objects\n")
	require.Empty(t, none.String())
}
