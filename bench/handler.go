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
// webhook's BenchmarkSend1KB for scale) and, when a 1 KB goal is missed,
// profiles webhook_1KB and prints where the time and allocations go.
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
	missed := false
	for _, b := range lines {
		name := strings.TrimPrefix(b.name, "BenchmarkHandleRecord/")
		name = name[:strings.LastIndexByte(name+"-", '-')]
		goal, v := "–", "–"
		if strings.Contains(name, "1KB") {
			goal = "< 20 µs, < 60 allocs"
			v = "met"
			if b.nsOp >= 20000 || b.allocsOp >= 60 {
				v, missed = "MISSED", true
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
	if !missed || o.quick {
		return nil
	}
	// Name the limit: CPU and allocation profiles of the 1 KB webhook, from
	// two runs (recording every allocation would distort the CPU profile).
	bin := filepath.Join(o.workDir, "processor.test")
	cpu, mem := filepath.Join(o.workDir, "handle.cpu.pprof"), filepath.Join(o.workDir, "handle.mem.pprof")
	const one = "^BenchmarkHandleRecord$/^webhook_1KB$"
	if _, err := goBench(ctx, "./internal/processor", one, o.benchtime, "-o", bin, "-cpuprofile", cpu); err != nil {
		return err
	}
	if _, err := goBench(ctx, "./internal/processor", one, "20000x", "-o", bin, "-memprofile", mem, "-memprofilerate", "1"); err != nil {
		return err
	}
	for _, p := range []struct{ title, file, index, sort string }{
		{"CPU, cumulative (webhook_1KB)", cpu, "cpu", "-cum"},
		{"allocations by count, cumulative (webhook_1KB, 20000 ops)", mem, "alloc_objects", "-cum"},
	} {
		out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=16", "-sample_index="+p.index, p.sort, bin, p.file).CombinedOutput()
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
