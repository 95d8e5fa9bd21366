package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// pos is a position in a source file as Go's coverage profile writes it:
// line and byte column, both from 1.
type pos struct{ line, col int }

func (p pos) before(q pos) bool {
	return p.line < q.line || p.line == q.line && p.col < q.col
}

// block is one line of a coverage profile after its mode line:
// "file:startLine.startCol,endLine.endCol statements count".
type block struct {
	file       string
	start, end pos
	stmts      int
	count      int
}

func (b block) String() string {
	return fmt.Sprintf("%s:%d.%d,%d.%d %d %d", b.file, b.start.line, b.start.col, b.end.line, b.end.col, b.stmts, b.count)
}

// profile is a parsed coverage profile: its mode ("set", "count" or
// "atomic") and its blocks in the order read.
type profile struct {
	mode   string
	blocks []block
}

// parseProfile reads a profile in the text format of go test -coverprofile.
// It returns an error naming the line that is not in that format.
func parseProfile(r io.Reader) (*profile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	p := &profile{}
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			mode, ok := strings.CutPrefix(line, "mode: ")
			if !ok {
				return nil, fmt.Errorf("profile line 1: want \"mode: set|count|atomic\", got %q", line)
			}
			p.mode = mode
			continue
		}
		if line == "" {
			continue
		}
		b, err := parseBlock(line)
		if err != nil {
			return nil, fmt.Errorf("profile line %d: %w", n, err)
		}
		p.blocks = append(p.blocks, b)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	if n == 0 {
		return nil, fmt.Errorf("profile is empty: no mode line")
	}
	return p, nil
}

func parseBlock(line string) (block, error) {
	bad := func() (block, error) {
		return block{}, fmt.Errorf("want \"file:line.col,line.col statements count\", got %q", line)
	}
	colon := strings.LastIndexByte(line, ':')
	if colon <= 0 {
		return bad()
	}
	fields := strings.Fields(line[colon+1:])
	if len(fields) != 3 {
		return bad()
	}
	startText, endText, ok := strings.Cut(fields[0], ",")
	if !ok {
		return bad()
	}
	start, ok1 := parsePos(startText)
	end, ok2 := parsePos(endText)
	stmts, err1 := strconv.Atoi(fields[1])
	count, err2 := strconv.Atoi(fields[2])
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return bad()
	}
	return block{file: line[:colon], start: start, end: end, stmts: stmts, count: count}, nil
}

func parsePos(s string) (pos, bool) {
	l, c, ok := strings.Cut(s, ".")
	if !ok {
		return pos{}, false
	}
	line, err1 := strconv.Atoi(l)
	col, err2 := strconv.Atoi(c)
	if err1 != nil || err2 != nil {
		return pos{}, false
	}
	return pos{line, col}, true
}

// write writes the profile in the format parseProfile reads.
func (p *profile) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "mode: %s\n", p.mode)
	for _, b := range p.blocks {
		fmt.Fprintln(bw, b)
	}
	return bw.Flush()
}
