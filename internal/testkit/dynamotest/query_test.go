package dynamotest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/dynamotest"
)

// indexed is a table "t" (pk, sk) with index "by-g" (g1, g2) projecting
// "inc", holding items pk p<i>, sk "x", g1 "G" (i < 5, else "H"), g2 "k<i>",
// inc and other; and item "lone" without g1 (not in the index).
func indexed(t *testing.T) (*dynamotest.Server, *dynamodb.Client) {
	t.Helper()
	srv, c := setup(t)
	srv.AddIndex("t", "by-g", "g1", "g2", []string{"inc"})
	for i := range 8 {
		g := "G"
		if i >= 5 {
			g = "H"
		}
		require.NoError(t, put(c, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{
			"pk": s(fmt.Sprintf("p%d", i)), "sk": s("x"), "g1": s(g), "g2": s(fmt.Sprintf("k%d", i)),
			"inc": n(fmt.Sprint(i)), "other": s("not projected"),
		}}))
	}
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"pk": s("lone"), "sk": s("x"), "inc": n("9")}}))
	return srv, c
}

func queryG(c *dynamodb.Client, in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	in.TableName = aws.String("t")
	in.IndexName = aws.String("by-g")
	if in.KeyConditionExpression == nil {
		in.KeyConditionExpression = aws.String("#g1 = :g")
		in.ExpressionAttributeNames = map[string]string{"#g1": "g1"}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":g": s("G")}
	}
	return c.Query(context.Background(), in)
}

func g2s(items []map[string]types.AttributeValue) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["g2"].(*types.AttributeValueMemberS).Value)
	}
	return out
}

// TestQueryAnIndex: a partition's items in sort key order, projected, in
// pages of Limit; a page that reaches Limit carries LastEvaluatedKey even
// at the end (Developer Guide, "Paginating table query results": "If
// LastEvaluatedKey is not empty, it does not necessarily mean that there
// is more data").
func TestQueryAnIndex(t *testing.T) {
	t.Parallel()
	_, c := indexed(t)
	out, err := queryG(c, &dynamodb.QueryInput{})
	require.NoError(t, err)
	require.Equal(t, []string{"k0", "k1", "k2", "k3", "k4"}, g2s(out.Items))
	require.Nil(t, out.LastEvaluatedKey)
	require.Equal(t, map[string]types.AttributeValue{"pk": s("p0"), "sk": s("x"), "g1": s("G"), "g2": s("k0"), "inc": n("0")}, out.Items[0],
		"INCLUDE projects the keys and the included attributes (Developer Guide, \"Projections\")")

	var got []string
	var start map[string]types.AttributeValue
	pages := 0
	for {
		out, err := queryG(c, &dynamodb.QueryInput{Limit: aws.Int32(2), ExclusiveStartKey: start})
		require.NoError(t, err)
		pages++
		got = append(got, g2s(out.Items)...)
		if out.LastEvaluatedKey == nil {
			break
		}
		require.Len(t, out.LastEvaluatedKey, 4, "an index's LastEvaluatedKey holds the table's and the index's keys")
		start = out.LastEvaluatedKey
	}
	require.Equal(t, []string{"k0", "k1", "k2", "k3", "k4"}, got)
	require.Equal(t, 3, pages)

	out, err = queryG(c, &dynamodb.QueryInput{Limit: aws.Int32(5)})
	require.NoError(t, err)
	require.NotNil(t, out.LastEvaluatedKey, "Limit reached: a key, although nothing is left")
	out, err = queryG(c, &dynamodb.QueryInput{Limit: aws.Int32(5), ExclusiveStartKey: out.LastEvaluatedKey})
	require.NoError(t, err)
	require.Empty(t, out.Items)
	require.Nil(t, out.LastEvaluatedKey)

	out, err = queryG(c, &dynamodb.QueryInput{ScanIndexForward: aws.Bool(false), Limit: aws.Int32(2)})
	require.NoError(t, err)
	require.Equal(t, []string{"k4", "k3"}, g2s(out.Items))
	out, err = queryG(c, &dynamodb.QueryInput{ScanIndexForward: aws.Bool(false), ExclusiveStartKey: out.LastEvaluatedKey})
	require.NoError(t, err)
	require.Equal(t, []string{"k2", "k1", "k0"}, g2s(out.Items))
}

