package main

import (
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/store"
)

// The store's bench settings, their one home: how herald runs beside its
// DynamoDB table (HERALD_STORE_TABLE, docs/configuration.md) in the
// sections that time, count and price it with the store on and off.

// storeMode is one way herald runs with respect to its store's table.
type storeMode int

const (
	// storeOn is delivered-once for every channel, webhooks included
	// (HERALD_DELIVERED_ONCE_CHANNELS=email,webhook,chat): HERALD_STORE_TABLE
	// set, delivered-once at its default window (24 h), the destination
	// circuit at its default threshold (10), key versions read per origin.
	storeOn storeMode = iota
	// onceOff keeps the table but sets HERALD_DELIVERED_ONCE_WINDOW_SECONDS
	// to 0: the circuit's health reads and writes and the key reads stay,
	// the lease and confirm writes go. For webhooks this is the deployed
	// default, whose HERALD_DELIVERED_ONCE_CHANNELS leaves them out.
	onceOff
	// noTable leaves HERALD_STORE_TABLE unset: no DynamoDB call at all.
	noTable
)

// storeModes are section 3's three ways, in the order its table prints
// them.
var storeModes = []storeMode{storeOn, onceOff, noTable}

func (m storeMode) String() string {
	switch m {
	case storeOn:
		return "store on"
	case onceOff:
		return "delivered-once off (circuit kept)"
	case noTable:
		return "no table"
	}
	return fmt.Sprintf("storeMode(%d)", int(m))
}

// env is the HERALD_* variables of m over the table named table, to add to
// the deliver function's (deliverer's env); none for noTable.
func (m storeMode) env(table string) map[string]string {
	switch m {
	case storeOn:
		return map[string]string{"HERALD_STORE_TABLE": table, "HERALD_DELIVERED_ONCE_CHANNELS": "email,webhook,chat"}
	case onceOff:
		return map[string]string{"HERALD_STORE_TABLE": table, "HERALD_DELIVERED_ONCE_WINDOW_SECONDS": "0"}
	}
	return map[string]string{}
}

