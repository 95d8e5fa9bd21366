package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// benchLine is one parsed `go test -bench` result.
type benchLine struct {
	name                string
	nsOp, bOp, allocsOp float64
}

// goBench runs the benchmarks of pkg (a package pattern in o.modDir)
// matching pattern, each for benchtime, with extra go test flags, and
// returns their results (parseBench).
func goBench(ctx context.Context, o opts, pkg, pattern, benchtime string, extra ...string) ([]benchLine, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-benchtime", benchtime, "-count", "1"}, extra...)
	args = append(args, pkg)
	cmd := exec.CommandContext(ctx, o.goTool, args...)
	cmd.Dir = o.modDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	lines := parseBench(string(out))
	if len(lines) == 0 {
		return nil, fmt.Errorf("no benchmark results in:\n%s", out)
	}
	return lines, nil
}

// parseBench reads the result lines of go test -bench's output: the
// benchmark's name, its iterations, then value and unit pairs, of which it
// keeps ns/op, B/op and allocs/op (0 when absent). Other lines are skipped.
func parseBench(out string) []benchLine {
	var lines []benchLine
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		b := benchLine{name: f[0]}
		for i := 2; i+1 < len(f); i += 2 {
			v, _ := strconv.ParseFloat(f[i], 64)
			switch f[i+1] {
			case "ns/op":
				b.nsOp = v
			case "B/op":
				b.bOp = v
			case "allocs/op":
				b.allocsOp = v
			}
		}
		lines = append(lines, b)
	}
	return lines
}

// sectionHandler runs internal/processor's BenchmarkHandleRecord (and
// webhook's BenchmarkSend1KB for scale) and goal 3's parse benchmarks
// (parseGoal); for each 1 KB goal missed it prints where the time and
// allocations go.
func sectionHandler(ctx context.Context, o opts, r *results) error {
	lines, err := goBench(ctx, o, "./internal/processor", "^BenchmarkHandleRecord$", o.benchtime)
	if err != nil {
		return err
	}
	send, err := goBench(ctx, o, "./internal/webhook", "^BenchmarkSend1KB$", o.benchtime)
	if err != nil {
		return err
	}
	missed := handlerTable(o.out, r, lines, send)
	if err := parseGoal(ctx, o, r); err != nil {
		return err
	}
	if o.quick {
		return nil
	}
	// Name the limit: CPU and allocation profiles of each missed goal.
	for _, name := range missed {
		if err := profileBench(ctx, o, "./internal/processor", "^BenchmarkHandleRecord$/^"+name+"$", name, true); err != nil {
			return err
		}
	}
	return nil
}

// handlerTable prints section 1's table to out: BenchmarkHandleRecord's
// results (lines) with the goal of a 1 KB record (under 20 µs and 60
// allocations) and BenchmarkSend1KB's (send) for scale. It keeps the
// slowest 1 KB record's ns/op in r.handlerNs and returns the 1 KB cases
// (their names without "BenchmarkHandleRecord/" and "-N") that missed.
func handlerTable(out io.Writer, r *results, lines, send []benchLine) (missed []string) {
	var rows [][]string
	for _, b := range lines {
		name := strings.TrimPrefix(withoutProcs(b.name), "BenchmarkHandleRecord/")
		goal, v := "–", "–"
		if strings.Contains(name, "1KB") {
			goal = "< 20 µs, < 60 allocs"
			v = "met"
			if b.nsOp >= 20000 || b.allocsOp >= 60 {
				v, missed = "MISSED", append(missed, name)
			}
			r.handlerNs = max(r.handlerNs, b.nsOp)
		}
		rows = append(rows, []string{"HandleRecord " + name, fmt.Sprintf("%.1f µs", b.nsOp/1000), fmt.Sprintf("%.0f", b.bOp), fmt.Sprintf("%.0f", b.allocsOp), goal, v})
	}
	for _, b := range send {
		rows = append(rows, []string{"for scale: webhook Send 1KB (TLS, local 204)", fmt.Sprintf("%.1f µs", b.nsOp/1000), fmt.Sprintf("%.0f", b.bOp), fmt.Sprintf("%.0f", b.allocsOp), "–", "–"})
	}
	printTable(out, "1. Handler overhead per record (decode, validate, route, log, batch response; instant transports)",
		[]string{"benchmark", "time/op", "B/op", "allocs/op", "goal", "verdict"}, rows)
	return missed
}

