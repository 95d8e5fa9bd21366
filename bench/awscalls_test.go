package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// benchTable is the store's table in the DynamoDB fake.
const benchTable = "herald-store"

// fakes is SQS and DynamoDB on 127.0.0.1, where the SDK's default
// configuration (app.AWSConfig) sends the sections' calls.
type fakes struct {
	sqs *sqstest.Server
	ddb *dynamotest.Server
}

// setupFakes starts the fakes, the store's table created as the store
// expects it (keyed by store.AttrPK and store.AttrSK), and points the
// SDK's endpoint variables at them: a test using it cannot be parallel.
func setupFakes(t *testing.T) fakes {
	t.Helper()
	f := fakes{sqs: sqstest.New(t), ddb: dynamotest.New(t)}
	f.sqs.LongPoll()
	f.ddb.AddTable(benchTable, store.AttrPK, store.AttrSK)
	awstest.Setenv(t, map[string]string{"SQS": f.sqs.URL(), "DYNAMODB": f.ddb.URL()})
	return f
}

// sectionCtx is a section's context in a test: a broken section fails
// within a minute and a half instead of waiting out its minutes-long
// limits. Not less: under -race beside a CPU hog (load 12–16 on two cores)
// section 3 took 12–20 s and section 2 up to 21 s, and a context that ends
// inside a section fails it as SDK calls cut off ("context deadline
// exceeded", or "use of closed network connection" when the cut falls in a
// response body) or as calls missing from its counts (the processor starts
// nothing inside its reserve).
func sectionCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// createdQueues is the CreateQueue requests the SQS fake answered: each
// queue's name and attributes.
func createdQueues(t *testing.T, f fakes) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, req := range f.sqs.Requests("CreateQueue") {
		var in struct {
			QueueName  string
			Attributes map[string]string
		}
		require.NoError(t, json.Unmarshal(req, &in))
		out[in.QueueName] = in.Attributes
	}
	return out
}

// rowsOf is the rows of the one table printed in out: its title, its
// header's and rows' cells (split on runs of two spaces or more).
func rowsOf(t *testing.T, out string) (title string, header []string, rows [][]string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 2, out)
	require.True(t, strings.HasPrefix(lines[0], "== "), out)
	cells := func(l string) []string {
		var out []string
		for _, c := range strings.Split(l, "  ") {
			if c = strings.TrimSpace(c); c != "" {
				out = append(out, c)
			}
		}
		return out
	}
	for _, l := range lines[2:] {
		rows = append(rows, cells(l))
	}
	return strings.TrimPrefix(lines[0], "== "), cells(lines[1]), rows
}

