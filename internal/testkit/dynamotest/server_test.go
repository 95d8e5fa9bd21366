package dynamotest_test

import (
	"context"
	"encoding/json"
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

	"github.com/heraldhq/herald/internal/testkit/dynamotest"
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
		"reserved word state":            {Item: key, ConditionExpression: aws.String("state = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("x")}},
		"reserved word TTL":              {Item: key, ConditionExpression: aws.String("attribute_exists(ttl)")},
		"unused name":                    {Item: key, ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeNames: map[string]string{"#x": "x"}},
		"unused value":                   {Item: key, ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeValues: map[string]types.AttributeValue{":x": s("x")}},
		"undefined name":                 {Item: key, ConditionExpression: aws.String("attribute_exists(#x)")},
		"undefined value":                {Item: key, ConditionExpression: aws.String("pk = :x")},
		"names, no expression":           {Item: key, ExpressionAttributeNames: map[string]string{"#x": "x"}},
		"syntax":                         {Item: key, ConditionExpression: aws.String("pk = ")},
		"unknown function":               {Item: key, ConditionExpression: aws.String("exists(pk)")},
		"missing sort key":               {Item: map[string]types.AttributeValue{"pk": s("a")}},
		"number key":                     {Item: map[string]types.AttributeValue{"pk": n("1"), "sk": s("b")}},
		"empty key":                      {Item: map[string]types.AttributeValue{"pk": s(""), "sk": s("b")}},
		"not a number":                   {Item: with(map[string]types.AttributeValue{"n": n("five")})},
		"item over 400 KB":               {Item: with(map[string]types.AttributeValue{"body": s(strings.Repeat("x", dynamotest.MaxItemBytes))})},
		"partition key over 2,048 bytes": {Item: map[string]types.AttributeValue{"pk": s(strings.Repeat("é", dynamotest.MaxPartitionKeyBytes/2) + "x"), "sk": s("b")}},
		"sort key over 1,024 bytes":      {Item: map[string]types.AttributeValue{"pk": s("a"), "sk": s(strings.Repeat("x", dynamotest.MaxSortKeyBytes+1))}},
	} {
		require.Equal(t, "ValidationException", code(t, put(c, in)), name)
	}
	// An item of exactly 400 KB is accepted: names and values count.
	fill := dynamotest.MaxItemBytes - len("pk") - 1 - len("sk") - 1 - len("body")
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: with(map[string]types.AttributeValue{"body": s(strings.Repeat("x", fill))})}))
	require.Equal(t, "ValidationException", code(t, put(c, &dynamodb.PutItemInput{Item: with(map[string]types.AttributeValue{"body": s(strings.Repeat("x", fill+1))})})))

	// Keys of exactly the limits are accepted, by PutItem and GetItem; a
	// byte more is refused by GetItem too.
	long := map[string]types.AttributeValue{"pk": s(strings.Repeat("p", dynamotest.MaxPartitionKeyBytes)), "sk": s(strings.Repeat("s", dynamotest.MaxSortKeyBytes))}
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: long}))
	_, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: long})
	require.NoError(t, err)
	_, err = c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s(strings.Repeat("p", dynamotest.MaxPartitionKeyBytes+1)), "sk": s("b")}})
	require.Equal(t, "ValidationException", code(t, err), "a partition key over 2,048 bytes")

	_, err = c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s("a")}})
	require.Equal(t, "ValidationException", code(t, err), "a key without its sort key")
	_, err = c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("absent"), Key: key})
	require.Equal(t, "ResourceNotFoundException", code(t, err))
	_, err = c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")})
	require.Equal(t, "ValidationException", code(t, err), "a Query without a key condition")
	_, err = c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String("t"), Key: key})
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

