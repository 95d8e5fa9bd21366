package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/processor"
)

// profileHandle records a CPU profile of herald's processor handling the
// batches batch(0) … batch(n-1) in this process, and prints pprof's top
// functions by cumulative time under Processor.Handle (the receiver serving
// them runs in this process too; -focus leaves it out). The profile stays in
// o.workDir as name.cpu.pprof.
func profileHandle(ctx context.Context, o opts, name, title string, p *processor.Processor, n int, batch func(i int) events.SQSEvent) error {
	file := filepath.Join(o.workDir, name+".cpu.pprof")
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	for i := range n {
		if _, err := timeHandle(ctx, p, batch(i)); err != nil {
			pprof.StopCPUProfile()
			f.Close()
			return err
		}
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, o.goTool, "tool", "pprof", "-top", "-cum", "-nodecount=22",
		`-focus=processor\.\(\*Processor\)\.Handle`, exe, file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pprof: %w\n%s", err, out)
	}
	fmt.Fprintf(o.out, "-- profile: %s (%s; go tool pprof -top -cum -focus='processor.(*Processor).Handle')\n", title, file)
	printPprofTop(o.out, string(out))
	return nil
}
