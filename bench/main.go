// Command bench is `make bench`: herald's performance side by side with its
// goals, a one-at-a-time baseline, the local queue's own ceiling and peers
// (Powertools for AWS Lambda handlers: TypeScript BatchProcessor with fetch
// and with a keep-alive node:https agent, Python AsyncBatchProcessor with
// aiohttp, Python BatchProcessor one record after another), a Go floor
// program and an empty Go function, one table per section, and the all-in
// cost per million notifications of each (Lambda, SQS, CloudWatch Logs,
// custom metrics, KMS, DynamoDB). herald runs with its store's DynamoDB
// table on and off in the same run (bench/store.go): fan-out, AWS calls,
// end to end and the emulator's rounds, and what the store adds in latency
// and in cost per million by service. docs/benchmarks.md explains each
// figure and holds a run.
//
// It runs from the repository root with the local stack up
// (scripts/with-local-stack.sh go run ./bench), the Lambda Runtime Interface
// Emulator in .tools/bin (scripts/install-rie.sh), the Python peers' venvs
// in .venv/bench and .venv/bench-async (bench/peer/install.sh) and the
// TypeScript peer's node_modules (bench/peer-ts/install.sh).
//
// Environment: BENCH_QUICK=1 is a smoke run (tiny N, short benchtime);
// BENCH_E2E_N sets the end-to-end notification count (default 5000, quick 200);
// BENCH_ONLY=1,2,3,4,5,events,cost runs only the listed sections;
// BENCH_PERF=1 profiles section 6's herald rows with Linux perf (envPerf).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// opts are the knobs of one run.
type opts struct {
	quick     bool
	e2eN      int
	benchtime string
	reps      int    // repetitions of a timed batch; the median is printed
	workDir   string // .local/bench: binaries, profiles, certificates
	// out receives the tables and the lines around them: os.Stdout under
	// make bench.
	out io.Writer
	// goTool is the go command that runs the benchmarks and pprof ("go"
	// under make bench), in modDir, the module whose packages the
	// benchmarks name ("" for the working directory, the repository root).
	goTool, modDir string
	// small shrinks sections 2–4 for their unit tests; zero under make
	// bench.
	small scale
	// perf records section 6's herald rows with Linux perf (BENCH_PERF=1,
	// envPerf).
	perf bool
}

// step is one section of a run: id is its name in BENCH_ONLY, name its
// title in the lines around it.
type step struct {
	id, name string
	fn       func(context.Context, opts, *results) error
}

// sections are make bench's steps, in the order they run: a later one reads
// what earlier ones left in results.
var sections = []step{
	{"1", "1. Handler overhead", sectionHandler},
	{"2", "2. Fan-out", sectionFanout},
	{"3", "3. AWS calls", sectionAWSCalls},
	{"4", "4. End to end", sectionE2E},
	{"5", "5+6. Cold start, footprint and peers", sectionRIE},
	{"events", "Events: fan-out to registered endpoints", sectionEvents},
	{"cost", "Cost per million notifications", sectionCost},
}

func main() {
	if err := run(os.Getenv, ".", os.Stdout, sections); err != nil {
		fmt.Fprintln(os.Stderr, "bench: "+err.Error())
		os.Exit(1)
	}
}

// run reads BENCH_QUICK, BENCH_E2E_N, BENCH_ONLY and AWS_ENDPOINT_URL
// through getenv, checks that root is the repository root (its go.mod),
// and runs steps in order (those BENCH_ONLY lists, when set) within 30
// minutes, writing to out. A step that fails is reported and the rest run;
// the error then counts the failed ones.
func run(getenv func(string) string, root string, out io.Writer, steps []step) error {
	o := opts{quick: getenv("BENCH_QUICK") == "1", e2eN: 5000, benchtime: "2s", reps: 5, out: out, goTool: "go", perf: getenv(envPerf) == "1"}
	if o.quick {
		o.e2eN, o.benchtime, o.reps = 200, "2000x", 1
	}
	if v := getenv("BENCH_E2E_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			return fmt.Errorf("BENCH_E2E_N=%q: want an integer ≥ 10", v)
		}
		o.e2eN = n
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("run from the repository root: %w", err)
	}
	if getenv("AWS_ENDPOINT_URL") == "" {
		return fmt.Errorf("AWS_ENDPOINT_URL is not set: run under scripts/with-local-stack.sh (make bench does)")
	}
	o.workDir, _ = filepath.Abs(filepath.Join(root, ".local", "bench"))
	if err := os.MkdirAll(o.workDir, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	mode := "full"
	if o.quick {
		mode = "quick (BENCH_QUICK=1: smoke figures, not for the docs)"
	}
	fmt.Fprintf(out, "herald bench — %s, %s\n%s\n\n", mode, time.Now().UTC().Format(time.RFC3339), machine())

	r := &results{}
	only := map[string]bool{}
	for _, id := range strings.Split(getenv("BENCH_ONLY"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			only[id] = true
		}
	}
	failed := 0
	for _, s := range steps {
		if len(only) > 0 && !only[s.id] {
			continue
		}
		t0, load0 := time.Now(), loadAvg()
		if err := s.fn(ctx, o, r); err != nil {
			failed++
			fmt.Fprintf(out, "!! %s failed: %v\n\n", s.name, err)
			continue
		}
		fmt.Fprintf(out, "   (%s took %s; load average %s at start, %s at end)\n\n", s.name, time.Since(t0).Round(100*time.Millisecond), load0, loadAvg())
	}
	fmt.Fprintf(out, "bench done in %s\n", time.Since(start).Round(time.Second))
	if failed > 0 {
		return fmt.Errorf("%d section(s) failed", failed)
	}
	return nil
}