// TestItemSizeCountsEachTypeAsDynamoDBDoes: for each attribute type, an
// item sized exactly MaxItemBytes as the Developer Guide ("Item sizes and
// formats") counts it is accepted and one byte more refused: names and
// strings their UTF-8 bytes, binary its bytes, a number about one byte per
// two significant digits plus one, BOOL and NULL one byte, a list or map 3
// bytes plus one per element plus the elements (a map's with their
// names), a set its elements, each as its type counts (a binary set its
// bytes, not their base64 on the wire).
func TestItemSizeCountsEachTypeAsDynamoDBDoes(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	for name, tc := range map[string]struct {
		v    types.AttributeValue
		size int
	}{
		"string":     {s("héllo"), 6},
		"number":     {n("-00012345"), 5/2 + 1},
		"binary":     {&types.AttributeValueMemberB{Value: []byte{1, 2, 3}}, 3},
		"bool":       {&types.AttributeValueMemberBOOL{Value: true}, 1},
		"null":       {&types.AttributeValueMemberNULL{Value: true}, 1},
		"map":        {&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"kk": s("vvv"), "b": &types.AttributeValueMemberBOOL{}}}, 3 + (2 + 3) + (1 + 1) + 2},
		"list":       {&types.AttributeValueMemberL{Value: []types.AttributeValue{s("vvv"), n("12")}}, 3 + 2 + 3 + (2/2 + 1)},
		"string set": {&types.AttributeValueMemberSS{Value: []string{"ab", "cde"}}, 5},
		"number set": {&types.AttributeValueMemberNS{Value: []string{"1", "22", "12345"}}, (1/2 + 1) + (2/2 + 1) + (5/2 + 1)},
		"binary set": {&types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}}, 3},
	} {
		// pk "a" and sk "b": 6 bytes; the attribute "x" 1 byte plus its value.
		fill := dynamotest.MaxItemBytes - 6 - len("body") - 1 - tc.size
		item := func(fill int) map[string]types.AttributeValue {
			return map[string]types.AttributeValue{"pk": s("a"), "sk": s("b"), "x": tc.v, "body": s(strings.Repeat("y", fill))}
		}
		require.NoError(t, put(c, &dynamodb.PutItemInput{Item: item(fill)}), "%s: exactly the limit", name)
		require.Equal(t, "ValidationException", code(t, put(c, &dynamodb.PutItemInput{Item: item(fill + 1)})), "%s: a byte over", name)
	}
}

// TestReturnValues: ALL_OLD returns the item a put replaced or a delete
// removed (nothing when there was none); a failed condition returns the
// item only with ReturnValuesOnConditionCheckFailure ALL_OLD and only when
// there is one; other settings are refused as DynamoDB refuses them.
func TestReturnValues(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	ctx := context.Background()
	key := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b")}
	v1 := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b"), "v": s("1")}
	v2 := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b"), "v": s("2")}
	out, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: v1, ReturnValues: types.ReturnValueAllOld})
	require.NoError(t, err)
	require.Empty(t, out.Attributes, "nothing replaced")
	out, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: v2, ReturnValues: types.ReturnValueAllOld})
	require.NoError(t, err)
	require.Equal(t, "1", out.Attributes["v"].(*types.AttributeValueMemberS).Value)
	out, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: v1, ReturnValues: types.ReturnValueNone})
	require.NoError(t, err)
	require.Empty(t, out.Attributes, "NONE")

	var ccf *types.ConditionalCheckFailedException
	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: v1, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	require.ErrorAs(t, err, &ccf)
	require.Nil(t, ccf.Item, "no ALL_OLD, no item")
	_, err = c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s("x"), "sk": s("y")},
		ConditionExpression: aws.String("attribute_exists(pk)"), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	require.ErrorAs(t, err, &ccf)
	require.Nil(t, ccf.Item, "ALL_OLD of no item")

	del, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("t"), Key: key, ReturnValues: types.ReturnValueAllOld})
	require.NoError(t, err)
	require.Equal(t, "1", del.Attributes["v"].(*types.AttributeValueMemberS).Value)
	del, err = c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("t"), Key: key, ReturnValues: types.ReturnValueAllOld})
	require.NoError(t, err)
	require.Empty(t, del.Attributes, "already gone")
	got, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key})
	require.NoError(t, err)
	require.Nil(t, got.Item)

	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: v1, ReturnValues: types.ReturnValueAllNew})
	require.Equal(t, "ValidationException", code(t, err), "PutItem has no ALL_NEW")
	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: v1, ConditionExpression: aws.String("attribute_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: "SOME"})
	require.Equal(t, "ValidationException", code(t, err))
	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: v1, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureNone})
	require.NoError(t, err, "NONE is a valid setting")
}