// TestSectionAWSCallsCountsWhatTheDesignPromises: section 3 against the
// fakes, its large batch 12 records: every case three ways, each as
// designed; the SQS calls it counted are the ones the fake answered, the
// DynamoDB calls by kind of item those of each store mode, and the clean
// batch of 10's counts carried to the cost estimate.
func TestSectionAWSCallsCountsWhatTheDesignPromises(t *testing.T) {
	f := setupFakes(t)
	var out bytes.Buffer
	r := &results{}
	o := opts{reps: 1, out: &out, small: scale{large: 12, storeTable: benchTable}}
	require.NoError(t, sectionAWSCalls(sectionCtx(t), o, r), "the table so far:\n%s", &out)

	title, header, rows := rowsOf(t, out.String())
	require.Contains(t, title, "the DynamoDB table "+benchTable+");")
	require.Len(t, header, 7)
	require.Len(t, rows, 8*3)
	names := []string{
		"10 delivered", "10 delivered, warm (the environment's second batch)",
		"10 delivered, new environment, busy origin (another environment's batch just before)", "12 delivered", "10, 3 fail (503), retried",
		"12, 3 fail (503), retried", "10, 3 fail (503) on their last receive", "10, 2 gone (410), permanent",
	}
	// What each case asks of SQS whatever the store: a visibility change
	// per ten records to retry, a dead-letter send per record on its last
	// receive or gone for good; and the records to retry it reports.
	want := []struct {
		sqs      string
		failures string
	}{
		{"0 (none)", "0"}, {"0 (none)", "0"}, {"0 (none)", "0"}, {"0 (none)", "0"}, {"1 (ChangeMessageVisibilityBatch×1)", "3"},
		{"1 (ChangeMessageVisibilityBatch×1)", "3"}, {"3 (SendMessage×3)", "0"}, {"2 (SendMessage×2)", "0"},
	}
	for ci, name := range names {
		for mi, m := range storeModes {
			row := rows[3*ci+mi]
			if mi == 0 {
				require.Equal(t, name, row[0])
				row = row[1:]
			}
			require.Equal(t, m.String(), row[0], name)
			if mi == 0 {
				row = row[1:] // the expectation, checked below
			}
			require.Equal(t, []string{want[ci].sqs, row[2], want[ci].failures, "met"}, []string{row[1], row[2], row[3], row[4]}, "%s, %s", name, m)
			if m == noTable {
				require.Equal(t, "none", row[2], "%s: no table, no DynamoDB call", name)
			}
		}
	}
	require.Equal(t, []string{"10 delivered", "store on", "0 CMVB + 0 DLQ send"}, rows[0][:3])
	require.Equal(t, "1 CMVB + 0 DLQ send", rows[12][2])
	require.Equal(t, "0 CMVB + 3 DLQ send", rows[18][2])

	// With the store on, a clean batch leases each record and confirms the
	// batch's deliveries with one write; delivered-once off writes no
	// delivery item but keeps the circuit's and the keys' reads; no table,
	// nothing.
	require.Equal(t, 10, r.clean10[storeOn]["PutItem delivery"])
	require.Equal(t, 1, r.clean10[storeOn]["PutItem delivery_batch"])
	require.Zero(t, r.clean10[onceOff]["PutItem delivery"]+r.clean10[onceOff]["PutItem delivery_batch"])
	require.Equal(t, 1, r.clean10[onceOff]["GetItem(eventual) health"], "the circuit's read, eventually consistent")
	require.Equal(t, 1, r.clean10[onceOff]["PutItem health"], "a new origin's first success is written")
	// A new environment of a busy function reads the origin's health and
	// keys; the last success another environment wrote is fresh: no write.
	require.Equal(t, map[string]int{"GetItem(eventual) health": 1, "GetItem(eventual) keys": 1}, r.busy10[onceOff])
	require.Equal(t, 10, r.busy10[storeOn]["PutItem delivery"])
	require.Empty(t, r.clean10[noTable])
	require.Equal(t, 10, r.warm10[storeOn]["PutItem delivery"])
	require.Equal(t, 1, r.warm10[storeOn]["PutItem delivery_batch"])
	require.Empty(t, r.warm10[noTable])
	require.Equal(t, r.clean10[storeOn]["PutItem delivery"]+r.clean10[storeOn]["PutItem delivery_batch"]+r.clean10[storeOn]["PutItem health"], r.clean10Ops["PutItem"])
	require.Equal(t, "PutItem×11 (delivery 10, delivery_batch 1)", describeItems(map[string]int{"PutItem delivery": 10, "PutItem delivery_batch": 1}))

	// What the fakes answered: the processor's visibility changes (two
	// retried cases three ways) and dead-letter sends (3 + 2 records
	// three ways); the bench fills its queue ten at a time.
	require.Len(t, f.sqs.Requests("ChangeMessageVisibilityBatch"), 2*3)
	require.Len(t, f.sqs.Requests("SendMessage"), (3+2)*3)
	records := 10 + 2*10 + 2*10 + 12 + 10 + 12 + 10 + 10 // the warm and busy cases send two batches
	batches := 1 + 2 + 2 + 2 + 1 + 2 + 1 + 1             // ten to a batch
	require.Len(t, f.sqs.Requests("SendMessageBatch"), 3*batches)
	require.Equal(t, 3*records, batchEntries(t, f.sqs.Requests("SendMessageBatch")))
	require.Len(t, f.sqs.Requests("DeleteQueue"), 2, "both queues deleted")
	// Its queue is as the stack's: three receives before the dead-letter
	// queue, a minute's visibility.
	for name, attrs := range createdQueues(t, f) {
		if !strings.HasSuffix(name, "-dlq") {
			require.Equal(t, "60", attrs["VisibilityTimeout"], name)
			require.Contains(t, attrs["RedrivePolicy"], `"maxReceiveCount":"3"`, name)
		}
	}
	// Every case's messages purged, ten to a delete: the processor
	// deletes none itself (the event source mapping does).
	require.Len(t, f.sqs.Requests("DeleteMessageBatch"), 3*batches)
	require.Equal(t, 3*records, batchEntries(t, f.sqs.Requests("DeleteMessageBatch")))
	// The store-on runs (mode 0 in the ids) recorded delivered each record
	// they delivered, 10 of them in the warm and busy cases' first
	// batches; delivered-once off wrote none.
	delivered := 10 + (10 + 10) + (10 + 10) + 12 + (10 - 3) + (12 - 3) + (10 - 3) + (10 - 2)
	require.Equal(t, delivered, deliveredItems(t, f, "-0"))
	require.Zero(t, deliveredItems(t, f, "-1"))
}

