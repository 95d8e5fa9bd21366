package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// guidePath is the application developer's guide to registered endpoints.
const guidePath = "../../docs/endpoints-guide.md"

// codeBlock is a fenced block of a Markdown page.
type codeBlock struct {
	lang, text string
	from       string // the file named by a "<!-- from PATH -->" line just before it
	line       int
}

var fromMarker = regexp.MustCompile(`^<!-- from (\S+) -->$`)

// codeBlocks returns page's fenced blocks in order.
func codeBlocks(t *testing.T, page string) []codeBlock {
	t.Helper()
	var out []codeBlock
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		b := codeBlock{lang: lang, line: i + 1}
		if i > 0 {
			if m := fromMarker.FindStringSubmatch(lines[i-1]); m != nil {
				b.from = m[1]
			}
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		require.Less(t, i, len(lines), "the block at line %d is not closed", b.line)
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// shellWords splits one shell command line into words: single and double
// quotes, backslash escapes, a # comment; no expansion.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			require.GreaterOrEqual(t, j, 0, "unclosed ' in %q", line)
			cur.WriteString(line[i+1 : i+1+j])
			i += 1 + j
			inWord = true
		case c == '"':
			j := strings.IndexByte(line[i+1:], '"')
			require.GreaterOrEqual(t, j, 0, "unclosed \" in %q", line)
			require.NotContains(t, line[i+1:i+1+j], "$", "no expansion in the guide's commands: %q", line)
			cur.WriteString(line[i+1 : i+1+j])
			i += 1 + j
			inWord = true
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(line[i+1])
			i++
			inWord = true
		case c == '#' && !inWord:
			i = len(line)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// guideCommands returns the herald command lines of the guide's sh blocks,
// continuation lines joined, each as its words after "herald".
func guideCommands(t *testing.T, blocks []codeBlock) [][]string {
	t.Helper()
	var out [][]string
	for _, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		joined := strings.ReplaceAll(b.text, "\\\n", " ")
		for _, l := range strings.Split(joined, "\n") {
			w := shellWords(t, l)
			if len(w) == 0 {
				continue
			}
			require.Equal(t, "herald", w[0], "the guide's sh blocks hold herald commands only: %q", l)
			out = append(out, w[1:])
		}
	}
	return out
}

// parseCommand parses args as herald would, up to running the command:
// the command path exists, every flag is one of its own or its parents'
// with a value of the flag's type, the arguments are what the command
// takes and its required flags are there.
func parseCommand(args []string) error {
	root := newRoot(defaultEnv())
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root || !cmd.Runnable() {
		return usagef("%q names no command", strings.Join(args, " "))
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return err
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return err
	}
	return cmd.ValidateFlagGroups()
}

// TestGuideCommandsParse: every herald command line of the guide parses
// with herald's real commands and flags, and the guide shows each
// endpoints subcommand and the dead-letter filters a reader needs; a
// misspelt flag, a missing argument or a value of the wrong type fails.
func TestGuideCommandsParse(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(guidePath)
	require.NoError(t, err)
	cmds := guideCommands(t, codeBlocks(t, string(page)))
	require.GreaterOrEqual(t, len(cmds), 15)
	var shown []string
	for _, args := range cmds {
		require.NoError(t, parseCommand(args), "herald %s", strings.Join(args, " "))
		path := args[0]
		if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
			path += " " + args[1]
		}
		shown = append(shown, path)
		for _, a := range args {
			if strings.HasPrefix(a, "ep_") {
				require.True(t, notification.ValidEndpointID(a), "%s: an endpoint id as herald makes them", a)
			}
		}
	}
	for _, want := range []string{
		"endpoints create", "endpoints ls", "endpoints show", "endpoints update", "endpoints delete", "endpoints enable",
		"endpoints disable", "endpoints rotate-secret", "endpoints test", "send", "verify", "dlq ls", "dlq redrive",
	} {
		require.Contains(t, shown, want, "the guide shows herald %s", want)
	}
	joined := strings.Join(slices.Concat(cmds...), " ")
	for _, want := range []string{"--event-type invoice.*", "--endpoint", "--since", "--grace", "--reason"} {
		require.Contains(t, joined, want)
	}

	for _, bad := range [][]string{
		{"endpoints", "create", "--tenant", "acme", "--urll", "https://x.example"},
		{"endpoints", "show"},
		{"endpoints", "rotate-secret", "ep_01m921tccrt0eax58fafvapteh", "--grace", "two days"},
		{"endpoints", "creat"},
		{"dlq", "redrive", "--endpoint"},
	} {
		require.Error(t, parseCommand(bad), "herald %s", strings.Join(bad, " "))
	}
}