// TestMoreRefusals: a Key naming other attributes than the key's, values
// without an expression, an attribute value of no type, of two types or
// of an unknown one, a request that is not DynamoDB JSON 1.0, and a Scan
// with a condition.
func TestMoreRefusals(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	ctx := context.Background()
	_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s("a"), "sk": s("b"), "v": s("c")}})
	require.Equal(t, "ValidationException", code(t, err), "an extra key attribute")
	_, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s("a"), "sx": s("b")}})
	require.Equal(t, "ValidationException", code(t, err), "another attribute than the sort key")
	_, err = c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s("a")}})
	require.Equal(t, "ValidationException", code(t, err), "delete: a key without its sort key")
	require.Equal(t, "ValidationException", code(t, put(c, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"pk": s("a"), "sk": s("b")},
		ExpressionAttributeValues: map[string]types.AttributeValue{":x": s("x")}})), "values, no expression")

	raw := func(target, ctype, body string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL(), strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-Amz-Target", target)
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var e struct {
			Type string `json:"__type"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		return resp.StatusCode, e.Type[strings.Index(e.Type, "#")+1:]
	}
	const json10 = "application/x-amz-json-1.0"
	for name, tc := range map[string]struct{ target, ctype, body, want string }{
		"no type":       {"DynamoDB_20120810.PutItem", json10, `{"TableName":"t","Item":{"pk":{"S":"a"},"sk":{"S":"b"},"v":{}}}`, "ValidationException"},
		"two types":     {"DynamoDB_20120810.PutItem", json10, `{"TableName":"t","Item":{"pk":{"S":"a"},"sk":{"S":"b"},"v":{"S":"x","N":"1"}}}`, "ValidationException"},
		"unknown type":  {"DynamoDB_20120810.PutItem", json10, `{"TableName":"t","Item":{"pk":{"S":"a"},"sk":{"S":"b"},"v":{"X":"1"}}}`, "ValidationException"},
		"bad key value": {"DynamoDB_20120810.GetItem", json10, `{"TableName":"t","Key":{"pk":{"S":"a"},"sk":{"Q":"b"}}}`, "ValidationException"},
		"bad expr value": {"DynamoDB_20120810.PutItem", json10, `{"TableName":"t","Item":{"pk":{"S":"a"},"sk":{"S":"b"}},"ConditionExpression":"pk = :v","ExpressionAttributeValues":{":v":{"N":"x"}}}`,
			"ValidationException"},
		"scan condition": {"DynamoDB_20120810.Scan", json10, `{"TableName":"t","ConditionExpression":"attribute_exists(pk)"}`, "ValidationException"},
		"JSON 1.1":       {"DynamoDB_20120810.GetItem", "application/x-amz-json-1.1", `{"TableName":"t"}`, "UnknownOperationException"},
		"no prefix":      {"GetItem", json10, `{"TableName":"t"}`, "UnknownOperationException"},
		"not JSON":       {"DynamoDB_20120810.GetItem", json10, `{"TableName":`, "SerializationException"},
	} {
		status, typ := raw(tc.target, tc.ctype, tc.body)
		require.Equal(t, http.StatusBadRequest, status, name)
		require.Equal(t, tc.want, typ, name)
	}
	require.Empty(t, srv.Items("t"))
}

// TestFailAndItems: Fail(n) fails exactly the next n calls of the action
// (not others') with 500 InternalServerError; Items lists what the table
// holds in DynamoDB JSON.
func TestFailAndItems(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	item := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b"), "n": n("7")}
	srv.Fail("PutItem", 2)
	for range 2 {
		err := put(c, &dynamodb.PutItemInput{Item: item})
		require.Equal(t, "InternalServerError", code(t, err))
		require.ErrorContains(t, err, "StatusCode: 500")
	}
	_, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s("a"), "sk": s("b")}})
	require.NoError(t, err, "another action is not failed")
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: item}))
	require.Equal(t, []map[string]any{{"pk": map[string]any{"S": "a"}, "sk": map[string]any{"S": "b"}, "n": map[string]any{"N": "7"}}}, srv.Items("t"))
	require.Equal(t, 3, srv.Calls("PutItem"))
	require.Equal(t, 1, srv.Calls("GetItem"))
}

// TestScanOfAHashKeyTable: a table without a sort key pages with a
// LastEvaluatedKey of the hash key alone; Limit caps at ScanPageItems per
// page; Limit 1 is allowed; a start key of the wrong shape is refused.
func TestScanOfAHashKeyTable(t *testing.T) {
	t.Parallel()
	srv := dynamotest.New(t)
	srv.AddTable("h", "id", "")
	c := srv.Client()
	ctx := context.Background()
	for i := range dynamotest.ScanPageItems + 5 {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("h"), Item: map[string]types.AttributeValue{"id": s(fmt.Sprintf("%03d", i))}})
		require.NoError(t, err)
	}
	out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("h"), Limit: aws.Int32(1000)})
	require.NoError(t, err)
	require.Len(t, out.Items, dynamotest.ScanPageItems)
	require.Equal(t, int32(dynamotest.ScanPageItems), out.Count)
	require.Equal(t, map[string]types.AttributeValue{"id": s(fmt.Sprintf("%03d", dynamotest.ScanPageItems-1))}, out.LastEvaluatedKey)
	out, err = c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("h"), ExclusiveStartKey: out.LastEvaluatedKey})
	require.NoError(t, err)
	require.Len(t, out.Items, 5)
	require.Nil(t, out.LastEvaluatedKey)
	out, err = c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("h"), Limit: aws.Int32(1)})
	require.NoError(t, err)
	require.Equal(t, map[string]types.AttributeValue{"id": s("000")}, out.Items[0])
	require.Equal(t, map[string]types.AttributeValue{"id": s("000")}, out.LastEvaluatedKey)
	_, err = c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("h"), ExclusiveStartKey: map[string]types.AttributeValue{"id": s("1"), "x": s("2")}})
	require.ErrorContains(t, err, "The provided starting key is invalid")
}

// TestBeginsWithAndEquality: begins_with holds for a string attribute
// starting with a string value, and for nothing else (a number, a missing
// attribute, another prefix); its malformed calls are refused. Values of
// types without an order are equal when of the same type and content.
func TestBeginsWithAndEquality(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	item := map[string]types.AttributeValue{"pk": s("abc"), "sk": s("b"), "n": n("12"), "b": &types.AttributeValueMemberBOOL{Value: true},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("x")}}}
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: item}))
	var ccf *types.ConditionalCheckFailedException
	for _, tc := range []struct {
		expr string
		v    types.AttributeValue
		ok   bool
	}{
		{"begins_with(pk, :v)", s("ab"), true},
		{"begins_with(pk, :v)", s("abc"), true},
		{"begins_with(pk, :v)", s("b"), false},
		{"begins_with(pk, :v)", n("1"), false},
		{"begins_with(n, :v)", s("1"), false},
		{"begins_with(nothere, :v)", s(""), false},
		{"b = :v", &types.AttributeValueMemberBOOL{Value: true}, true},
		{"b = :v", &types.AttributeValueMemberBOOL{Value: false}, false},
		{"b = :v", s("true"), false},
		{"l = :v", &types.AttributeValueMemberL{Value: []types.AttributeValue{s("x")}}, true},
		{"l = :v", &types.AttributeValueMemberL{Value: []types.AttributeValue{s("y")}}, false},
		{"b < :v", &types.AttributeValueMemberBOOL{Value: true}, false},
	} {
		err := put(c, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String(tc.expr),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": tc.v}})
		if tc.ok {
			require.NoError(t, err, "%s %v", tc.expr, tc.v)
		} else {
			require.ErrorAs(t, err, &ccf, "%s %v", tc.expr, tc.v)
		}
	}
	for _, expr := range []string{"begins_with(pk :v)", "begins_with(pk, )", "begins_with(:v, pk)", "begins_with(pk, :v"} {
		err := put(c, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String(expr),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("a")}})
		require.Equal(t, "ValidationException", code(t, err), expr)
	}
}

// TestOmitConditionItem: under OmitConditionItem a failed condition of a
// PutItem or a DeleteItem carries no item even with ALL_OLD; turned off,
// it carries it again.
func TestOmitConditionItem(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	ctx := context.Background()
	item := map[string]types.AttributeValue{"pk": s("a"), "sk": s("b"), "v": s("1")}
	require.NoError(t, put(c, &dynamodb.PutItemInput{Item: item}))
	putIn := &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
	delIn := &dynamodb.DeleteItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s("a"), "sk": s("b")},
		ConditionExpression: aws.String("attribute_not_exists(pk)"), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
	var ccf *types.ConditionalCheckFailedException
	for _, omit := range []bool{true, false, true} {
		srv.OmitConditionItem(omit)
		require.ErrorAs(t, put(c, putIn), &ccf)
		require.Equal(t, omit, ccf.Item == nil, "PutItem, omit %v", omit)
		_, err := c.DeleteItem(ctx, delIn)
		require.ErrorAs(t, err, &ccf)
		require.Equal(t, omit, ccf.Item == nil, "DeleteItem, omit %v", omit)
	}
	got, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": s("a"), "sk": s("b")}})
	require.NoError(t, err)
	require.Equal(t, "1", got.Item["v"].(*types.AttributeValueMemberS).Value, "the failed calls changed nothing")
}
