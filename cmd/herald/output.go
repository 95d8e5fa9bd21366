package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"
)

// table writes rows aligned in columns (text/tabwriter), the header first.
// Cells are cleaned of tabs and line breaks so that a value cannot break
// the layout.
func table(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = cell(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

var cellReplacer = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

func cell(s string) string {
	if s == "" {
		return "-"
	}
	return printable(cellReplacer.Replace(s))
}

// printable returns s with every control character but line feed and tab
// (C0, DEL, C1: unicode.IsControl) and every byte that is not UTF-8
// written as a Go escape (\x1b, \u009b), so that text from a dead letter
// cannot drive the terminal (ECMA-48 escape and control sequences).
func printable(s string) string {
	p, _ := printableUpTo(s, math.MaxInt)
	return p
}

// printableUpTo is printable(s) while it is at most limit bytes, else its
// longest prefix of whole characters and escapes within limit, and
// whether it is all of printable(s).
func printableUpTo(s string, limit int) (string, bool) {
	var b strings.Builder
	var piece string
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			piece = fmt.Sprintf("\\x%02x", s[i])
		case r == '\n' || r == '\t' || !unicode.IsControl(r):
			piece = string(r)
		case r < 0x80:
			piece = fmt.Sprintf("\\x%02x", r)
		default:
			piece = fmt.Sprintf("\\u%04x", r)
		}
		if b.Len()+len(piece) > limit {
			return b.String(), false
		}
		b.WriteString(piece)
	}
	return b.String(), true
}

// writeJSON writes v as indented JSON and a line break, its control
// characters escaped (jsonControlsEscaped).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonControlsEscaped(buf.Bytes()))
	return err
}

// jsonControlsEscaped returns the JSON text b with DEL and the C1 control
// characters (U+007F–U+009F), which encoding/json writes as they are,
// written as \u escapes, as it writes C0 ones: the same JSON value (RFC
// 8259 §7), which cannot drive a terminal it is printed on (U+009B is
// ECMA-48's CSI, as ESC [ is). Outside strings JSON text has none.
func jsonControlsEscaped(b []byte) []byte {
	if !bytes.ContainsFunc(b, func(r rune) bool { return r >= 0x7f && r <= 0x9f }) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r >= 0x7f && r <= 0x9f {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// age formats a duration as operators read ages: 45s, 12m, 3h20m, 2d4h.
func age(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// parseAge reads a duration of Go's form (90m, 36h) or whole days (7d).
func parseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		// At most the days a time.Duration holds: a larger count would
		// wrap to a negative age, which a filter reads as any age.
		const maxDays = int(math.MaxInt64 / int64(24*time.Hour))
		if _, err := fmt.Sscanf(d, "%d", &n); err == nil && n >= 0 && n <= maxDays && fmt.Sprint(n) == d {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q: want a duration such as 90m, 36h or 7d", s)
	}
	return v, nil
}
