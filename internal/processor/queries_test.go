package processor_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/feedback"
)

// savedQueries returns the QueryString of every AWS::Logs::QueryDefinition
// in template.yaml that reads the deliver function's log group, by resource
// name.
func savedQueries(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	var resources *yaml.Node
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "Resources" {
			resources = root.Content[i+1]
		}
	}
	require.NotNil(t, resources)
	out := map[string]string{}
	for i := 0; i+1 < len(resources.Content); i += 2 {
		var r struct {
			Type       string `yaml:"Type"`
			Properties struct {
				QueryString   string      `yaml:"QueryString"`
				LogGroupNames []yaml.Node `yaml:"LogGroupNames"`
			} `yaml:"Properties"`
		}
		require.NoError(t, resources.Content[i+1].Decode(&r))
		if r.Type != "AWS::Logs::QueryDefinition" {
			continue
		}
		for _, g := range r.Properties.LogGroupNames {
			if g.Value == "DeliverFunctionLogGroup" {
				out[resources.Content[i].Value] = r.Properties.QueryString
			}
		}
	}
	return out
}

// insights is the part of CloudWatch Logs Insights the saved queries use:
// a filter of = comparisons with string literals, ispresent(), and, or and
// parentheses; the fields the other commands name.
type insights struct {
	toks []string
	pos  int
}

var insightsToken = regexp.MustCompile(`\s*("(?:[^"\\]|\\.)*"|\(|\)|=|[\w@.*]+)`)

// matches reports whether line passes the filter expression expr.
func matches(t *testing.T, expr string, line map[string]any) bool {
	t.Helper()
	p := &insights{}
	for _, m := range insightsToken.FindAllStringSubmatch(expr, -1) {
		p.toks = append(p.toks, m[1])
	}
	ok := p.or(t, line)
	require.Equal(t, len(p.toks), p.pos, "filter %q: unread tokens", expr)
	return ok
}

func (p *insights) next() string {
	if p.pos == len(p.toks) {
		return ""
	}
	p.pos++
	return p.toks[p.pos-1]
}

func (p *insights) peek() string {
	if p.pos == len(p.toks) {
		return ""
	}
	return p.toks[p.pos]
}

func (p *insights) or(t *testing.T, line map[string]any) bool {
	v := p.and(t, line)
	for p.peek() == "or" {
		p.next()
		v = p.and(t, line) || v
	}
	return v
}

func (p *insights) and(t *testing.T, line map[string]any) bool {
	v := p.factor(t, line)
	for p.peek() == "and" {
		p.next()
		v = p.factor(t, line) && v
	}
	return v
}

func (p *insights) factor(t *testing.T, line map[string]any) bool {
	switch tok := p.next(); {
	case tok == "(":
		v := p.or(t, line)
		require.Equal(t, ")", p.next())
		return v
	case tok == "ispresent":
		require.Equal(t, "(", p.next())
		_, ok := line[p.next()]
		require.Equal(t, ")", p.next())
		return ok
	default:
		require.Equal(t, "=", p.next(), "field %q", tok)
		lit := p.next()
		require.True(t, strings.HasPrefix(lit, `"`), "literal %q", lit)
		s, _ := line[tok].(string)
		return s == strings.Trim(lit, `"`)
	}
}

