package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/kmstest"
)

// TestSectionEvents: against the fakes (SQS, DynamoDB with the tenant
// index, KMS), the events section fans one untimed event out to a warm-up
// tenant's endpoint, then one event to 1 and one to 30 endpoints, checks
// that the webhook queue holds one delivery per endpoint,
// and prints each row with the calls the fan-out made: for 30 endpoints one
// page (a Query), one GetItem, a PutItem per batch of 10 plus the claim
// (4), 3 SendMessageBatch. Not parallel: setupFakes sets the environment.
func TestSectionEvents(t *testing.T) {
	f := setupFakes(t)
	f.ddb.AddIndex(benchTable, endpoint.TenantIndex, endpoint.AttrGSI1PK, endpoint.AttrGSI1SK, []string{endpoint.AttrEventTypes, endpoint.AttrDisabledAt, endpoint.AttrKind})
	k := kmstest.New(t)
	k.CreateKey("alias/herald-endpoints")
	awstest.Setenv(t, map[string]string{"SQS": f.sqs.URL(), "DYNAMODB": f.ddb.URL(), "KMS": k.URL()})
	var out bytes.Buffer
	r := &results{}
	o := opts{out: &out, small: scale{storeTable: benchTable, endpointKey: "alias/herald-endpoints", events: 30}}
	require.NoError(t, sectionEvents(sectionCtx(t), o, r))
	require.Len(t, r.eventRows, 2)
	big := r.eventRows[1]
	require.Equal(t, 30, big.n)
	require.Equal(t, map[string]int{"Query": 1, "GetItem": 1, "PutItem": 4, "SendMessageBatch": 3}, big.ops)
	one := r.eventRows[0]
	require.Equal(t, map[string]int{"Query": 1, "GetItem": 1, "PutItem": 2, "SendMessageBatch": 1}, one.ops)
	require.Contains(t, out.String(), "Events: one event fanned out")
	require.Contains(t, out.String(), "after one untimed event to a tenant of its own")
	require.Equal(t, 1+1+30, batchEntries(t, f.sqs.Requests("SendMessageBatch")), "the warm-up's delivery and one per endpoint of the timed rows")
	calls, lambda := eventCostPerMillion(big)
	// 3 SQS requests ($0.40/M), 4 writes ($0.625/M WRU), 2 reads
	// ($0.125/M RRU), per 30 deliveries, per million.
	require.InDelta(t, (3*0.40+4*0.625+2*0.125)/30, calls, 1e-9)
	require.Positive(t, lambda)
}
