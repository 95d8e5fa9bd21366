package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// BENCH_PERF=1 profiles the deliver bootstrap itself under the emulator:
// section 6's CPU phase of herald and herald + store, in the first round,
// is recorded with Linux perf (perf record -g on the bootstrap's pid, no
// hook in the function), and each recording's CPU per record is printed
// by where its samples' stacks are (perfCategories). The bootstrap then
// runs with its symbols (the size rows still measure the stripped one), so
// a BENCH_PERF run is for the profile, not for the section's figures.
// perf must be on the PATH; the recordings stay in .local/bench.
const envPerf = "BENCH_PERF"

// perfCategories sort a sample into the first of these, in this order,
// whose frame is anywhere in its stack; the rest is "elsewhere". A frame
// is matched by substring of its symbol.
var perfCategories = []struct{ name, frame string }{
	// The runtime's stack growth runs on the system stack, where perf's
	// frame-pointer unwinding stops: it cannot be charged to a caller.
	{"stack growth (runtime.newstack)", "runtime.newstack"},
	{"garbage collector (mark workers)", "runtime.gcBgMarkWorker"},
	{"garbage collector (assists)", "runtime.gcAssistAlloc"},
	{"sysmon (the runtime's monitor thread)", "runtime.sysmon"},
	{"store: claims, caller side (store.(*Store).claim)", "internal/store.(*Store).claim"},
	{"store: the batch's confirm (store.(*Store).Confirm)", "internal/store.(*Store).Confirm"},
	{"store: other", "herald/internal/store."},
	{"HTTP/1.1 connections' write loop", "net/http.(*persistConn).writeLoop"},
	{"HTTP/1.1 connections' read loop", "net/http.(*persistConn).readLoop"},
	{"webhook send, caller side (endpointsend)", "internal/endpointsend.(*Sender).Send"},
	{"scheduler (runtime.schedule)", "runtime.schedule"},
	{"handler: the batch's own work (processor.(*Processor).Handle)", "processor.(*Processor).Handle"},
}

// perfRecordFlags are perf record's sampling flags: software clock events
// (no hardware counters needed, as in a virtual machine) at 4,999 Hz, with
// call graphs.
var perfRecordFlags = []string{"-e", "cpu-clock", "-F", "4999", "-g"}

// perfElsewhere is the category of a sample no perfCategories frame is in.
const perfElsewhere = "elsewhere"

// perfRecording is a running perf record of one process.
type perfRecording struct {
	cmd  *exec.Cmd
	file string
	done chan struct{} // closed when perf has ended, with its wait error in err
	err  error
}

// perfAttach is how long perf record is given to attach to the process
// before the recorded work starts; samples before that are lost. A
// variable for the tests.
var perfAttach = 300 * time.Millisecond

// startPerf records the CPU samples of process pid into file until stop,
// with perfRecordFlags. It
// returns an error when perf cannot be started or ends before it is
// stopped (perf prints why on stderr: no such process, or
// kernel.perf_event_paranoid forbids it).
func startPerf(file string, pid int) (*perfRecording, error) {
	args := append(append([]string{"record", "-q"}, perfRecordFlags...), "-p", strconv.Itoa(pid), "-o", file)
	cmd := exec.Command("perf", args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s=1: perf record: %w", envPerf, err)
	}
	p := &perfRecording{cmd: cmd, file: file, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	select {
	case <-p.done:
		return nil, fmt.Errorf("%s=1: perf record ended before the recording (%v): see its message above", envPerf, p.err)
	case <-time.After(perfAttach):
		return p, nil
	}
}

// stop ends the recording: perf writes its file on SIGINT, then ends by
// raising the signal again, which is its success (so is exit status 0).
// A perf that had already ended, or ends otherwise, is an error.
func (p *perfRecording) stop() error {
	select {
	case <-p.done:
		return fmt.Errorf("perf record %s ended before it was stopped: %v", p.file, p.err)
	default:
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		return fmt.Errorf("perf record %s: %w", p.file, err)
	}
	<-p.done
	err := p.err
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("perf record %s: %w", p.file, err)
	}
	return nil
}

