package main

import (
	"context"
	"fmt"
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

// goBench runs the named benchmarks of pkg and parses their results.
func goBench(ctx context.Context, pkg, pattern, benchtime string, extra ...string) ([]benchLine, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-benchtime", benchtime, "-count", "1"}, extra...)
	args = append(args, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	var lines []benchLine
	for _, l := range strings.Split(string(out), "\n") {
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
	if len(lines) == 0 {
		return nil, fmt.Errorf("no benchmark results in:\n%s", out)
	}
	return lines, nil
}

// sectionHandler runs internal/processor's BenchmarkHandleRecord (and
// webhook's BenchmarkSend1KB for scale) and goal 3's parse benchmarks
// (parseGoal); for each 1 KB goal missed it prints where the time and
// allocations go.
func sectionHandler(ctx context.Context, o opts, r *results) error {
	lines, err := goBench(ctx, "./internal/processor", "^BenchmarkHandleRecord$", o.benchtime)
	if err != nil {
		return err
	}
	send, err := goBench(ctx, "./internal/webhook", "^BenchmarkSend1KB$", o.benchtime)
	if err != nil {
		return err
	}
	var rows [][]string
	var missed []string
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
	table("1. Handler overhead per record (decode, validate, route, log, batch response; instant transports)",
		[]string{"benchmark", "time/op", "B/op", "allocs/op", "goal", "verdict"}, rows)
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

// profileBench prints where one benchmark's allocations (and, with cpu,
// its time) go: pprof's cumulative top, from separate runs (recording every
// allocation would distort the CPU profile). Profiles stay in o.workDir.
func profileBench(ctx context.Context, o opts, pkg, pattern, name string, cpu bool) error {
	bin := filepath.Join(o.workDir, name+".test")
	cpuFile, memFile := filepath.Join(o.workDir, name+".cpu.pprof"), filepath.Join(o.workDir, name+".mem.pprof")
	type prof struct{ title, file, index string }
	var profs []prof
	if cpu {
		if _, err := goBench(ctx, pkg, pattern, o.benchtime, "-o", bin, "-cpuprofile", cpuFile); err != nil {
			return err
		}
		profs = append(profs, prof{"CPU, cumulative (" + name + ")", cpuFile, "cpu"})
	}
	if _, err := goBench(ctx, pkg, pattern, "20000x", "-o", bin, "-memprofile", memFile, "-memprofilerate", "1"); err != nil {
		return err
	}
	profs = append(profs, prof{"allocations by count, cumulative (" + name + ", 20000 ops)", memFile, "alloc_objects"})
	for _, p := range profs {
		out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=16", "-sample_index="+p.index, "-cum", bin, p.file).CombinedOutput()
		if err != nil {
			return fmt.Errorf("pprof: %w\n%s", err, out)
		}
		fmt.Printf("-- profile: %s (%s)\n", p.title, p.file)
		printPprofTop(string(out))
	}
	_ = os.Remove(bin)
	return nil
}

// printPprofTop prints pprof -top's table without its preamble.
func printPprofTop(out string) {
	on := false
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "flat%") {
			on = true
		}
		if on && strings.TrimSpace(l) != "" {
			fmt.Println("   " + l)
		}
	}
}

// parseGoal runs notification's Parse and plain-decode benchmarks on the
// same 1 KiB bodies and prints goal 3 of issue 12: Parse at most
// maxParseRatio × one plain encoding/json decode into a Message, and at most
// maxParseAllocs allocations. Its rows also go to the goals table.
func parseGoal(ctx context.Context, o opts, r *results) error {
	const maxParseRatio, maxParseAllocs = 1.5, 40
	lines, err := goBench(ctx, "./notification", "^Benchmark(Parse|PlainDecode)(Email)?1KiB$", o.benchtime)
	if err != nil {
		return err
	}
	by := map[string]benchLine{}
	for _, b := range lines {
		by[withoutProcs(b.name)] = b
	}
	cases := []struct{ body, parse, plain string }{
		{"webhook", "BenchmarkParse1KiB", "BenchmarkPlainDecode1KiB"},
		{"email", "BenchmarkParseEmail1KiB", "BenchmarkPlainDecodeEmail1KiB"},
	}
	var rows [][]string
	for _, c := range cases {
		p, ok1 := by[c.parse]
		d, ok2 := by[c.plain]
		if !ok1 || !ok2 || d.nsOp == 0 {
			return fmt.Errorf("parse benchmarks: want %s and %s in the results", c.parse, c.plain)
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
	table("3. Contract parsing in one pass: notification.Parse vs one plain encoding/json decode into a Message (same body)",
		[]string{"goal", "Parse", "plain decode", "time ratio", "verdict"}, rows)
	if o.quick {
		return nil
	}
	for i, c := range cases {
		if rows[i][4] == "MISSED" {
			if err := profileBench(ctx, o, "./notification", "^"+c.parse+"$", "parse_"+c.body, false); err != nil {
				return err
			}
		}
	}
	return nil
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