// profileBench prints where one benchmark's allocations (and, with cpu,
// its time) go: pprof's cumulative top, from separate runs (recording every
// allocation would distort the CPU profile). Profiles stay in o.workDir.
func profileBench(ctx context.Context, o opts, pkg, pattern, name string, cpu bool) error {
	bin := filepath.Join(o.workDir, name+".test")
	cpuFile, memFile := filepath.Join(o.workDir, name+".cpu.pprof"), filepath.Join(o.workDir, name+".mem.pprof")
	type prof struct{ title, file, index string }
	var profs []prof
	if cpu {
		if _, err := goBench(ctx, o, pkg, pattern, o.benchtime, "-o", bin, "-cpuprofile", cpuFile); err != nil {
			return err
		}
		profs = append(profs, prof{"CPU, cumulative (" + name + ")", cpuFile, "cpu"})
	}
	if _, err := goBench(ctx, o, pkg, pattern, "20000x", "-o", bin, "-memprofile", memFile, "-memprofilerate", "1"); err != nil {
		return err
	}
	profs = append(profs, prof{"allocations by count, cumulative (" + name + ", 20000 ops)", memFile, "alloc_objects"})
	for _, p := range profs {
		out, err := exec.CommandContext(ctx, o.goTool, "tool", "pprof", "-top", "-nodecount=16", "-sample_index="+p.index, "-cum", bin, p.file).CombinedOutput()
		if err != nil {
			return fmt.Errorf("pprof: %w\n%s", err, out)
		}
		fmt.Fprintf(o.out, "-- profile: %s (%s)\n", p.title, p.file)
		printPprofTop(o.out, string(out))
	}
	_ = os.Remove(bin)
	return nil
}

// printPprofTop writes pprof -top's output to w without its preamble (the
// lines before the header naming flat%), each line indented, blank lines
// left out.
func printPprofTop(w io.Writer, out string) {
	on := false
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "flat%") {
			on = true
		}
		if on && strings.TrimSpace(l) != "" {
			fmt.Fprintln(w, "   "+l)
		}
	}
}

// parseCases are goal 3's bodies: each one's Parse benchmark and the plain
// decode of the same body.
var parseCases = []struct{ body, parse, plain string }{
	{"webhook", "BenchmarkParse1KiB", "BenchmarkPlainDecode1KiB"},
	{"email", "BenchmarkParseEmail1KiB", "BenchmarkPlainDecodeEmail1KiB"},
}

// parseGoal runs notification's Parse and plain-decode benchmarks on the
// same 1 KiB bodies and prints goal 3 of issue 12 (parseTable); a full run
// then profiles each body's Parse that missed.
func parseGoal(ctx context.Context, o opts, r *results) error {
	lines, err := goBench(ctx, o, "./notification", "^Benchmark(Parse|PlainDecode)(Email)?1KiB$", o.benchtime)
	if err != nil {
		return err
	}
	rows, err := parseTable(o.out, r, lines)
	if err != nil {
		return err
	}
	if o.quick {
		return nil
	}
	for i, c := range parseCases {
		if rows[i][4] == "MISSED" {
			if err := profileBench(ctx, o, "./notification", "^"+c.parse+"$", "parse_"+c.body, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseTable prints goal 3 of issue 12 to out from the parse benchmarks'
// results (lines): per body of parseCases, Parse at most maxParseRatio ×
// one plain encoding/json decode into a Message, and at most
// maxParseAllocs allocations. Its rows (goal, Parse, plain decode, time
// ratio, verdict), in parseCases' order, also go to r.parseGoals for the
// goals table. A body's benchmark missing, or a plain decode of 0 ns, is
// an error.
func parseTable(out io.Writer, r *results, lines []benchLine) ([][]string, error) {
	const maxParseRatio, maxParseAllocs = 1.5, 40
	by := map[string]benchLine{}
	for _, b := range lines {
		by[withoutProcs(b.name)] = b
	}
	var rows [][]string
	for _, c := range parseCases {
		p, ok1 := by[c.parse]
		d, ok2 := by[c.plain]
		if !ok1 || !ok2 || d.nsOp == 0 {
			return nil, fmt.Errorf("parse benchmarks: want %s and %s in the results", c.parse, c.plain)
		}
		rat := p.nsOp / d.nsOp
		v := verdict(rat, maxParseRatio, false)
		if p.allocsOp > maxParseAllocs {
			v = "MISSED"
		}
		row := []string{"3. parse " + c.body + " 1 KiB: ≤ 1.5 × plain decode, ≤ 40 allocs",
			fmt.Sprintf("%.1f µs, %.0f allocs", p.nsOp/1000, p.allocsOp),
			fmt.Sprintf("%.1f µs, %.0f allocs", d.nsOp/1000, d.allocsOp),
			fmt.Sprintf("%.2f×", rat), v}
		rows = append(rows, row)
	}
	r.parseGoals = rows
	printTable(out, "3. Contract parsing in one pass: notification.Parse vs one plain encoding/json decode into a Message (same body)",
		[]string{"goal", "Parse", "plain decode", "time ratio", "verdict"}, rows)
	return rows, nil
}

// withoutProcs drops the "-N" GOMAXPROCS suffix go test adds to a
// benchmark's name.
func withoutProcs(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}
