package dynamotest_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/dynamotest"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

func setup(t *testing.T) (*dynamotest.Server, *dynamodb.Client) {
	t.Helper()
	srv := dynamotest.New(t)
	srv.AddTable("t", "pk", "sk")
	return srv, srv.Client()
}

func code(t *testing.T, err error) string {
	t.Helper()
	var ae smithy.APIError
	require.ErrorAs(t, err, &ae)
	return ae.ErrorCode()
}

func put(c *dynamodb.Client, in *dynamodb.PutItemInput) error {
	in.TableName = aws.String("t")
	_, err := c.PutItem(context.Background(), in)
	return err
}

func TestConditionalPut(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	item := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b"), "n": n("5"), "state": s("x")}
	cond := &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
	require.NoError(t, put(c, cond))
	err := put(c, cond)
	var ccf *types.ConditionalCheckFailedException
	require.ErrorAs(t, err, &ccf)
	require.Equal(t, "x", ccf.Item["state"].(*types.AttributeValueMemberS).Value, "ALL_OLD returns the item")

	// Numbers compare as numbers, not text: 5 < 10.
	for expr, ok := range map[string]bool{
		"#n < :ten":                         true,
		"#n > :ten":                         false,
		"#n BETWEEN :five AND :ten":         true,
		"NOT (#n = :five)":                  false,
		"#n IN (:ten, :five)":               true,
		"#n = :five AND #n <> :five":        false,
		"#n = :ten OR attribute_exists(#n)": true,
	} {
		err := put(c, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String(expr),
			ExpressionAttributeNames:  map[string]string{"#n": "n"},
			ExpressionAttributeValues: pick(expr, map[string]types.AttributeValue{":ten": n("10"), ":five": n("5")})})
		if ok {
			require.NoError(t, err, expr)
		} else {
			require.ErrorAs(t, err, &ccf, expr)
		}
	}
}

// pick keeps the values expr uses: DynamoDB refuses unused ones.
func pick(expr string, vs map[string]types.AttributeValue) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	for k, v := range vs {
		if strings.Contains(expr, k) {
			out[k] = v
		}
	}
	return out
}

func TestRejectsWhatDynamoDBRejects(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	key := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b")}
	with := func(extra map[string]types.AttributeValue) map[string]types.AttributeValue {
		m := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b")}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for name, in := range map[string]*dynamodb.PutItemInput{
		"reserved word state":  {Item: key, ConditionExpression: aws.String("state = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("x")}},
		"reserved word TTL":    {Item: key, ConditionExpression: aws.String("attribute_exists(ttl)")},
		"unused name":          {Item: key, ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeNames: map[string]string{"#x": "x"}},
		"unused value":         {Item: key, ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeValues: map[string]types.AttributeValue{":x": s("x")}},
		"undefined name":       {Item: key, ConditionExpression: aws.String("attribute_exists(#x)")},
		"undefined value":      {Item: key, ConditionExpression: aws.String("pk = :x")},
		"names, no expression": {Item: key, ExpressionAttributeNames: map[string]string{"#x": "x"}},
		"syntax":               {Item: key, ConditionExpression: aws.String("pk = ")},
		"unknown function":     {Item: key, ConditionExpression: aws.String("exists(pk)")},
		"missing sort key":     {Item: map[string]types.AttributeValue{"pk": s("a")}},
		"number key":           {Item: map[string]types.AttributeValue{"pk": n("1"), "sk": s("b")}},
		"empty key":            {Item: map[string]types.AttributeValue{"pk": s(""), "sk": s("b")}},
		"not a number":         {Item: with(map[string]types.AttributeValue{"n": n("five")})},
		"item over 400 KB":     {Item: with(map[string]types.AttributeValue{"body": s(strings.Repeat("x", dynamotest.MaxItemBytes))})},
	} {
		require.Equal(t, "ValidationException", code(t, put(c, in)), name)
	}
	// An item of exactly 400 KB is accepted: names and values count.
	fill := dynamotest.MaxItemBytes - len("pk") - 1 - len("sk") - 1 - len("body")
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: with(map[string]types.AttributeValue{"body": s(strings.Repeat("x", fill))})}))
	require.Equal(t, "ValidationException", code(t, put(c, &dynamodb.PutItemInput{Item: with(map[string]types.AttributeValue{"body": s(strings.Repeat("x", fill+1))})})))

	_, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s("a")}})
	require.Equal(t, "ValidationException", code(t, err), "a key without its sort key")
	_, err = c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("absent"), Key: key})
	require.Equal(t, "ResourceNotFoundException", code(t, err))
	_, err = c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")})
	require.Equal(t, "UnknownOperationException", code(t, err))
}

