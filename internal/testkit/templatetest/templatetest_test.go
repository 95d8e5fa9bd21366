package templatetest_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/testkit/templatetest"
)

// TestRawIsTheRepositoryTemplate: Raw reads template.yaml at the root of
// the repository, whatever the test's working directory.
func TestRawIsTheRepositoryTemplate(t *testing.T) {
	t.Parallel()
	raw := templatetest.Raw(t)
	require.True(t, bytes.HasPrefix(raw, []byte("AWSTemplateFormatVersion: \"2010-09-09\"\n")), "%.60q", raw)
	require.Contains(t, string(raw), "\n  DeliverFunction:\n")
}

// TestRootPathAndTags: Root is the template's top mapping; Path follows
// keys through it; a short-form tag stays on the node.
func TestRootPathAndTags(t *testing.T) {
	t.Parallel()
	root := templatetest.Root(t)
	require.Equal(t, yaml.MappingNode, root.Kind)
	require.Equal(t, "AWS::Serverless-2016-10-31", templatetest.Child(root, "Transform").Value)
	require.Equal(t, "AWS::Serverless::Function", templatetest.Path(root, "Resources", "DeliverFunction", "Type").Value)
	name := templatetest.Path(root, "Resources", "DeliverFunction", "Properties", "FunctionName")
	require.Equal(t, "!Sub", name.Tag)
	require.Equal(t, "${AWS::StackName}-deliver", name.Value)
	require.Nil(t, templatetest.Path(root, "Resources", "NoSuchResource", "Type"), "a missing key on the way")
	require.Same(t, root, templatetest.Path(root), "no keys: n itself")
}

// TestChild: the value of a key, wherever it sits in the mapping; nil for
// a key that is absent, a node that is not a mapping, a nil node, and a
// key that has no value (a hand-built node).
func TestChild(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("a: 1\nb: [x, y]\nc: 3\n"), &doc))
	m := doc.Content[0]
	require.Equal(t, "1", templatetest.Child(m, "a").Value)
	require.Equal(t, "3", templatetest.Child(m, "c").Value, "the last pair")
	require.Equal(t, yaml.SequenceNode, templatetest.Child(m, "b").Kind)
	require.Nil(t, templatetest.Child(m, "d"))
	require.Nil(t, templatetest.Child(m, "1"), "a value is not a key")
	require.Nil(t, templatetest.Child(templatetest.Child(m, "b"), "x"), "a sequence")
	require.Nil(t, templatetest.Child(nil, "a"))

	dangling := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "a"}, {Kind: yaml.ScalarNode, Value: "1"},
		{Kind: yaml.ScalarNode, Value: "k"},
	}}
	require.Nil(t, templatetest.Child(dangling, "k"))
	require.Equal(t, "1", templatetest.Child(dangling, "a").Value)
}

// TestScalars: the values of a sequence in order; a node that is not a
// sequence, or none, fails the test that asked.
func TestScalars(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("s: [x, y, z]\nm: {k: v}\n"), &doc))
	require.Equal(t, []string{"x", "y", "z"}, templatetest.Scalars(t, templatetest.Child(doc.Content[0], "s")))

	for name, n := range map[string]*yaml.Node{"mapping": templatetest.Child(doc.Content[0], "m"), "nil": nil} {
		r := &recorder{TB: t}
		func() {
			defer func() { _ = recover() }()
			templatetest.Scalars(r, n)
		}()
		require.True(t, r.failed, name)
	}
}

// recorder is a testing.TB whose failures are recorded instead of ending
// the test: FailNow panics, and the caller recovers.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              { r.failed = true; panic(fmt.Sprint("FailNow")) }
func (r *recorder) Helper()               {}