func TestQueryKeyConditionsAndFilters(t *testing.T) {
	t.Parallel()
	_, c := indexed(t)
	for _, q := range []struct {
		cond string
		vals map[string]types.AttributeValue
		want []string
	}{
		{"g1 = :g AND begins_with(g2, :p)", map[string]types.AttributeValue{":g": s("H"), ":p": s("k6")}, []string{"k6"}},
		{"g2 > :a AND g1 = :g", map[string]types.AttributeValue{":g": s("G"), ":a": s("k2")}, []string{"k3", "k4"}},
		{"g1 = :g AND g2 BETWEEN :a AND :b", map[string]types.AttributeValue{":g": s("G"), ":a": s("k1"), ":b": s("k3")}, []string{"k1", "k2", "k3"}},
		{"g1 = :g", map[string]types.AttributeValue{":g": s("nobody")}, nil},
	} {
		out, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t"), IndexName: aws.String("by-g"), KeyConditionExpression: aws.String(q.cond), ExpressionAttributeValues: q.vals})
		require.NoError(t, err, q.cond)
		require.Equal(t, q.want, g2s(out.Items), q.cond)
	}

	out, err := queryG(c, &dynamodb.QueryInput{Limit: aws.Int32(3), FilterExpression: aws.String("inc <> :one")})
	require.Error(t, err, ":one is not defined")
	in := &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#g1 = :g"),
		FilterExpression:          aws.String("inc <> :one"),
		ExpressionAttributeNames:  map[string]string{"#g1": "g1"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("G"), ":one": n("1")},
		Limit:                     aws.Int32(3),
	}
	out, err = queryG(c, in)
	require.NoError(t, err)
	require.Equal(t, []string{"k0", "k2"}, g2s(out.Items), "Limit counts items before the filter")
	require.EqualValues(t, 2, out.Count)
	require.EqualValues(t, 3, out.ScannedCount)

	// The table's own key: a partition's items.
	out, err = c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t"), KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("lone")}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	require.Len(t, out.Items, 1)
	require.Equal(t, n("9"), out.Items[0]["inc"], "a table query returns the whole item")
}

