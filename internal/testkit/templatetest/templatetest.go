// Package templatetest reads the repository's template.yaml for tests that
// check the stack against the code (alarms, rules, parameters): the YAML
// node tree, so that CloudFormation's short-form tags (!Ref, !Sub) stay
// readable in Node.Tag.
package templatetest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// Raw returns template.yaml at the repository's root as it is written; it
// fails t when the file cannot be read.
func Raw(t testing.TB) []byte {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "template.yaml"))
	require.NoError(t, err)
	return raw
}

// Root returns the top-level mapping of template.yaml (Raw); it fails t when
// the file cannot be read or parsed.
func Root(t testing.TB) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(Raw(t), &doc))
	require.NotEmpty(t, doc.Content)
	return doc.Content[0]
}

// Child returns the value of key in mapping node n, or nil when n is not a
// mapping or has no such key.
func Child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Path follows keys from n, one mapping at a time; nil when one is missing.
func Path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = Child(n, k)
	}
	return n
}

// Scalars returns the values of sequence node n; it fails t when n is not a
// sequence.
func Scalars(t testing.TB, n *yaml.Node) []string {
	t.Helper()
	require.NotNil(t, n)
	require.Equal(t, yaml.SequenceNode, n.Kind)
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}
