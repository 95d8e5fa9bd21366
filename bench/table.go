package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// printTable writes one section to out: "== title", then the header and
// rows in columns two spaces apart.
func printTable(out io.Writer, title string, header []string, rows [][]string) {
	fmt.Fprintln(out, "== "+title)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	_ = w.Flush()
}

// verdict says whether got meets a goal of at most (or, with atLeast, at
// least) goal.
func verdict(got, goal float64, atLeast bool) string {
	if (atLeast && got >= goal) || (!atLeast && got <= goal) {
		return "met"
	}
	return "MISSED"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// median is the middle of ds sorted (the upper one of an even count), 0
// of none; ds is left as it is.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}

// percentile is the p-th (0 to 1) of ds sorted, at index p×(n−1) rounded
// down, 0 of none; ds is left as it is.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	i := int(p * float64(len(s)-1))
	return s[i]
}

// machine describes where the figures come from.
func machine() string {
	model := "unknown CPU"
	if out, err := exec.Command("lscpu").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "Model name" {
				model = strings.TrimSpace(v)
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(strings.SplitN(string(b), "\n", 2)[0], "MemTotal: %d kB", &kb)
		mem = fmt.Sprintf(", %.1f GiB memory", float64(kb)/(1<<20))
	}
	return fmt.Sprintf("machine: %d CPUs (nproc), %s%s, %s/%s, %s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

func medianF(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// durRange is "median (min–max)" of ds, or the one value, or "–".
func durRange(ds []time.Duration) string {
	switch len(ds) {
	case 0:
		return "–"
	case 1:
		return ms(ds[0])
	}
	lo, hi := slices.Min(ds), slices.Max(ds)
	return fmt.Sprintf("%s (%.1f–%.1f)", ms(median(ds)), float64(lo.Microseconds())/1000, float64(hi.Microseconds())/1000)
}

// numRange is "median (min–max)" of xs in format f, or the one value, or "–".
func numRange(xs []float64, f string) string {
	switch len(xs) {
	case 0:
		return "–"
	case 1:
		return fmt.Sprintf(f, xs[0])
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", medianF(xs), slices.Min(xs), slices.Max(xs))
}
