package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
)

// TestStoreModesConfigureTheDeliverFunction: each mode's variables, read
// by the deliver function's own loader, give the store it names: on, both
// delivered-once and the circuit; delivered-once off, the circuit alone on
// the same table; no table, neither.
func TestStoreModesConfigureTheDeliverFunction(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"HERALD_QUEUE_URL":      "https://sqs.us-east-1.amazonaws.com/000000000000/bench",
		"HERALD_DLQ_URL":        "https://sqs.us-east-1.amazonaws.com/000000000000/bench-dlq",
		"HERALD_WEBHOOK_SECRET": benchSecret,
	}
	for _, tc := range []struct {
		mode          storeMode
		table         string
		once, circuit bool
	}{
		{storeOn, "herald-store", true, true},
		{onceOff, "herald-store", false, true},
		{noTable, "", false, false},
	} {
		vars := withEnv(base, tc.mode.env("herald-store"))
		cfg, err := config.LoadDeliver(func(k string) string { return vars[k] })
		require.NoError(t, err, tc.mode.String())
		require.Equal(t, tc.table, cfg.StoreTable, tc.mode.String())
		require.Equal(t, tc.once, cfg.DeliveredOnce(), tc.mode.String())
		require.Equal(t, tc.circuit, cfg.Circuit(), tc.mode.String())
		if tc.mode == storeOn {
			require.Equal(t, config.DeliverChannels, cfg.DeliveredOnceChannels, "store on delivers webhooks once too")
		}
	}
	require.Equal(t, []string{"HERALD_DELIVERED_ONCE_WINDOW_SECONDS=0", "HERALD_STORE_TABLE=t"}, onceOff.envList("t"))
	require.Empty(t, noTable.envList("t"))
}

// TestCounterNamesTheStoresItems: the SDK middleware, on a real DynamoDB
// client in front of the wire fake, counts every call herald's store makes
// by operation and by the kind of item the store's own requests name.
func TestCounterNamesTheStoresItems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	counter := &opCounter{n: map[string]int{}}
	cfg := awstest.Config(ddb.URL())
	cfg.APIOptions = append(cfg.APIOptions, counter.install)
	st, err := store.New(dynamodb.NewFromConfig(cfg), store.Config{Table: "herald-store"})
	require.NoError(t, err)

	until := time.Now().Add(time.Minute)
	l, err := st.Claim(ctx, nil, "webhook", "a", "", until)
	require.NoError(t, err)
	require.NoError(t, st.Delivered(ctx, l))
	l2, err := st.Claim(ctx, nil, "webhook", "b", "", until)
	require.NoError(t, err)
	require.NoError(t, st.Release(ctx, l2))
	_, err = st.KeyVersions(ctx, "https://hooks.example.com")
	require.NoError(t, err)
	h, err := st.Health(ctx, "https://hooks.example.com")
	require.NoError(t, err)
	_, err = st.RecentHealth(ctx, "https://hooks.example.com")
	require.NoError(t, err)
	_, wrote, err := st.UpdateHealth(ctx, h, func(h *store.Health) bool { h.LastSuccess = time.Now(); return true })
	require.NoError(t, err)
	require.True(t, wrote)

	ops, items := counter.take()
	require.Equal(t, map[string]int{"PutItem": 4, "DeleteItem": 1, "GetItem": 3}, ops)
	require.Equal(t, map[string]int{
		"PutItem delivery": 3, "DeleteItem delivery": 1, "GetItem(eventual) keys": 1, "GetItem health": 1, "GetItem(eventual) health": 1, "PutItem health": 1,
	}, items, "an eventually consistent read named apart, priced at half (opPrice)")
	require.Equal(t, ddb.Calls("PutItem"), ops["PutItem"])
	require.Equal(t, "DeleteItem×1 (delivery 1), GetItem×1 (health 1), GetItem(eventual)×2 (health 1, keys 1), PutItem×4 (delivery 3, health 1)", describeItems(items))
	eventual, _, _ := opPrice(eventualGetItem)
	consistent, _, _ := opPrice("GetItem")
	require.InDelta(t, consistent/2, eventual, 1e-15)
	ops, items = counter.take()
	require.Empty(t, ops)
	require.Empty(t, items)
}

// TestStoreItemIsEmptyForOtherCalls: an input that is not a DynamoDB item
// call has no item kind, one without a string sort key "?".
func TestStoreItemIsEmptyForOtherCalls(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", storeItem(&sqs.SendMessageInput{}))
	require.Equal(t, "", storeItem(&dynamodb.ScanInput{}))
	require.Equal(t, "?", storeItem(&dynamodb.GetItemInput{}))
	require.Equal(t, "", storeItem(nil))
}