// TestQueryRejectsWhatDynamoDBRejects (API Reference, Query; Developer
// Guide, "Key condition expressions for query", "Filter expressions for
// query", "Read consistency": GSIs support eventually consistent reads
// only).
func TestQueryRejectsWhatDynamoDBRejects(t *testing.T) {
	t.Parallel()
	_, c := indexed(t)
	g := map[string]types.AttributeValue{":g": s("G")}
	for name, in := range map[string]*dynamodb.QueryInput{
		"no key condition":          {},
		"unknown index":             {IndexName: aws.String("nope"), KeyConditionExpression: aws.String("g1 = :g"), ExpressionAttributeValues: g},
		"consistent read of a GSI":  {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g1 = :g"), ExpressionAttributeValues: g, ConsistentRead: aws.Bool(true)},
		"a non-key attribute":       {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("inc = :g"), ExpressionAttributeValues: g},
		"the sort key alone":        {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g2 = :g"), ExpressionAttributeValues: g},
		"OR":                        {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g1 = :g OR g2 = :g"), ExpressionAttributeValues: g},
		"<> on the sort key":        {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g1 = :g AND g2 <> :g"), ExpressionAttributeValues: g},
		"filter on a key":           {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g1 = :g"), FilterExpression: aws.String("g2 = :g"), ExpressionAttributeValues: g},
		"a number for a string key": {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g1 = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": n("1")}},
		"limit 0":                   {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g1 = :g"), ExpressionAttributeValues: g, Limit: aws.Int32(0)},
		"an unused value":           {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g1 = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("G"), ":x": s("x")}},
		"a start key of the table only": {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g1 = :g"), ExpressionAttributeValues: g,
			ExclusiveStartKey: map[string]types.AttributeValue{"pk": s("p1"), "sk": s("x")}},
		"a start key of another partition": {IndexName: aws.String("by-g"), KeyConditionExpression: aws.String("g1 = :g"), ExpressionAttributeValues: g,
			ExclusiveStartKey: map[string]types.AttributeValue{"pk": s("p6"), "sk": s("x"), "g1": s("H"), "g2": s("k6")}},
	} {
		in.TableName = aws.String("t")
		_, err := c.Query(context.Background(), in)
		require.Equal(t, "ValidationException", code(t, err), name)
	}
}

func TestScanFilter(t *testing.T) {
	t.Parallel()
	_, c := indexed(t)
	out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("t"), FilterExpression: aws.String("#g = :h"),
		ExpressionAttributeNames: map[string]string{"#g": "g1"}, ExpressionAttributeValues: map[string]types.AttributeValue{":h": s("H")}, Limit: aws.Int32(7)})
	require.NoError(t, err)
	// Key order: "lone", "p0" … "p7"; the first 7 hold one of g1 H.
	require.Equal(t, []string{"k5"}, g2s(out.Items), "the filter applies to the Limit items evaluated")
	require.EqualValues(t, 7, out.ScannedCount)
	require.NotNil(t, out.LastEvaluatedKey)
	_, err = c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("t"), ExpressionAttributeNames: map[string]string{"#g": "g1"}})
	require.Equal(t, "ValidationException", code(t, err), "names without an expression")
}

// TestBatchGetItem (API Reference, BatchGetItem: up to 100 keys, no
// duplicates; UnprocessedKeys to ask again).
func TestBatchGetItem(t *testing.T) {
	t.Parallel()
	srv, c := indexed(t)
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s(pk), "sk": s("x")}
	}
	out, err := c.BatchGetItem(context.Background(), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		"t": {Keys: []map[string]types.AttributeValue{key("p1"), key("p2"), key("absent")}, ConsistentRead: aws.Bool(true)},
	}})
	require.NoError(t, err)
	require.Len(t, out.Responses["t"], 2, "absent keys are left out")
	require.Empty(t, out.UnprocessedKeys)

	srv.LeaveUnprocessed(2)
	out, err = c.BatchGetItem(context.Background(), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		"t": {Keys: []map[string]types.AttributeValue{key("p1"), key("p2"), key("p3")}},
	}})
	require.NoError(t, err)
	require.Len(t, out.Responses["t"], 1)
	require.Len(t, out.UnprocessedKeys["t"].Keys, 2)
	out, err = c.BatchGetItem(context.Background(), &dynamodb.BatchGetItemInput{RequestItems: out.UnprocessedKeys})
	require.NoError(t, err)
	require.Len(t, out.Responses["t"], 2, "asked again, they are read")

	var many []map[string]types.AttributeValue
	for i := range dynamotest.MaxBatchGetKeys + 1 {
		many = append(many, key(fmt.Sprint("m", i)))
	}
	for name, items := range map[string]map[string]types.KeysAndAttributes{
		"over 100 keys":   {"t": {Keys: many}},
		"a duplicate key": {"t": {Keys: []map[string]types.AttributeValue{key("p1"), key("p1")}}},
		"a partial key":   {"t": {Keys: []map[string]types.AttributeValue{{"pk": s("p1")}}}},
		"no keys":         {"t": {Keys: []map[string]types.AttributeValue{}}},
	} {
		_, err := c.BatchGetItem(context.Background(), &dynamodb.BatchGetItemInput{RequestItems: items})
		require.Equal(t, "ValidationException", code(t, err), name)
	}
	_, err = c.BatchGetItem(context.Background(), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"absent": {Keys: []map[string]types.AttributeValue{key("p1")}}}})
	require.Equal(t, "ResourceNotFoundException", code(t, err))
}