// TestGuideSamplesAreTheTestedFiles: each code sample of the guide is
// taken from the file its "from" line names (docs/examples, whose tests
// run them: the Go and Python API calls, the event sends and the
// receivers, which verify a real herald request), and every Go, Python,
// JavaScript and JSON sample names one, so no sample is untested; the
// event the guide sends is one the contract accepts.
func TestGuideSamplesAreTheTestedFiles(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(guidePath)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, b := range codeBlocks(t, string(page)) {
		switch b.lang {
		case "go", "python", "js":
			require.NotEmpty(t, b.from, "the %s sample at line %d names the file it is from", b.lang, b.line)
		case "json":
			if b.from == "" {
				continue // a shape the receiver sees, not a file
			}
		default:
			require.Empty(t, b.from, "line %d", b.line)
			continue
		}
		src, err := os.ReadFile(filepath.Join("../..", b.from))
		require.NoError(t, err, "line %d", b.line)
		require.GreaterOrEqual(t, strings.Count(b.text, "\n"), 2, "line %d: a sample of some lines", b.line)
		require.Contains(t, string(src), b.text, "the sample at line %d is a part of %s, as it is", b.line, b.from)
		require.Contains(t, string(page), "](examples/"+strings.TrimPrefix(b.from, "docs/examples/")+")", "the guide links %s", b.from)
		seen[b.from] = true
	}
	for _, f := range []string{
		"docs/examples/register/main.go", "docs/examples/python/create_endpoint.py", "docs/examples/invoice-paid.json",
		"docs/examples/send/main.go", "docs/examples/python/send_event.py", "docs/examples/receiver/verify.py",
		"docs/examples/receiver/verify.mjs", "docs/examples/receiver/receiver.go",
	} {
		require.True(t, seen[f], "the guide shows %s", f)
	}
	event, err := os.ReadFile("../../docs/examples/invoice-paid.json")
	require.NoError(t, err)
	m, err := notification.Parse(event)
	require.NoError(t, err)
	require.Equal(t, notification.ChannelEvent, m.Channel)
	require.Equal(t, "invoice.paid", m.Event.Type)
}

// headingAnchor is GitHub's anchor of a Markdown heading: lower case,
// punctuation but hyphens dropped, spaces as hyphens.
func headingAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestGuideLinksResolve: every relative link of the guide names a file of
// the repository, and every #anchor a heading of the page it points to.
func TestGuideLinksResolve(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(guidePath)
	require.NoError(t, err)
	for _, m := range mdLink.FindAllStringSubmatch(string(page), -1) {
		target := m[1]
		if strings.HasPrefix(target, "https://") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := guidePath
		if file != "" {
			path = filepath.Join(filepath.Dir(guidePath), file)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			st, serr := os.Stat(path)
			require.True(t, serr == nil && st.IsDir(), "the guide links %s, which is not in the repository", target)
			continue
		}
		if anchor == "" {
			continue
		}
		var anchors []string
		for _, l := range strings.Split(string(body), "\n") {
			if h, ok := strings.CutPrefix(strings.TrimLeft(l, "#"), " "); ok && strings.HasPrefix(l, "#") {
				anchors = append(anchors, headingAnchor(h))
			}
		}
		require.Contains(t, anchors, anchor, "the guide links %s", target)
	}
}