// TestSavedQueriesReadTheLines runs the template's saved Logs Insights
// queries of the deliver function's log group over the lines a batch of
// every outcome writes at INFO (the default level): each filter picks
// exactly the records it is meant to, and every field the query reads
// (aggregated, grouped by, or listed) is on those lines, numeric where it
// is aggregated.
func TestSavedQueriesReadTheLines(t *testing.T) {
	t.Parallel()
	webhook := func(id, host string) string {
		return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"https://` + host + `/x","event_type":"t","payload":{}}}`
	}
	email := `{"version":1,"id":"ok-mail","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"t"}}`
	_, byID := infoLines(t, events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhook("ok-a", "a.example.com"), 1),
		rec("m2", webhook("ok-b", "b.example.com"), 2),
		rec("m3", webhook("transient-q", "a.example.com"), 1),
		rec("m4", webhook("permanent-q", "c.example.com"), 1),
		rec("m5", `{"version":1,"id":"bad-q","channel":"carrier-pigeon"}`, 1),
		rec("m6", email, 1),
		rec("m7", webhook("ok-a", "a.example.com"), 1),
	}})
	var lines []map[string]any
	for _, ls := range byID {
		lines = append(lines, ls...)
	}
	require.Len(t, lines, 7)

	queries := savedQueries(t)
	want := map[string]struct {
		query string
		ids   []string // the ids whose lines the filter should pick
	}{
		"FateOfNotificationQuery": {ids: []string{"transient-q"}},
		"DeadLettersByClassQuery": {ids: []string{"permanent-q", "bad-q"}},
		// Every attempted webhook send, whatever its outcome.
		"SlowestWebhookHostsQuery": {ids: []string{"ok-a", "ok-b", "transient-q", "permanent-q"}},
		"RetriesByClassQuery":      {ids: []string{"transient-q"}},
	}
	require.Len(t, queries, len(want), "a new saved query needs its case here")
	aggregate := regexp.MustCompile(`\b(?:pct|max|min|avg|sum)\((\w+)`)
	for name, w := range want {
		q, ok := queries[name]
		require.True(t, ok, name)
		q = strings.ReplaceAll(q, "REPLACE-WITH-THE-NOTIFICATION-ID", "transient-q")
		var picked []map[string]any
		var ids []string
		var read, numeric []string
		for _, cmd := range strings.Split(q, "\n") {
			cmd = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cmd), "|"))
			switch {
			case strings.HasPrefix(cmd, "filter "):
				for _, l := range lines {
					if matches(t, strings.TrimPrefix(cmd, "filter "), l) {
						picked = append(picked, l)
						ids = append(ids, l["id"].(string))
					}
				}
			case strings.HasPrefix(cmd, "fields "):
				for _, f := range strings.Split(strings.TrimPrefix(cmd, "fields "), ",") {
					read = append(read, strings.TrimSpace(f))
				}
			case strings.HasPrefix(cmd, "stats "):
				if _, by, ok := strings.Cut(cmd, " by "); ok {
					for _, f := range strings.Split(by, ",") {
						read = append(read, strings.TrimSpace(f))
					}
				}
				for _, m := range aggregate.FindAllStringSubmatch(cmd, -1) {
					numeric = append(numeric, m[1])
				}
			}
		}
		require.ElementsMatch(t, w.ids, ids, "%s picks %v", name, ids)
		for _, l := range picked {
			for _, f := range numeric {
				require.IsType(t, 0.0, l[f], "%s aggregates %s: line %v", name, f, l)
			}
			for _, f := range read {
				if name == "FateOfNotificationQuery" {
					continue // lists what a line has, of either log group
				}
				require.Contains(t, l, f, "%s reads %s", name, f)
			}
		}
		if name == "FateOfNotificationQuery" {
			for _, f := range []string{"msg", "outcome", "receive_count", "error_class", "delay_seconds", "error", "sqs_message_id"} {
				require.True(t, slices.Contains(read, f), "the fate query lists %s", f)
				require.Contains(t, picked[0], f, "a retry's line has %s", f)
			}
		}
	}

	// herald email events runs feedback.EventsQuery on the deliver
	// function's log group too: it finds a delivered email's compact line
	// by id, with its msg and outcome.
	_, filter, ok := strings.Cut(feedback.EventsQuery("ok-mail"), "| filter ")
	require.True(t, ok)
	filter, _, _ = strings.Cut(filter, "\n")
	var found []map[string]any
	for _, l := range lines {
		if matches(t, filter, l) {
			found = append(found, l)
		}
	}
	require.Len(t, found, 1)
	require.Equal(t, "notification", found[0]["msg"])
	require.Equal(t, "delivered", found[0]["outcome"])
}