func TestFaults(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	item := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b")}
	srv.Throttle("PutItem", 1)
	require.Equal(t, "ProvisionedThroughputExceededException", code(t, put(c, &dynamodb.PutItemInput{Item: item})))
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: item}))
	srv.FailAfter("PutItem", 1, 1)
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: item}))
	require.Equal(t, "InternalServerError", code(t, put(c, &dynamodb.PutItemInput{Item: item})))
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: item}))
	require.Equal(t, 5, srv.Calls("PutItem"))
}

// TestScanPages: Scan answers every item once across pages of Limit items,
// with LastEvaluatedKey naming only the key until the last page, and
// rejects a Limit below 1 and an unknown table as DynamoDB does.
func TestScanPages(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	for i := range 7 {
		require.NoError(t, put(c, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"pk": s(fmt.Sprintf("p%d", i)), "sk": s("x"), "v": n("1")}}))
	}
	seen := map[string]bool{}
	var start map[string]types.AttributeValue
	pages := 0
	for {
		out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("t"), Limit: aws.Int32(3), ExclusiveStartKey: start})
		require.NoError(t, err)
		pages++
		require.LessOrEqual(t, len(out.Items), 3)
		for _, it := range out.Items {
			pk := it["pk"].(*types.AttributeValueMemberS).Value
			require.False(t, seen[pk], "%s twice", pk)
			seen[pk] = true
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		require.Len(t, out.LastEvaluatedKey, 2, "only the key")
		start = out.LastEvaluatedKey
	}
	require.Len(t, seen, 7)
	require.Equal(t, 3, pages)

	_, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("t"), Limit: aws.Int32(0)})
	require.Equal(t, "ValidationException", code(t, err))
	_, err = c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("nope")})
	require.Equal(t, "ResourceNotFoundException", code(t, err))
}

// TestResponsesCarryTheirCRC32: like DynamoDB, every answer (an item or an
// error) carries X-Amz-Crc32 of its body, which the SDK checks.
func TestResponsesCarryTheirCRC32(t *testing.T) {
	t.Parallel()
	srv, _ := setup(t)
	for name, body := range map[string]string{
		"item":  `{"TableName":"t","Key":{"pk":{"S":"a"},"sk":{"S":"b"}}}`,
		"error": `{"TableName":"missing","Key":{"pk":{"S":"a"},"sk":{"S":"b"}}}`,
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL(), strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.GetItem")
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, strconv.FormatUint(uint64(crc32.ChecksumIEEE(raw)), 10), resp.Header.Get("X-Amz-Crc32"), name)
	}
}

// TestConditionEdges: comparisons of equal numbers (only <=, >= and =
// hold), names made of every kind of character DynamoDB allows in one,
// and the syntax errors DynamoDB names: a condition cut after an operator
// (its token <EOF>), after a "<", or a bare name.
func TestConditionEdges(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	item := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b"), "n": n("5")}
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: item}))
	var ccf *types.ConditionalCheckFailedException
	for expr, ok := range map[string]bool{
		"#n < :five": false, "#n <= :five": true, "#n > :five": false, "#n >= :five": true, "#n = :five": true, "#n <> :five": false,
	} {
		err := put(c, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String(expr),
			ExpressionAttributeNames: map[string]string{"#n": "n"}, ExpressionAttributeValues: map[string]types.AttributeValue{":five": n("5.0")}})
		if ok {
			require.NoError(t, err, expr)
		} else {
			require.ErrorAs(t, err, &ccf, expr)
		}
	}
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String("attribute_not_exists(az_AZ09) AND attribute_not_exists(Zz9) AND attribute_not_exists(A0a)")}))
	err := put(c, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String("pk = ")})
	require.ErrorContains(t, err, `Syntax error; token: "<EOF>"`)
	for _, expr := range []string{"pk <", "pk >", "pk =", "pk", "NOT pk"} {
		err = put(c, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String(expr)})
		require.Equal(t, "ValidationException", code(t, err), expr)
	}
}