// TestPerMillionPricesEachCallAtItsService: calls per batch of 10, priced
// per million notifications at the prices' one home; DynamoDB writes at a
// write unit, reads at a read unit, item kinds ignored for the price.
func TestPerMillionPricesEachCallAtItsService(t *testing.T) {
	t.Parallel()
	d, unknown := perMillion(map[string]int{"PutItem delivery": 20, "GetItem keys": 1, "GetItem health": 1, "PutItem health": 1, "SendMessage": 2})
	want := 21.0/batchSize*dynamoPerMillionWRU + 2.0/batchSize*dynamoPerMillionRRU + 2.0/batchSize*sqsPerMillionRequests
	require.InDelta(t, want, d, 1e-9)
	// Two writes per notification at $0.625 per million write units.
	require.InDelta(t, 1.25, 20.0/batchSize*dynamoPerMillionWRU, 1e-9)
	require.Empty(t, unknown)

	_, unknown = perMillion(map[string]int{"Scan": 1, "Scan health": 2, "PutItem delivery": 1})
	require.Equal(t, []string{"Scan"}, unknown)
}

// TestEstimateBillsTheLargerOfWallAndCPU: a batch is billed its wall time
// unless its CPU at the memory's vCPU share takes longer, and every
// service's line adds to the total.
func TestEstimateBillsTheLargerOfWallAndCPU(t *testing.T) {
	t.Parallel()
	c := costInput{rssKB: 30 * 1024, cpuUS: 100, logBytes: 200, series: 6}
	f, unknown := estimate(c, 100*time.Millisecond, map[string]int{"PutItem delivery": 20, "GetItem keys": 1})
	require.Empty(t, unknown)
	require.Equal(t, 128.0, f.memMB)
	require.Equal(t, 100*time.Millisecond, f.billed) // 1 ms of CPU / 0.072 vCPU ≈ 13.8 ms < 100 ms
	invocations := 1e6 / batchSize
	require.InDelta(t, invocations*0.1*128/1024*lambdaPerGBSecondARM+invocations/1e6*lambdaPerMillionRequests, f.lambda, 1e-9)
	require.InDelta(t, 3*invocations*sqsPerMillionRequests/1e6, f.sqs, 1e-9)
	require.InDelta(t, 2*dynamoPerMillionWRU+0.1*dynamoPerMillionRRU, f.dynamo, 1e-9)
	require.InDelta(t, 200*1e6/1e9*logsPerGBIngested, f.logs, 1e-9)
	require.InDelta(t, 6*metricPerMonth/(monthlyNotifications/1e6), f.metrics, 1e-9)
	require.Zero(t, f.kms)
	require.InDelta(t, f.lambda+f.sqs+f.dynamo+f.logs+f.metrics, f.total(), 1e-9)

	// 2 ms of CPU per record: 20 ms a batch at 128/1769 of a vCPU is
	// about 276 ms, longer than the 100 ms wall.
	c.cpuUS = 2000
	f, _ = estimate(c, 100*time.Millisecond, nil)
	want := time.Duration(2000 * batchSize / (128.0 / 1769) * float64(time.Microsecond))
	require.InDelta(t, float64(want), float64(f.billed), float64(time.Microsecond))
	require.Greater(t, f.billed, 270*time.Millisecond)
	require.Zero(t, f.dynamo)

	// No calls of its own: the queue side only.
	require.InDelta(t, 3*invocations*sqsPerMillionRequests/1e6, f.sqs, 1e-9)
}

// TestByKindGroupsCallsByItem: counts keyed by item operation, grouped by
// the item kind; calls without one (SQS) under "".
func TestByKindGroupsCallsByItem(t *testing.T) {
	t.Parallel()
	got := byKind(map[string]int{"PutItem delivery": 20, "PutItem health": 1, "GetItem health": 1, "GetItem keys": 1, "SendMessage": 2})
	require.Equal(t, map[string]map[string]int{
		"delivery": {"PutItem": 20},
		"health":   {"PutItem": 1, "GetItem": 1},
		"keys":     {"GetItem": 1},
		"":         {"SendMessage": 2},
	}, got)
	require.Equal(t, "none", describeItems(map[string]int{"SendMessage": 2}))
}

