package metrics_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/feedback"
)

// TestAlarmsDocMatchesTemplate: docs/alarms.md lists exactly the alarms
// template.yaml creates, each in the table of what it sees and with a
// section of what to do.
func TestAlarmsDocMatchesTemplate(t *testing.T) {
	t.Parallel()
	tpl := readFile(t, "../../template.yaml")
	doc := readFile(t, "../../docs/alarms.md")

	var inTemplate []string
	for _, m := range regexp.MustCompile(`AlarmName: !Sub \$\{AWS::StackName\}-([a-z0-9-]+)`).FindAllStringSubmatch(tpl, -1) {
		inTemplate = append(inTemplate, m[1])
	}
	require.Len(t, inTemplate, strings.Count(tpl, "Type: AWS::CloudWatch::Alarm"), "every alarm in template.yaml has an AlarmName ${AWS::StackName}-NAME")

	section := between(t, doc, "## The alarms", "\n## ")
	var inTable []string
	for _, m := range regexp.MustCompile(`(?m)^\| ([a-z0-9]+(?:-[a-z0-9]+)*) \|`).FindAllStringSubmatch(section, -1) {
		inTable = append(inTable, m[1])
	}
	slices.Sort(inTemplate)
	slices.Sort(inTable)
	require.Equal(t, inTemplate, inTable, "docs/alarms.md's table of alarms and template.yaml's alarms")

	var headed []string
	for _, m := range regexp.MustCompile(`(?m)^### (.+)$`).FindAllStringSubmatch(section, -1) {
		for _, name := range strings.Split(m[1], ",") {
			headed = append(headed, strings.TrimSpace(name))
		}
	}
	for _, a := range inTemplate {
		require.Contains(t, headed, a, "docs/alarms.md has no section (### %s) saying what to do", a)
	}
}

// TestMetricsDocMatchesNames: the metrics table of docs/alarms.md lists
// exactly the metric names the functions write: those this package declares
// (names.go) and the feedback function's.
func TestMetricsDocMatchesNames(t *testing.T) {
	t.Parallel()
	declared := metricNames(t)
	require.NotEmpty(t, declared)
	declared = append(declared, feedback.MetricEmailEvents, feedback.MetricEmailEventsUnreadable)
	section := between(t, readFile(t, "../../docs/alarms.md"), "## Metrics (namespace `Herald`)", "\n## ")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| (`[A-Za-z]+`(?:, `[A-Za-z]+`)*) \\|").FindAllStringSubmatch(section, -1) {
		for _, n := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(m[1], -1) {
			documented = append(documented, n[1])
		}
	}
	slices.Sort(declared)
	slices.Sort(documented)
	require.Equal(t, declared, documented, "docs/alarms.md's metrics table and internal/metrics/names.go")
}

// metricNames returns the values of the constants of names.go's block of
// metric names (the one declaring Notifications).
func metricNames(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	require.NoError(t, err)
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		var names []string
		isMetrics := false
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				isMetrics = isMetrics || id.Name == "Notifications"
				lit, ok := vs.Values[i].(*ast.BasicLit)
				require.True(t, ok, "%s is not a string literal", id.Name)
				v, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				names = append(names, v)
			}
		}
		if isMetrics {
			return names
		}
	}
	return nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// between returns doc from the line start to the next end after it.
func between(t *testing.T, doc, start, end string) string {
	t.Helper()
	i := strings.Index(doc, start)
	require.GreaterOrEqual(t, i, 0, "no %q", start)
	rest := doc[i+len(start):]
	if j := strings.Index(rest, end); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
