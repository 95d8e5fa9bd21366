package endpointsend_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/webhook"
)

// TestFailureRecordKeepsTheDeadline: the endpoint store (DynamoDB's wire
// format) hangs on the failure item's PutItem while a delivery fails just
// before its context's deadline (the processor's delivery context, which
// ends Reserve before the invocation does, so that the batch can still be
// settled): Send returns by the deadline, not the record's own 2 s later,
// which would spend the whole reserve and leave the batch unsettled when
// the invocation ends. The write is made all the same (it reaches the
// store, where it is held), not dropped for want of time.
func TestFailureRecordKeepsTheDeadline(t *testing.T) {
	t.Parallel()
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	tbl, err := endpoint.NewTable(endpoint.TableConfig{Table: "herald-store", DB: ddb.Client(),
		KMS: kms.NewFromConfig(aws.Config{Region: "us-east-1"})}) // RecordFailure asks no KMS
	require.NoError(t, err)
	recv := newReceiver(t, http.StatusBadGateway)
	reg := &endpoints{}
	reg.put(webhookEndpoint(ep1, recv.srv.URL, 'a'))
	s := endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg, Failures: tbl})

	ddb.HoldUntil("PutItem", 2) // the failure item's write hangs until a second one arrives
	t.Cleanup(func() {
		// The second write, to release the held one (before the server
		// closes, which waits for it). Each try is bounded: when no write
		// of the failure item reached the store (none was made, or with a
		// context already done), the first try is itself held alone, and
		// the second releases it, so that the test fails instead of
		// hanging.
		release := func(n int) error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			v := &dtypes.AttributeValueMemberS{Value: "release-" + strconv.Itoa(n)}
			_, err := ddb.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("herald-store"),
				Item: map[string]dtypes.AttributeValue{store.AttrPK: v, store.AttrSK: v}})
			return err
		}
		if err := release(1); err != nil {
			t.Errorf("the failure item's write never reached the store: nothing was held (%v)", err)
			if err := release(2); err != nil {
				t.Errorf("the second try released nothing: %v", err)
			}
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 400*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Send(ctx, delivery1(ep1))
	elapsed := time.Since(start)
	requireClass(t, err, false, webhook.ClassHTTP5xx)
	require.Less(t, elapsed, 1200*time.Millisecond, "returned by the deadline (400 ms), not the record's 2 s")
	require.Len(t, recv.requests(), 1)
}