// report prints the recording's CPU per record by category to w: label
// names the row, records how many records the recording covered.
// perf script's output (tens of MB) is read as it comes, not held whole.
func (p *perfRecording) report(ctx context.Context, w io.Writer, label string, records int) error {
	cmd := exec.CommandContext(ctx, "perf", "script", "-i", p.file)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("perf script -i %s: %w", p.file, err)
	}
	b := perfBreakdown(out)
	// What the scanner left (a line over its limit) must not block perf.
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("perf script -i %s: %w", p.file, err)
	}
	fmt.Fprintf(w, "-- perf (%s=1): %s, %d records, %d samples (perf record %s; perf script -i %s)\n", envPerf, label, records, b.samples, strings.Join(perfRecordFlags, " "), p.file)
	printPerfBreakdown(w, b, records)
	return nil
}

// perfSplit is where one category's samples are: all of them, and those
// in the kernel, in ns (the samples' periods).
type perfSplit struct{ all, kernel int64 }

// perfBreakdownResult is a recording's samples by category.
type perfBreakdownResult struct {
	samples int
	by      map[string]perfSplit
}

// perfBreakdown reads perf script's default output (a header line per
// sample, "comm pid time: period event:", then one line per frame,
// innermost first, "address symbol+offset (object)", then a blank line)
// and sums each sample's period into its category.
func perfBreakdown(r io.Reader) perfBreakdownResult {
	res := perfBreakdownResult{by: map[string]perfSplit{}}
	var period int64
	var frames []string
	var kernel bool
	flush := func() {
		if period == 0 && len(frames) == 0 {
			return
		}
		res.samples++
		c := perfCategory(frames)
		s := res.by[c]
		s.all += period
		if kernel {
			s.kernel += period
		}
		res.by[c] = s
		period, frames, kernel = 0, nil, false
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] != ' ' && line[0] != '\t':
			flush()
			period = samplePeriod(line)
		default:
			f := strings.Fields(line)
			if len(f) >= 2 {
				frames = append(frames, f[1])
			}
			kernel = kernel || strings.Contains(line, "[kernel.kallsyms]")
		}
	}
	flush()
	return res
}

// samplePeriod is the period of a perf script sample header line: the
// number after the sample's time, before the event's name
// ("… 17967.408144:     200040 cpu-clock:"), in ns for cpu-clock; 0 when
// there is none.
func samplePeriod(header string) int64 {
	f := strings.Fields(header)
	for i, s := range f {
		if !strings.HasSuffix(s, ":") {
			continue
		}
		// f[i] is the time, the first field ending in ':'.
		if i+1 < len(f) {
			if n, err := strconv.ParseInt(f[i+1], 10, 64); err == nil {
				return n
			}
		}
		return 0
	}
	return 0
}

// perfCategory is the category of a sample whose stack is frames: the
// first of perfCategories with a frame in it.
func perfCategory(frames []string) string {
	for _, c := range perfCategories {
		for _, f := range frames {
			if strings.Contains(f, c.frame) {
				return c.name
			}
		}
	}
	return perfElsewhere
}

// printPerfBreakdown prints b's categories in perfCategories' order, then
// elsewhere and the total, in µs of CPU per record over records.
func printPerfBreakdown(w io.Writer, b perfBreakdownResult, records int) {
	perRecord := func(ns int64) float64 { return float64(ns) / 1e3 / float64(max(records, 1)) }
	var total perfSplit
	row := func(name string, s perfSplit) {
		fmt.Fprintf(w, "   %-64s %7.1f µs  (kernel %5.1f µs)\n", name, perRecord(s.all), perRecord(s.kernel))
	}
	for _, c := range perfCategories {
		s := b.by[c.name]
		total.all, total.kernel = total.all+s.all, total.kernel+s.kernel
		row(c.name, s)
	}
	s := b.by[perfElsewhere]
	total.all, total.kernel = total.all+s.all, total.kernel+s.kernel
	row(perfElsewhere, s)
	row("CPU per record, all samples", total)
}
