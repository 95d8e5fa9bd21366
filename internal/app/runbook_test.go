package app_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/heraldhq/herald/internal/app" // links every package the deliver function writes classes from
	"github.com/heraldhq/herald/internal/delivery"
)

// TestRunbookHasARowForEveryClass: docs/operations.md ("Fix the cause") has
// a row for every error class the deliver function can write
// (delivery.Classes of the packages it links), with what it means and how to
// fix it in AWS and locally, and no row for a class that does not exist.
func TestRunbookHasARowForEveryClass(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/operations.md")
	require.NoError(t, err)
	doc := string(b)
	start := strings.Index(doc, "### 3. Fix the cause")
	require.GreaterOrEqual(t, start, 0, "docs/operations.md has no \"Fix the cause\" section")
	section := doc[start:]
	section = section[:strings.Index(section, "\n### ")+1]

	rows := map[delivery.Class]int{}
	code := regexp.MustCompile("`([a-z0-9_]+)`")
	header := false
	for line := range strings.SplitSeq(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !header {
			require.Equal(t, []string{"class", "what it means", "fix in AWS", "fix locally"}, trimAll(cells), "the table's columns")
			header = true
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(cells[0]), "---") {
			continue
		}
		require.Len(t, cells, 4, "row %q", line)
		for i, c := range cells[1:] {
			require.NotEmpty(t, strings.TrimSpace(c), "row %q: column %d is empty", line, i+2)
		}
		for _, m := range code.FindAllStringSubmatch(cells[0], -1) {
			rows[delivery.Class(m[1])]++
		}
	}
	require.GreaterOrEqual(t, len(delivery.Classes()), 30, "the classes of email, webhook and processor are linked")
	known := map[delivery.Class]bool{"redrive_policy": true} // herald dlq ls's name for a letter without a reason
	for _, c := range delivery.Classes() {
		known[c] = true
		require.Equal(t, 1, rows[c], "class %s needs exactly one row in docs/operations.md, \"Fix the cause\"", c)
	}
	for c := range rows {
		require.True(t, known[c], "docs/operations.md has a row for %s, which herald does not write", c)
	}
}

func trimAll(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.TrimSpace(c)
	}
	return out
}
