package feedback_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/feedback"
)

// child returns the value of key in mapping node n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
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

func path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = child(n, k)
	}
	return n
}

func scalars(t *testing.T, n *yaml.Node) []string {
	t.Helper()
	require.NotNil(t, n)
	require.Equal(t, yaml.SequenceNode, n.Kind)
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

// TestTemplateAgreesWithEventTypes: the configuration set's event
// destination publishes, and FeedbackFunction's rule matches, exactly the
// event types package feedback knows; the rule takes emails with herald's
// id tag.
func TestTemplateAgreesWithEventTypes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	resources := path(doc.Content[0], "Resources")

	var matching, detailTypes []string
	for _, k := range feedback.EventTypes {
		matching = append(matching, k.Matching)
		detailTypes = append(detailTypes, k.DetailType)
	}
	require.ElementsMatch(t, matching,
		scalars(t, path(resources, "EmailEventDestination", "Properties", "EventDestination", "MatchingEventTypes")))

	pattern := path(resources, "FeedbackFunction", "Properties", "Events", "EmailEvents", "Properties", "Pattern")
	require.Equal(t, []string{feedback.SourceSES}, scalars(t, child(pattern, "source")))
	require.ElementsMatch(t, detailTypes, scalars(t, child(pattern, "detail-type")))
	require.NotNil(t, path(pattern, "detail", "mail", "tags", email.IDTag), "the rule matches herald's id tag")
}

// TestTemplateSendsThroughHeraldsConfigurationSet: without
// ConfigurationSetName the deliver function's default configuration set
// (HERALD_EMAIL_CONFIGURATION_SET) is the one the stack creates, with
// suppression of bounces and complaints, and its role may send through it.
func TestTemplateSendsThroughHeraldsConfigurationSet(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	resources := path(doc.Content[0], "Resources")

	env := path(resources, "DeliverFunction", "Properties", "Environment", "Variables", "HERALD_EMAIL_CONFIGURATION_SET")
	require.NotNil(t, env)
	require.Equal(t, "!If", env.Tag)
	require.Equal(t, []string{"CreateConfigurationSet", "EmailConfigurationSet", "ConfigurationSetName"}, scalars(t, env))
	require.Equal(t, []string{"BOUNCE", "COMPLAINT"},
		scalars(t, path(resources, "EmailConfigurationSet", "Properties", "SuppressionOptions", "SuppressedReasons")))
	require.Contains(t, string(raw), ":configuration-set/${EmailConfigurationSet}", "ses:SendEmail on the stack's set")
}
