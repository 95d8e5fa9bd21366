package processor_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
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
// a filter of = comparisons with string literals, like with a regular
// expression, ispresent(), and, or and parentheses, fields of dotted paths
// (delivered.0.id); the commands fields (jsonParse(@message) as X,
// coalesce(a, b) as c, or names), unnest X.list into y, stats, sort and
// limit.
type insights struct {
	toks []string
	pos  int
}

var insightsToken = regexp.MustCompile(`\s*("(?:[^"\\]|\\.)*"|/(?:[^/\\]|\\.)*/|\(|\)|=|[\w@.*]+)`)

// lookup is the value of the dotted path in line: members of objects,
// elements of arrays by index.
func lookup(line map[string]any, path string) any {
	var v any = line
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

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
		ok := lookup(line, p.next()) != nil
		require.Equal(t, ")", p.next())
		return ok
	case p.peek() == "like":
		p.next()
		lit := p.next()
		require.True(t, strings.HasPrefix(lit, "/"), "like %q: a regular expression", lit)
		s, _ := lookup(line, tok).(string)
		return regexp.MustCompile(strings.Trim(lit, "/")).MatchString(s)
	default:
		require.Equal(t, "=", p.next(), "field %q", tok)
		lit := p.next()
		require.True(t, strings.HasPrefix(lit, `"`), "literal %q", lit)
		s, _ := lookup(line, tok).(string)
		return s == strings.Trim(lit, `"`)
	}
}

var (
	jsonParseField = regexp.MustCompile(`^jsonParse\(@message\) as (\w+)$`)
	coalesceField  = regexp.MustCompile(`coalesce\(([\w.]+), ([\w.]+)\) as (\w+)`)
	unnestCommand  = regexp.MustCompile(`^unnest ([\w.]+) into (\w+)$`)
)