// envList is env as NAME=value strings, sorted, for a process's
// environment (the emulator's function).
func (m storeMode) envList(table string) []string {
	var out []string
	for k, v := range m.env(table) {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// withEnv is base with extra's variables added (extra wins), a new map.
func withEnv(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// storeTable is HERALD_STORE_TABLE of the local stack's env file
// (localenv.EnvFile), or "" when it names none.
func storeTable() string {
	b, err := os.ReadFile(localenv.EnvFile)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimPrefix(strings.TrimSpace(l), "export "), "HERALD_STORE_TABLE="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// needStoreTable is storeTable, or an error saying why the store's rows
// cannot run.
func needStoreTable() (string, error) {
	t := storeTable()
	if t == "" {
		return "", fmt.Errorf("the local stack's env file (%s) names no HERALD_STORE_TABLE: the store's rows need the table it provisions", localenv.EnvFile)
	}
	return t, nil
}

// runStart is when this run began; runTag makes notification ids unique to
// it.
var runStart = time.Now()

// runTag is the last n base-36 digits of this run's start in nanoseconds:
// notification ids that carry it are new to the store's table, which
// remembers delivered ids across runs (a copy of one would be settled as a
// duplicate, not sent). n fixed keeps ids as long as the store-off rows'.
func runTag(n int) string {
	s := strconv.FormatInt(runStart.UnixNano(), 36)
	return s[max(0, len(s)-n):]
}

// storeItem is the kind of table item an SDK input reads or writes, its sort
// key (store.AttrSK: "delivery" for a delivered-once lease, "delivery_batch"
// for the confirm of a batch's deliveries, "health" for
// an origin's circuit health, "keys" for an origin's key versions; package
// store's doc), "" for an input that is not a DynamoDB item call.
func storeItem(params any) string {
	var key map[string]dtypes.AttributeValue
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		key = in.Item
	case *dynamodb.GetItemInput:
		key = in.Key
	case *dynamodb.DeleteItemInput:
		key = in.Key
	case *dynamodb.UpdateItemInput:
		key = in.Key
	default:
		return ""
	}
	if s, ok := key[store.AttrSK].(*dtypes.AttributeValueMemberS); ok {
		return s.Value
	}
	return "?"
}

// itemPurpose names what a table item kind (storeItem) is for, for the
// tables; an unknown kind is printed as it is.
func itemPurpose(kind string) string {
	switch kind {
	case "delivery":
		return "delivered-once (leases)"
	case "delivery_batch":
		return "delivered-once (a batch's confirm)"
	case "health":
		return "circuit (origin health reads and writes)"
	case "keys":
		return "key versions (reads)"
	}
	return "items with sort key " + kind
}

// itemOp is a DynamoDB operation on one kind of item: "PutItem delivery".
func itemOp(op, kind string) string { return op + " " + kind }

// splitItemOp is itemOp's parts.
func splitItemOp(k string) (op, kind string) {
	op, kind, _ = strings.Cut(k, " ")
	return op, kind
}

// perMillion is what calls made per batch of batchSize notifications cost
// per million notifications, each priced by opPrice (calls keyed by
// operation name, or by itemOp); unknown lists the operations without a
// price.
func perMillion(calls map[string]int) (dollars float64, unknown []string) {
	for k, n := range calls {
		op, _ := splitItemOp(k)
		price, _, ok := opPrice(op)
		if !ok {
			unknown = append(unknown, op)
			continue
		}
		dollars += float64(n) / batchSize * 1e6 * price
	}
	slices.Sort(unknown)
	return dollars, slices.Compact(unknown)
}

// byKind groups itemOp-keyed counts by item kind: kind → operation → n.
func byKind(calls map[string]int) map[string]map[string]int {
	out := map[string]map[string]int{}
	for k, n := range calls {
		op, kind := splitItemOp(k)
		if out[kind] == nil {
			out[kind] = map[string]int{}
		}
		out[kind][op] += n
	}
	return out
}

// turn is which of n runs goes t-th in turn i: in order in even turns, in
// reverse in odd ones, so that no run of a paired difference is always
// the first.
func turn(i, t, n int) int {
	if i%2 == 1 {
		return n - 1 - t
	}
	return t
}

// pairedDiffs is b[i] − a[i] for the turns both were timed in: what b's
// setting added to a's, turn by turn, so that a slow moment of a shared
// machine falls on both sides of a difference.
func pairedDiffs(a, b []time.Duration) []time.Duration {
	n := min(len(a), len(b))
	out := make([]time.Duration, n)
	for i := range n {
		out[i] = b[i] - a[i]
	}
	return out
}

// floatDiffs is b[i] − a[i] for the turns both were measured in.
func floatDiffs(a, b []float64) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, n)
	for i := range n {
		out[i] = b[i] - a[i]
	}
	return out
}

// signedMS is d in milliseconds with its sign: "+2.4 ms", "-0.3 ms".
func signedMS(d time.Duration) string {
	return fmt.Sprintf("%+.1f ms", float64(d.Microseconds())/1000)
}

// signedUSD is dollars with their sign before the dollar sign: "+$1.250",
// "-$0.004".
func signedUSD(d float64) string {
	if d < 0 {
		return fmt.Sprintf("-$%.3f", -d)
	}
	return fmt.Sprintf("+$%.3f", d)
}

// addedRange is "+median (min–max)" of ds in milliseconds, or "–".
func addedRange(ds []time.Duration) string {
	switch len(ds) {
	case 0:
		return "–"
	case 1:
		return signedMS(ds[0])
	}
	return fmt.Sprintf("%s (%+.1f–%+.1f)", signedMS(median(ds)), float64(slices.Min(ds).Microseconds())/1000, float64(slices.Max(ds).Microseconds())/1000)
}

// keepAliveProxy fronts the DynamoDB endpoint target (the local stack's)
// with a reverse proxy on 127.0.0.1 that keeps its clients' connections
// alive, and returns its URL and a function that stops it. LocalStack
// answers every DynamoDB request with "Connection: close", so a function
// calling it opens a TCP connection per call, and that connection's
// kernel and runtime work, not DynamoDB's (which keeps connections alive),
// would be counted as the store's CPU. The proxy's own work is the bench
// process's, not the function's.
func keepAliveProxy(target string) (string, func(), error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return "", nil, fmt.Errorf("keep-alive proxy: endpoint %q: want a URL", target)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(rp)
	return srv.URL, srv.Close, nil
}