// TestPairedDiffsAreTurnByTurn: what b added to a in each turn both were
// timed in, a turn only one of them ran left out; the median of the
// differences is printed with its sign and range.
func TestPairedDiffsAreTurnByTurn(t *testing.T) {
	t.Parallel()
	a := []time.Duration{100 * time.Millisecond, 110 * time.Millisecond, 101 * time.Millisecond}
	b := []time.Duration{104 * time.Millisecond, 112 * time.Millisecond}
	d := pairedDiffs(a, b)
	require.Equal(t, []time.Duration{4 * time.Millisecond, 2 * time.Millisecond}, d)
	require.Equal(t, "+4.0 ms (+2.0–+4.0)", addedRange(d))
	require.Equal(t, "-1.5 ms", addedRange([]time.Duration{-1500 * time.Microsecond}))
	require.Equal(t, "–", addedRange(nil))
	require.Equal(t, []float64{5, -1}, floatDiffs([]float64{80, 90, 70}, []float64{85, 89}))
}

// TestTurnAlternatesTheFirst: runs go in order in even turns, in reverse
// in odd ones.
func TestTurnAlternatesTheFirst(t *testing.T) {
	t.Parallel()
	order := func(i, n int) []int {
		var out []int
		for t := range n {
			out = append(out, turn(i, t, n))
		}
		return out
	}
	require.Equal(t, []int{0, 1}, order(0, 2))
	require.Equal(t, []int{1, 0}, order(1, 2))
	require.Equal(t, []int{0, 1}, order(4, 2))
	require.Equal(t, []int{2, 1, 0}, order(3, 3))
	require.Equal(t, []int{0}, order(1, 1))
}

// TestRunTagIsFixedLengthAndStable: ids that carry it are as long as the
// tag asked for, the same all run.
func TestRunTagIsFixedLengthAndStable(t *testing.T) {
	t.Parallel()
	require.Len(t, runTag(5), 5)
	require.Len(t, runTag(8), 8)
	require.Equal(t, runTag(8), runTag(8))
	require.Equal(t, runTag(8)[3:], runTag(5))
}

// TestCallsAsDesignedByMode: a batch's calls are as designed only when its
// DynamoDB calls are its mode's: none without a table, no delivery item
// with delivered-once off, a lease per record and one confirm of a clean
// batch with the store on.
func TestCallsAsDesignedByMode(t *testing.T) {
	t.Parallel()
	clean := callCase{name: "10 delivered", n: 10}
	on := map[string]int{"PutItem": 12, "GetItem": 2}
	onItems := map[string]int{"PutItem delivery": 10, "PutItem delivery_batch": 1, "PutItem health": 1, "GetItem health": 1, "GetItem keys": 1}
	require.True(t, callsAsDesigned(clean, storeOn, on, onItems, 0))
	require.False(t, callsAsDesigned(clean, storeOn, on, map[string]int{"PutItem delivery": 10, "PutItem health": 1}, 0), "no confirm")
	require.False(t, callsAsDesigned(clean, storeOn, on, map[string]int{"PutItem delivery": 20, "PutItem delivery_batch": 1}, 0), "two writes per record")
	require.False(t, callsAsDesigned(clean, onceOff, on, onItems, 0), "delivery items with delivered-once off")
	require.True(t, callsAsDesigned(clean, onceOff, map[string]int{"GetItem": 2}, map[string]int{"GetItem health": 1, "GetItem keys": 1}, 0))
	require.False(t, callsAsDesigned(clean, noTable, map[string]int{"GetItem": 1}, map[string]int{"GetItem keys": 1}, 0), "no table, no DynamoDB call")
	require.True(t, callsAsDesigned(clean, noTable, map[string]int{}, map[string]int{}, 0))
	require.False(t, callsAsDesigned(clean, noTable, map[string]int{}, map[string]int{}, 1), "a clean batch reports no failure")

	retried := callCase{name: "10, 3 fail", n: 10, k: 3, path: "/fail/", wantCMVB: 1}
	sqsOnly := map[string]int{"ChangeMessageVisibilityBatch": 1}
	require.True(t, callsAsDesigned(retried, noTable, sqsOnly, sqsOnly, 3))
	require.False(t, callsAsDesigned(retried, noTable, map[string]int{}, map[string]int{}, 3), "the visibility change is missing")

	// Every record failing: a lease each and nothing delivered is enough.
	allFail := callCase{name: "10, 10 fail", n: 10, k: 10, path: "/fail/", wantCMVB: 1}
	leases := map[string]int{"PutItem delivery": 10, "DeleteItem delivery": 10}
	require.True(t, callsAsDesigned(allFail, storeOn, sqsOnly, leases, 10))
	require.False(t, callsAsDesigned(allFail, storeOn, sqsOnly, map[string]int{"PutItem delivery": 9}, 10), "a record without its lease")
}