// deliveredItems is how many notification ids of the section 3 mode whose
// index follows the case's ("-0" for storeOn) the store's table records
// delivered (recordedDelivered).
func deliveredItems(t *testing.T, f fakes, mode string) int {
	t.Helper()
	items := f.ddb.Items(benchTable)
	confirmed := confirmedLeases(items)
	n := 0
	for _, it := range items {
		// notification#webhook#calls<run>-<case>-<mode>[w or b]-<record>
		parts := strings.Split(attrS(it, store.AttrPK), "-")
		if len(parts) == 4 && "-"+strings.TrimRight(parts[2], "wb") == mode && recordedDelivered(it, confirmed) {
			n++
		}
	}
	return n
}

// attrS is an item's string attribute name, as dynamotest.Items gives it.
func attrS(it map[string]any, name string) string {
	v, _ := it[name].(map[string]any)
	s, _ := v["S"].(string)
	return s
}

// confirmedLeases is the leases the batches' confirm items among items list
// delivered, as batch + "/" + seq.
func confirmedLeases(items []map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, it := range items {
		if batch, ok := strings.CutPrefix(attrS(it, store.AttrPK), "batch#"); ok {
			ns, _ := it[store.AttrDelivered].(map[string]any)
			seqs, _ := ns["NS"].([]any)
			for _, seq := range seqs {
				out[batch+"/"+fmt.Sprint(seq)] = true
			}
		}
	}
	return out
}

// recordedDelivered reports whether a delivery item is recorded delivered:
// a lease its batch's confirm lists, or a delivered item.
func recordedDelivered(it map[string]any, confirmed map[string]bool) bool {
	seq, _ := it[store.AttrSeq].(map[string]any)
	return attrS(it, store.AttrState) == store.StateDelivered || confirmed[attrS(it, store.AttrBatch)+"/"+fmt.Sprint(seq["N"])]
}

// batchEntries is how many entries the batch requests reqs held.
func batchEntries(t *testing.T, reqs []json.RawMessage) int {
	t.Helper()
	n := 0
	for _, req := range reqs {
		var in struct{ Entries []json.RawMessage }
		require.NoError(t, json.Unmarshal(req, &in))
		n += len(in.Entries)
	}
	return n
}

// TestCallCasesOfMakeBench: make bench's large batches are of 100, a
// quarter of one failing in three visibility changes; the smoke run leaves
// them out, and nothing else.
func TestCallCasesOfMakeBench(t *testing.T) {
	t.Parallel()
	all := callCases(100, false)
	require.Len(t, all, 8)
	require.Equal(t, callCase{"100, 25 fail (503), retried", 100, 25, "/fail/", false, false, false, 3, 0}, all[5])
	require.Equal(t, callCase{"100 delivered", 100, 0, "", false, false, false, 0, 0}, all[3])
	require.True(t, all[2].busy)
	require.Equal(t, 2, callCases(44, false)[5].wantCMVB, "11 of 44")
	require.Equal(t, 1, callCases(11, false)[5].wantCMVB, "2 of 11")
	var names []string
	for _, c := range callCases(11, true) {
		names = append(names, c.name)
	}
	require.Equal(t, []string{"10 delivered", "10 delivered, warm (the environment's second batch)",
		"10 delivered, new environment, busy origin (another environment's batch just before)", "10, 3 fail (503), retried",
		"10, 3 fail (503) on their last receive", "10, 2 gone (410), permanent"}, names)
}

// TestOrNoneSaysWhyThereIsNoTable: an empty table name reads as the
// reason.
func TestOrNoneSaysWhyThereIsNoTable(t *testing.T) {
	t.Parallel()
	require.Equal(t, "none: the local stack names no HERALD_STORE_TABLE", orNone(""))
	require.Equal(t, "t", orNone("t"))
}

// TestSendBodiesReportsFailedEntries: ten bodies to a SendMessageBatch; an
// entry SQS refuses fails the whole fill, naming why.
func TestSendBodiesReportsFailedEntries(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	url := s.AddQueue("https://sqs.us-east-1.amazonaws.com/123456789012/fill", nil)
	ctx := context.Background()
	require.NoError(t, sendBodies(ctx, s.Client(), url, 23, func(i int) string { return fmt.Sprint("body ", i) }))
	var bodies []string
	for _, m := range s.Messages(url) {
		bodies = append(bodies, m.Body)
	}
	slices.Sort(bodies)
	var want []string
	for i := range 23 {
		want = append(want, fmt.Sprint("body ", i))
	}
	slices.Sort(want)
	require.Equal(t, want, bodies, "each body once")
	require.Len(t, s.Requests("SendMessageBatch"), 3)
	err := sendBodies(ctx, s.Client(), url, 3, func(i int) string { return strings.Repeat("x", i%2) })
	require.EqualError(t, err, "send: 2 entries failed: The request must contain the parameter MessageBody.")
	s.FailAction("SendMessageBatch")
	require.ErrorContains(t, sendBodies(ctx, s.Client(), url, 30, func(int) string { return "x" }), "send: operation error SQS: SendMessageBatch")
}
