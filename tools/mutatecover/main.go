package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run(os.Args, os.Getenv, os.Stdout, os.Stderr))
}

// run is the command: args as os.Args, getenv reading the environment. It
// returns the exit status: the real go's when invoked as go; else 0 when the
// profile is widened, 1 when it cannot be, 2 for a usage error.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if filepath.Base(args[0]) == "go" {
		return runGo(args[1:], getenv("MUTATECOVER_GO"), getenv("MUTATECOVER_LOG"), stdout, stderr)
	}
	fs := flag.NewFlagSet("mutatecover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("profile", "", "coverage profile to widen in place (required)")
	if err := fs.Parse(args[1:]); err != nil || *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: mutatecover -profile FILE")
		return 2
	}
	goTool := getenv("MUTATECOVER_GO")
	if goTool == "" {
		goTool = "go"
	}
	line, err := widenFile(*file, goTool)
	if err != nil {
		fmt.Fprintln(stderr, "mutatecover:", err)
		return 1
	}
	fmt.Fprintln(stdout, line)
	return 0
}

// coverProfileArg returns the file a go command line asks to write a
// coverage profile to: "go test ... -coverprofile FILE" or
// "-coverprofile=FILE" (one or two dashes), before any "-args".
func coverProfileArg(args []string) (string, bool) {
	if len(args) == 0 || args[0] != "test" {
		return "", false
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--args" {
			return "", false
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "coverprofile" {
			continue
		}
		if hasValue {
			return value, true
		}
		if i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// runGo runs the real go (goTool) with args and returns the exit status for
// the wrapper. A command that writes no coverage profile replaces this
// process (exec), so that gremlins' kill on a mutant's timeout reaches go
// itself. A go test writing one runs as a child, its output to stdout and
// stderr; when it succeeds the profile
// is widened, and a line saying what was added goes to logFile (if not "").
func runGo(args []string, goTool, logFile string, stdout, stderr io.Writer) int {
	if goTool == "" {
		fmt.Fprintln(stderr, "mutatecover: MUTATECOVER_GO must name the real go binary")
		return 1
	}
	file, ok := coverProfileArg(args)
	if !ok {
		err := syscall.Exec(goTool, append([]string{"go"}, args...), os.Environ())
		fmt.Fprintln(stderr, "mutatecover: exec go:", err)
		return 1
	}
	cmd := exec.Command(goTool, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintln(stderr, "mutatecover: go:", err)
		return 1
	}
	line, err := widenFile(file, goTool)
	if err != nil {
		fmt.Fprintln(stderr, "mutatecover:", err)
		return 1
	}
	if logFile != "" {
		if err := appendLine(logFile, line); err != nil {
			fmt.Fprintln(stderr, "mutatecover:", err)
			return 1
		}
	}
	return 0
}

// widenFile widens the profile in file in place and returns a line saying
// how many expressions of each kind it added.
func widenFile(file, goTool string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	p, err := parseProfile(f)
	f.Close()
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	before := len(p.blocks)
	kinds, err := widenProfile(p, goTool)
	if err != nil {
		return "", err
	}
	var buf strings.Builder
	if err := p.write(&buf); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, []byte(buf.String()), 0o644); err != nil {
		return "", err
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %d", k, kinds[k])
	}
	return fmt.Sprintf("mutatecover %s: %d blocks added to %d (expressions: %s)", file, len(p.blocks)-before, before, strings.Join(parts, ", ")), nil
}

func appendLine(file, line string) error {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