// TestSpreadFailureFailsKOfNApart: exactly k of n records fail, never two
// in a row while k ≤ n/2, so no run of failures reaches a circuit's
// threshold.
func TestSpreadFailureFailsKOfNApart(t *testing.T) {
	t.Parallel()
	var fails []int
	for i := range 10 {
		if spreadFailure(i, 10, 3) {
			fails = append(fails, i)
		}
	}
	require.Equal(t, []int{3, 6, 9}, fails)
	for _, nk := range [][2]int{{100, 25}, {10, 2}, {10, 0}, {100, 50}} {
		n, k := nk[0], nk[1]
		count, run, longest := 0, 0, 0
		for i := range n {
			if spreadFailure(i, n, k) {
				count, run = count+1, run+1
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
		require.Equal(t, k, count, "%d of %d", k, n)
		require.LessOrEqual(t, longest, 1, "%d of %d", k, n)
	}
}

// TestItemPurposeNamesEachKind: the store's four kinds of item by what
// they are for, another by its sort key.
func TestItemPurposeNamesEachKind(t *testing.T) {
	t.Parallel()
	require.Equal(t, "delivered-once (leases)", itemPurpose("delivery"))
	require.Equal(t, "delivered-once (a batch's confirm)", itemPurpose("delivery_batch"))
	require.Equal(t, "circuit (origin health reads and writes)", itemPurpose("health"))
	require.Equal(t, "key versions (reads)", itemPurpose("keys"))
	require.Equal(t, "items with sort key x", itemPurpose("x"))
}

// TestSignedUSDPutsTheSignFirst: what the store adds reads "+$1.250".
func TestSignedUSDPutsTheSignFirst(t *testing.T) {
	t.Parallel()
	require.Equal(t, "+$1.250", signedUSD(1.25))
	require.Equal(t, "-$0.004", signedUSD(-0.004))
	require.Equal(t, "+$0.000", signedUSD(0))
}

// TestStoreTableReadsTheLocalStacksEnvFile: the table is the env file's
// HERALD_STORE_TABLE, exported or not, quoted or not; without the file or
// the variable there is none, and the sections say why.
func TestStoreTableReadsTheLocalStacksEnvFile(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := needStoreTable()
	require.ErrorContains(t, err, "names no HERALD_STORE_TABLE")
	require.NoError(t, os.MkdirAll(filepath.Dir(localenv.EnvFile), 0o755))
	for content, want := range map[string]string{
		"AWS_REGION=us-east-1\n":                                   "",
		"AWS_REGION=us-east-1\nHERALD_STORE_TABLE=herald-a\n":      "herald-a",
		"  export HERALD_STORE_TABLE=\"herald-b\"\nHERALD_X=1\n":   "herald-b",
		"HERALD_STORE_TABLE='herald-c'":                            "herald-c",
		"HERALD_STORE_TABLE_X=no\nexport HERALD_STORE_TABLE=yes\n": "yes",
	} {
		require.NoError(t, os.WriteFile(localenv.EnvFile, []byte(content), 0o600))
		require.Equal(t, want, storeTable(), content)
		got, err := opts{}.sectionStoreTable()
		if want == "" {
			require.Error(t, err, content)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	got, err := opts{small: scale{storeTable: "mine"}}.sectionStoreTable()
	require.NoError(t, err)
	require.Equal(t, "mine", got)
}

// TestKeepAliveProxyKeepsConnections: behind the proxy, an endpoint that
// closes every connection is reached by a client that reuses one.
func TestKeepAliveProxyKeepsConnections(t *testing.T) {
	t.Parallel()
	var upstream atomic.Int32
	closing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstream.Add(1)
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(closing.Close)
	proxy, stop, err := keepAliveProxy(closing.URL)
	require.NoError(t, err)
	t.Cleanup(stop)
	var fresh atomic.Int32
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if !i.Reused {
			fresh.Add(1)
		}
	}})
	client := &http.Client{Transport: &http.Transport{}}
	for range 5 {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxy, strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		require.Empty(t, resp.Header.Get("Connection"))
	}
	require.Equal(t, int32(1), fresh.Load(), "one connection to the proxy")
	require.Equal(t, int32(5), upstream.Load())
	_, _, err = keepAliveProxy("not a url")
	require.Error(t, err)
}
