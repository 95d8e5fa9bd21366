package app_test

import (
	"context"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
)

// TestStoreClientKeepsABatchsConnections: a batch's 30 simultaneous calls
// to the table open their connections once; the next batches reuse them
// all, where the SDK's default keeps 10 and opens 20 again each time.
func TestStoreClientKeepsABatchsConnections(t *testing.T) {
	t.Parallel()
	dyn := dynamotest.New(t)
	dyn.AddTable("herald", "pk", "sk")
	awsCfg := aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}, BaseEndpoint: aws.String(dyn.URL())}
	const n = 30
	rounds := func(c *dynamodb.Client) []int32 {
		var out []int32
		for range 3 {
			var fresh atomic.Int32
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
				if !i.Reused {
					fresh.Add(1)
				}
			}})
			// All n hold their connection at once: the server answers
			// none before every request has arrived.
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("herald"),
						Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "b"}}})
					require.NoError(t, err)
				})
			}
			wg.Wait()
			out = append(out, fresh.Load())
		}
		return out
	}
	dyn.HoldUntil("GetItem", n)
	require.Equal(t, []int32{n, 0, 0}, rounds(app.StoreClient(awsCfg, n)))
	dyn.HoldUntil("GetItem", n)
	require.Equal(t, []int32{n, n - 10, n - 10}, rounds(dynamodb.NewFromConfig(awsCfg)), "the SDK's default, for comparison")
}