// TestSavedQueriesReadTheLines runs the template's saved Logs Insights
// queries of the deliver function's log group over the lines a batch of
// every outcome writes at INFO (the default level): each finds exactly the
// records it is meant to, a delivery of the clean path in its batch
// line's list, and every field the query reads (aggregated, grouped by, or
// listed) is on those records, numeric where it is aggregated.
func TestSavedQueriesReadTheLines(t *testing.T) {
	t.Parallel()
	webhook := func(id, host string) string {
		return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"https://` + host + `/x","event_type":"t","payload":{}}}`
	}
	email := `{"version":1,"id":"ok-mail","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"t"}}`
	raw, _ := infoLines(t, events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", webhook("ok-a", "a.example.com"), 1),
		rec("m2", webhook("ok-b", "b.example.com"), 2),
		rec("m3", webhook("transient-q", "a.example.com"), 1),
		rec("m4", webhook("permanent-q", "c.example.com"), 1),
		rec("m5", `{"version":1,"id":"bad-q","channel":"carrier-pigeon"}`, 1),
		rec("m6", email, 1),
		rec("m7", webhook("ok-a", "a.example.com"), 1),
	}})
	var lines []map[string]any
	for l := range bytes.Lines(raw) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m))
		m["@message"] = string(bytes.TrimSpace(l))
		lines = append(lines, m)
	}

	queries := savedQueries(t)
	want := map[string]struct {
		id  string   // the notification id the query is given
		ids []string // the ids of the rows it should end with ("batch" for a batch line)
	}{
		"FateOfNotificationQuery": {id: "transient-q", ids: []string{"transient-q"}},
		// ok-a was delivered (listed by its batch line), then a copy came.
		"FateOfNotificationQuery ok-a": {id: "ok-a", ids: []string{"batch", "ok-a"}},
		"DeadLettersByClassQuery":      {ids: []string{"permanent-q", "bad-q"}},
		// Every attempted webhook send, whatever its outcome.
		"SlowestWebhookHostsQuery": {ids: []string{"ok-a", "ok-b", "transient-q", "permanent-q"}},
		"RetriesByClassQuery":      {ids: []string{"transient-q"}},
	}
	require.Len(t, queries, len(want)-1, "a new saved query needs its case here")
	aggregate := regexp.MustCompile(`\b(?:pct|max|min|avg|sum)\((\w+)`)
	for name, w := range want {
		q, ok := queries[strings.Fields(name)[0]]
		require.True(t, ok, name)
		q = strings.ReplaceAll(q, "REPLACE-WITH-THE-NOTIFICATION-ID", w.id)
		rows := lines
		var read, numeric []string
		unnested := ""
		for _, cmd := range strings.Split(q, "\n") {
			cmd = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cmd), "|"))
			switch {
			case strings.HasPrefix(cmd, "filter "):
				var picked []map[string]any
				for _, l := range rows {
					if matches(t, strings.TrimPrefix(cmd, "filter "), l) {
						picked = append(picked, l)
					}
				}
				rows = picked
			case jsonParseField.MatchString(strings.TrimPrefix(cmd, "fields ")):
				as := jsonParseField.FindStringSubmatch(strings.TrimPrefix(cmd, "fields "))[1]
				for _, r := range rows {
					r[as] = maps.Clone(r)
				}
			case strings.HasPrefix(cmd, "fields coalesce("):
				var out []map[string]any
				for _, r := range rows {
					r = maps.Clone(r)
					for _, m := range coalesceField.FindAllStringSubmatch(cmd, -1) {
						v := lookup(r, m[1])
						if v == nil {
							v = lookup(r, m[2])
						}
						r[m[3]] = v
						read = append(read, m[3])
					}
					out = append(out, r)
				}
				rows = out
			case strings.HasPrefix(cmd, "fields "):
				for _, f := range strings.Split(strings.TrimPrefix(cmd, "fields "), ",") {
					read = append(read, strings.TrimSpace(f))
				}
			case unnestCommand.MatchString(cmd):
				m := unnestCommand.FindStringSubmatch(cmd)
				unnested = m[2]
				var out []map[string]any
				for _, r := range rows {
					list, _ := lookup(r, m[1]).([]any)
					if len(list) == 0 {
						out = append(out, r) // a line without the list: one row
						continue
					}
					for _, e := range list {
						c := maps.Clone(r)
						c[m[2]] = e
						out = append(out, c)
					}
				}
				rows = out
			case strings.HasPrefix(cmd, "stats "):
				if _, by, ok := strings.Cut(cmd, " by "); ok {
					for _, f := range strings.Split(by, ",") {
						read = append(read, strings.TrimSpace(f))
					}
				}
				for _, m := range aggregate.FindAllStringSubmatch(cmd, -1) {
					numeric = append(numeric, m[1])
				}
			case cmd == "", strings.HasPrefix(cmd, "sort "), strings.HasPrefix(cmd, "limit "):
			default:
				t.Fatalf("%s: command %q is not emulated here", name, cmd)
			}
		}
		var ids []string
		for _, r := range rows {
			switch id := lookup(r, unnested+".id"); {
			case unnested != "" && id != nil:
				ids = append(ids, id.(string))
			case r["msg"] == "batch":
				ids = append(ids, "batch")
			default:
				ids = append(ids, r["id"].(string))
			}
		}
		require.ElementsMatch(t, w.ids, ids, "%s picks %v", name, ids)
		for _, r := range rows {
			for _, f := range numeric {
				require.IsType(t, 0.0, r[f], "%s aggregates %s: row %v", name, f, r)
			}
			for _, f := range read {
				if strings.HasPrefix(name, "FateOfNotificationQuery") {
					continue // lists what a line has, of either log group
				}
				require.NotNil(t, r[f], "%s reads %s: row %v", name, f, r)
			}
		}
		if name == "FateOfNotificationQuery" {
			for _, f := range []string{"msg", "outcome", "receive_count", "error_class", "delay_seconds", "error", "sqs_message_id"} {
				require.True(t, slices.Contains(read, f), "the fate query lists %s", f)
				require.Contains(t, rows[0], f, "a retry's line has %s", f)
			}
		}
	}

	// herald email events runs feedback.EventsQuery on the deliver
	// function's log group too: it finds a delivered email's batch line by
	// the id it lists, with its msg and outcome.
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
	require.Equal(t, "batch", found[0]["msg"])
	require.Equal(t, "email", found[0]["channel"])
	require.Equal(t, "delivered", found[0]["outcome"])
}
