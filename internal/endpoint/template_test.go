package endpoint_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/testkit/templatetest"
)

// TestTemplateHasTheTenantIndex: StoreTable's index is the one the store
// queries, keyed and projected as the fan-out reads it.
func TestTemplateHasTheTenantIndex(t *testing.T) {
	t.Parallel()
	table := templatetest.Path(templatetest.Root(t), "Resources", "StoreTable", "Properties")
	var defined []string
	for _, d := range templatetest.Child(table, "AttributeDefinitions").Content {
		defined = append(defined, templatetest.Child(d, "AttributeName").Value+":"+templatetest.Child(d, "AttributeType").Value)
	}
	require.Subset(t, defined, []string{endpoint.AttrGSI1PK + ":S", endpoint.AttrGSI1SK + ":S"})
	indexes := templatetest.Child(table, "GlobalSecondaryIndexes")
	require.NotNil(t, indexes)
	var index *yaml.Node
	for _, i := range indexes.Content {
		if templatetest.Child(i, "IndexName").Value == endpoint.TenantIndex {
			index = i
		}
	}
	require.NotNil(t, index, "StoreTable has %s", endpoint.TenantIndex)
	keys := map[string]string{}
	for _, k := range templatetest.Child(index, "KeySchema").Content {
		keys[templatetest.Child(k, "AttributeName").Value] = templatetest.Child(k, "KeyType").Value
	}
	require.Equal(t, map[string]string{endpoint.AttrGSI1PK: "HASH", endpoint.AttrGSI1SK: "RANGE"}, keys)
	require.Equal(t, "INCLUDE", templatetest.Path(index, "Projection", "ProjectionType").Value)
	require.ElementsMatch(t, []string{endpoint.AttrEventTypes, endpoint.AttrDisabledAt, endpoint.AttrKind},
		templatetest.Scalars(t, templatetest.Path(index, "Projection", "NonKeyAttributes")),
		"the index projects what Subscribers reads, and no sealed attribute")
}

// TestTemplateEndpointKey: the key rotates, and the deliver function may
// decrypt with it only data keys bound to an endpoint id.
func TestTemplateEndpointKey(t *testing.T) {
	t.Parallel()
	res := templatetest.Child(templatetest.Root(t), "Resources")
	key := templatetest.Child(res, "EndpointKey")
	require.Equal(t, "AWS::KMS::Key", templatetest.Child(key, "Type").Value)
	require.Equal(t, "true", templatetest.Path(key, "Properties", "EnableKeyRotation").Value)
	alias := templatetest.Child(res, "EndpointKeyAlias")
	require.Equal(t, "alias/${AWS::StackName}-endpoints", templatetest.Path(alias, "Properties", "AliasName").Value)

	var unseal *yaml.Node
	for _, p := range templatetest.Path(res, "DeliverFunctionRole", "Properties", "Policies").Content {
		for _, st := range templatetest.Path(p, "PolicyDocument", "Statement").Content {
			if s := templatetest.Child(st, "Sid"); s != nil && s.Value == "UnsealEndpoints" {
				unseal = st
			}
		}
	}
	require.NotNil(t, unseal)
	require.Equal(t, "kms:Decrypt", templatetest.Child(unseal, "Action").Value)
	require.Equal(t, "EndpointKey.Arn", templatetest.Child(unseal, "Resource").Value)
	cond := templatetest.Child(unseal, "Condition")
	require.Equal(t, endpoint.IDPrefix+"*", templatetest.Path(cond, "StringLike", "kms:EncryptionContext:"+endpoint.ContextKey).Value)
	require.Equal(t, []string{endpoint.ContextKey}, templatetest.Scalars(t, templatetest.Path(cond, "ForAllValues:StringEquals", "kms:EncryptionContextKeys")))

	var query *yaml.Node
	for _, p := range templatetest.Path(res, "DeliverFunctionRole", "Properties", "Policies").Content {
		for _, st := range templatetest.Path(p, "PolicyDocument", "Statement").Content {
			if s := templatetest.Child(st, "Sid"); s != nil && s.Value == "ReadEndpointIndex" {
				query = st
			}
		}
	}
	require.NotNil(t, query)
	require.True(t, strings.HasSuffix(templatetest.Child(query, "Resource").Value, "/index/"+endpoint.TenantIndex))
}
