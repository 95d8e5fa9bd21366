package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The figures below are worked by hand from AWS's public us-east-1 prices
// (December 2026): Lambda arm64 $0.0000133334 per GB-second and $0.20 per
// million requests (aws.amazon.com/lambda/pricing), SQS standard $0.40 per
// million requests (aws.amazon.com/sqs/pricing), CloudWatch Logs $0.50 per
// GB ingested and $0.30 per custom metric a month
// (aws.amazon.com/cloudwatch/pricing), KMS $0.03 per 10,000 requests
// (aws.amazon.com/kms/pricing), DynamoDB on demand $0.625 per million write
// and $0.125 per million read request units
// (aws.amazon.com/dynamodb/pricing/on-demand), SES $0.10 per 1,000 emails
// (aws.amazon.com/ses/pricing); one vCPU per 1,769 MB (Lambda's memory
// and computing power docs). A million notifications in batches of 10 are
// 100,000 invocations.

// herald without the store: RSS 100 MiB (×1.25 = 125 MB, so 128 MB); CPU
// 500 µs per record, 5 ms a batch at 128/1769 of a vCPU = 69.1 ms, under its
// 120 ms wall.
var heraldOff = costInput{label: "herald", batch10: 120 * time.Millisecond, rssKB: 100 * 1024, cpuUS: 500,
	logBytes: 200, series: 4, herald: true, store: noTable}

// herald with the store: RSS 160 MiB (200 MB, so 256 MB); CPU 2 ms per
// record, 20 ms a batch at 256/1769 of a vCPU = 138.203125 ms, over its
// 130 ms wall.
var heraldOn = costInput{label: "herald + store", batch10: 130 * time.Millisecond, rssKB: 160 * 1024, cpuUS: 2000,
	logBytes: 300, series: 6, herald: true, store: storeOn}

// a peer: RSS 200 MiB (250 MB, so 256 MB), CPU far under its wall. Its
// store is storeOn, the zero value: a peer is still priced without
// herald's calls.
var peerTS = costInput{label: "Powertools TS (fetch)", batch10: 150 * time.Millisecond, rssKB: 200 * 1024, cpuUS: 100,
	logBytes: 500, series: 2}

// herald's calls per clean batch of 10 by store mode (section 3's shape:
// SQS and KMS by operation, DynamoDB by itemOp).
func clean10() map[storeMode]map[string]int {
	return map[storeMode]map[string]int{
		storeOn: {"DeleteMessageBatch": 2, "Decrypt": 2, "PutItem delivery": 20,
			"GetItem health": 2, "PutItem health": 2, "GetItem keys": 4},
		onceOff: {"GetItem health": 2, "PutItem health": 2, "GetItem keys": 4},
		noTable: {"SendMessage": 1},
	}
}

// TestEstimateFromPrices: each service's share of a million notifications,
// worked by hand from the prices.
func TestEstimateFromPrices(t *testing.T) {
	t.Parallel()

	f, unknown := estimate(heraldOff, heraldOff.batch10, clean10()[noTable])
	require.Empty(t, unknown)
	require.Equal(t, 128.0, f.memMB)
	require.Equal(t, 120*time.Millisecond, f.billed, "the wall, over the CPU time")
	// 100,000 × 0.12 s × 0.125 GB = 1,500 GB-s × $0.0000133334 = $0.0200001,
	// + 100,000 requests × $0.20 / 1M = $0.02.
	require.InDelta(t, 0.0400001, f.lambda, 1e-12)
	// 3 requests per batch (send, receive, delete) = 300,000 × $0.40 / 1M =
	// $0.12, + one SendMessage per batch = $0.04.
	require.InDelta(t, 0.16, f.sqs, 1e-12)
	// 200 B × 1M = 0.2 GB × $0.50.
	require.InDelta(t, 0.10, f.logs, 1e-12)
	// 4 metrics × $0.30 a month over 10 million notifications.
	require.InDelta(t, 0.12, f.metrics, 1e-12)
	require.Zero(t, f.kms)
	require.Zero(t, f.dynamo)
	require.InDelta(t, 0.4200001, f.total(), 1e-12)

	f, unknown = estimate(heraldOn, heraldOn.batch10, clean10()[storeOn])
	require.Empty(t, unknown)
	require.Equal(t, 256.0, f.memMB)
	require.Equal(t, 138203125*time.Nanosecond, f.billed, "20 ms of CPU at 256/1769 of a vCPU, over the 130 ms wall")
	// 100,000 × 0.138203125 s × 0.25 GB = 3,455.078125 GB-s × $0.0000133334,
	// + $0.02.
	require.InDelta(t, 0.066067938671875, f.lambda, 1e-12)
	// $0.12 + two DeleteMessageBatch per batch = 200,000 × $0.40 / 1M.
	require.InDelta(t, 0.20, f.sqs, 1e-12)
	// two Decrypt per batch: 200,000 × $0.03 / 10,000.
	require.InDelta(t, 0.60, f.kms, 1e-12)
	// writes: 20 + 2 per batch = 2.2M WRU × $0.625 / 1M = $1.375; reads:
	// 2 + 4 per batch = 0.6M RRU × $0.125 / 1M = $0.075.
	require.InDelta(t, 1.45, f.dynamo, 1e-12)
	require.InDelta(t, 0.15, f.logs, 1e-12)
	require.InDelta(t, 0.18, f.metrics, 1e-12)

	// The peer: no calls of its own, CPU under the wall.
	f, _ = estimate(peerTS, peerTS.batch10, nil)
	require.Equal(t, 150*time.Millisecond, f.billed)
	// 100,000 × 0.15 s × 0.25 GB = 3,750 GB-s × $0.0000133334 = $0.05000025,
	// + $0.02.
	require.InDelta(t, 0.07000025, f.lambda, 1e-12)
	require.InDelta(t, 0.12, f.sqs, 1e-12)
	require.InDelta(t, 0.25, f.logs, 1e-12)

	// Operations without a price are named once each, sorted, and priced
	// at nothing.
	f, unknown = estimate(heraldOff, heraldOff.batch10, map[string]int{"Scan health": 1, "Scan keys": 3, "GetSecretValue": 1, "SendMessage": 1})
	require.Equal(t, []string{"GetSecretValue", "Scan"}, unknown)
	require.InDelta(t, 0.16, f.sqs, 1e-12)
	require.Zero(t, f.dynamo)
}

// cells is the table printTable wrote to out whose title starts with
// title: its rows (the header first) keyed by their first cell, each the
// other non-empty cells. printTable's columns are at least two spaces
// apart and no cell holds two spaces in a row; the table ends at a blank
// line, the next title, a profile or a note (a line indented by spaces; only a header
// with an empty first cell, right after the title, starts with one).
func cells(t *testing.T, out, title string) map[string][]string {
	t.Helper()
	_, after, ok := strings.Cut(out, "== "+title)
	require.True(t, ok, "no table %q in:\n%s", title, out)
	lines := strings.Split(after, "\n")[1:]
	rows := map[string][]string{}
	for i, l := range lines {
		if l == "" || strings.HasPrefix(l, "==") || strings.HasPrefix(l, "-- ") || i > 0 && strings.HasPrefix(l, " ") {
			break
		}
		row := columnGap.Split(l, -1)
		rows[row[0]] = slices.DeleteFunc(row[1:], func(c string) bool { return c == "" })
	}
	return rows
}

var columnGap = regexp.MustCompile(` {2,}`)

// fullRun is what sections 2 to 6 leave for the cost section, with every
// latency figure present.
func fullRun() *results {
	ms := time.Millisecond
	return &results{
		costRows: []costInput{heraldOff, heraldOn, peerTS},
		clean10:  clean10(),
		warm10: map[storeMode]map[string]int{
			storeOn: {"DeleteMessageBatch": 2, "PutItem delivery": 20, "UpdateItem lease": 2},
		},
		fan10: 110 * ms, fan10Store: 125 * ms, fan10Seq: 900 * ms, fan10SeqStore: 950 * ms,
		fanAdded10: []time.Duration{14 * ms, 16 * ms, 15 * ms},
		fan100:     400 * ms, fan100Store: 430 * ms, fanAdded100: []time.Duration{20 * ms, 30 * ms},
		e2eOff:    e2eRun{rate: 800.4, p50: 12 * ms, p99: 40 * ms, latN: 250, pace: 80},
		e2eOn:     e2eRun{rate: 700, p50: 15 * ms, p99: 55 * ms, latN: 250, pace: 80},
		rieHerald: peerSamples{b10: []time.Duration{120 * ms, 121 * ms, 119 * ms}, cpuUS: []float64{500, 510, 490}, logBytes: []float64{200, 201, 199}},
		rieStore:  peerSamples{b10: []time.Duration{130 * ms, 135 * ms, 128 * ms}, cpuUS: []float64{600, 650, 580}, logBytes: []float64{300, 300, 305}},
	}
}

// TestSectionCostPrintsEachRowAllIn: the all-in table prices the emulator
// rows and the in-process walls of sections 2 with the same functions'
// footprints; the emails column adds SES's $100 a million.
func TestSectionCostPrintsEachRowAllIn(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	require.NoError(t, sectionCost(context.Background(), opts{out: &out}, fullRun()))
	got := cells(t, out.String(), "All-in cost per million webhook notifications, us-east-1 prices (arm64 Lambda, batches of 10, ")
	require.Equal(t, []string{"billed per batch", "memory", "Lambda", "SQS", "log/notification", "CloudWatch Logs", "custom metrics",
		"KMS", "DynamoDB", "traces (X-Ray)", "webhooks all in", "emails all in (+SES)"}, got[""])
	require.Equal(t, map[string][]string{
		"":                            got[""],
		"herald, no table (emulator)": {"120.0 ms", "128 MB", "$0.040", "$0.160", "200 B", "$0.100", "4: $0.120", "$0.000", "$0.000", "$0.000", "$0.42", "$100.42"},
		"herald + store (emulator)":   {"138.2 ms", "256 MB", "$0.066", "$0.200", "300 B", "$0.150", "6: $0.180", "$0.600", "$1.450", "$0.000", "$2.65", "$102.65"},
		// SQS: only the batch's three calls.
		"Powertools TS (fetch) (emulator)": {"150.0 ms", "256 MB", "$0.070", "$0.120", "500 B", "$0.250", "2: $0.060", "$0.000", "$0.000", "$0.000", "$0.50", "$100.50"},
		// 1,375 GB-s → $0.0183334 + $0.02.
		"herald in process, default concurrency, no table": {"110.0 ms", "128 MB", "$0.038", "$0.160", "200 B", "$0.100", "4: $0.120", "$0.000", "$0.000", "$0.000", "$0.42", "$100.42"},
		// 125 ms of wall, under the store's 138.2 ms of CPU.
		"herald in process, default concurrency, store on": {"138.2 ms", "256 MB", "$0.066", "$0.200", "300 B", "$0.150", "6: $0.180", "$0.600", "$1.450", "$0.000", "$2.65", "$102.65"},
		// 11,250 GB-s → $0.15000075 + $0.02.
		"herald in process, concurrency 1, no table": {"900.0 ms", "128 MB", "$0.170", "$0.160", "200 B", "$0.100", "4: $0.120", "$0.000", "$0.000", "$0.000", "$0.55", "$100.55"},
		// 23,750 GB-s → $0.31666825 + $0.02.
		"herald in process, concurrency 1, store on": {"950.0 ms", "256 MB", "$0.337", "$0.200", "300 B", "$0.150", "6: $0.180", "$0.600", "$1.450", "$0.000", "$2.92", "$102.92"},
	}, got)
	require.Contains(t, out.String(), "; custom metrics of the clean path at 10 million notifications a month; ")
	require.Contains(t, out.String(), "   prices: Lambda $0.20 per million requests, $0.0000133334 per GB-s (arm64); SQS $0.40 per million requests; "+
		"CloudWatch Logs $0.50 per GB ingested; custom metric $0.30 a month; KMS $0.03 per 10,000 requests; DynamoDB on demand $0.625 per million WRU, "+
		"$0.125 per million RRU; SES $0.10 per 1,000 emails; X-Ray $5.00 per million traces recorded\n")
	require.Contains(t, out.String(), "   herald's processor, clean batch of 10 on a new environment (section 3): store on "+
		"GetItem×6 (health 2, keys 4), PutItem×22 (delivery 20, health 2); delivered-once off GetItem×6 (health 2, keys 4), PutItem×2 (health 2); "+
		"no table none; the plain Powertools peers make no AWS call of their own, the idempotency peer is priced with PutItem×10 (idempotency 10), UpdateItem×10 (idempotency 10) per batch of 10 (its documented PutItem and UpdateItem per record, not counted)\n")
}

// TestStoreAddsByServiceAndItem: herald + store − herald, no table, by
// service and by the table's item kind, on a new environment and a warm
// one; then the latency of both from every section that measured it.
func TestStoreAddsByServiceAndItem(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	require.NoError(t, sectionCost(context.Background(), opts{out: &out}, fullRun()))
	got := cells(t, out.String(), "What the store adds per million webhook notifications (us-east-1 prices;")
	require.Equal(t, map[string][]string{
		"service": {"calls per batch of 10, new environment", "per million", "calls per batch of 10, warm", "per million"},
		// $0.066067938671875 − $0.0400001; 138.203125 − 120 ms.
		"Lambda (billed per batch +18.2 ms, 128 → 256 MB; section 6)": {"+$0.026", "+$0.026"},
		// 2M WRU a million.
		"DynamoDB: delivered-once (leases)": {"PutItem×20", "$1.250", "PutItem×20", "$1.250"},
		// 0.2M RRU + 0.2M WRU; none on the warm batch.
		"DynamoDB: circuit (origin health reads and writes)": {"GetItem×2, PutItem×2", "$0.150", "none", "$0.000"},
		// 0.4M RRU.
		"DynamoDB: key versions (reads)": {"GetItem×4", "$0.050", "none", "$0.000"},
		// only on the warm batch: 0.2M WRU.
		"DynamoDB: items with sort key lease": {"none", "$0.000", "UpdateItem×2", "$0.125"},
		// two DeleteMessageBatch against one SendMessage per batch.
		"SQS (the processor's own calls)":                      {"+$0.040", "+$0.040"},
		"CloudWatch Logs (+100 B per notification; section 6)": {"+$0.050", "+$0.050"},
		"custom metrics (+2)":                                  {"+$0.060", "+$0.060"},
		"the store adds, all in":                               {"+$1.626", "+$1.551"},
	}, got)
	require.Contains(t, out.String(), "   delivered-once off, circuit kept (section 3, new environment): DynamoDB $0.200 per million, GetItem×6 (health 2, keys 4), PutItem×2 (health 2)\n")

	lat := cells(t, out.String(), "The store, on vs off, in this run")
	require.Equal(t, map[string][]string{
		"": {"no table", "store on", "the store adds"},
		"2. batch of 10, default concurrency, wall (in process)":       {"110.0 ms", "125.0 ms", "+15.0 ms (+14.0–+16.0) turn by turn"},
		"2. batch of 100, default concurrency, wall (in process)":      {"400.0 ms", "430.0 ms", "+30.0 ms (+20.0–+30.0) turn by turn"},
		"2. batch of 10, one at a time, wall (in process)":             {"900.0 ms", "950.0 ms", "+50.0 ms"},
		"4. end to end, notifications/s (drain)":                       {"800", "700", "-100"},
		"4. enqueue → delivery p50 (paced, 80/s each)":                 {"12.0 ms", "15.0 ms", "+3.0 ms"},
		"4. enqueue → delivery p99":                                    {"40.0 ms", "55.0 ms", "+15.0 ms"},
		"6. batch of 10, wall (emulator)":                              {"120.0 ms", "130.0 ms", "+10.0 ms (+9.0–+14.0) round by round"},
		"6. CPU per record, µs (emulator)":                             {"500", "600", "+100 (+90–+140)"},
		"6. log bytes per record (emulator)":                           {"200", "300", "+100 (+99–+106)"},
		"all in per million webhooks (emulator rows, new environment)": {"$0.42", "$2.65", "+$2.226"},
	}, lat)
}

// TestStoreAddsWithoutLatencyFigures: a figure a section did not measure
// (0, none) leaves its row out, in the latency table and among the
// in-process rows of the all-in table.
func TestStoreAddsWithoutLatencyFigures(t *testing.T) {
	t.Parallel()
	r := fullRun()
	r.fan10Store, r.fanAdded10, r.fanAdded100, r.fan10SeqStore = 0, nil, nil, 0
	r.e2eOn.latN, r.rieStore = 0, peerSamples{}
	var out strings.Builder
	require.NoError(t, sectionCost(context.Background(), opts{out: &out}, r))
	all := cells(t, out.String(), "All-in cost")
	require.Contains(t, all, "herald in process, default concurrency, no table")
	require.Contains(t, all, "herald in process, concurrency 1, no table")
	require.NotContains(t, all, "herald in process, default concurrency, store on")
	require.NotContains(t, all, "herald in process, concurrency 1, store on")
	require.Equal(t, map[string][]string{
		"": {"no table", "store on", "the store adds"},
		"all in per million webhooks (emulator rows, new environment)": {"$0.42", "$2.65", "+$2.226"},
	}, cells(t, out.String(), "The store, on vs off"))
}

// TestSectionCostWithoutTheStore: without a store-on row there is no
// store table, nor in-process rows priced as the store; an in-process wall
// not measured leaves its row out; operations without a price are printed
// and then named once in the error.
func TestSectionCostWithoutTheStore(t *testing.T) {
	t.Parallel()
	r := fullRun()
	r.costRows = []costInput{peerTS, heraldOff}
	r.fan10Seq = 0
	r.clean10[noTable] = map[string]int{"SendMessage": 1, "GetSecretValue": 1}
	var out strings.Builder
	err := sectionCost(context.Background(), opts{out: &out}, r)
	require.EqualError(t, err, "operations without a price in the estimate: GetSecretValue")
	all := cells(t, out.String(), "All-in cost")
	require.ElementsMatch(t, []string{"", "Powertools TS (fetch) (emulator)", "herald, no table (emulator)", "herald in process, default concurrency, no table"},
		slices.Collect(maps.Keys(all)))
	require.NotContains(t, out.String(), "What the store adds")
	require.NotContains(t, out.String(), "The store, on vs off")
}

// TestSectionCostNeedsTheEarlierSections: without section 2's batch of 10,
// section 6's rows, section 3's calls or a herald row without the table,
// nothing is printed.
func TestSectionCostNeedsTheEarlierSections(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(*results){
		"no fan-out":     func(r *results) { r.fan10 = 0 },
		"no emulator":    func(r *results) { r.costRows = nil },
		"no calls":       func(r *results) { r.clean10 = nil },
		"no herald rows": func(r *results) { r.costRows = []costInput{peerTS, heraldOn} },
	} {
		r := fullRun()
		change(r)
		var out strings.Builder
		err := sectionCost(context.Background(), opts{out: &out}, r)
		if name == "no herald rows" {
			require.EqualError(t, err, "no herald row from section 6", name)
		} else {
			require.EqualError(t, err, "needs sections 2, 3 and 5", name)
		}
		require.Empty(t, out.String(), name)
	}
}

// TestVCPU128: a 128 MB function's share of a vCPU, one vCPU coming with
// 1,769 MB (Lambda's memory and computing power docs).
func TestVCPU128(t *testing.T) {
	t.Parallel()
	require.InDelta(t, 0.0723572, vcpu128, 1e-7)
}

// TestProvisionedBreakEven: a write capacity unit-hour of $0.00065 is
// $0.181 per million writes at full use, $0.258 at 70 %; it beats
// on demand's $0.625 above 28.9 % use, 759,200 writes a month per unit.
func TestProvisionedBreakEven(t *testing.T) {
	t.Parallel()
	full, use, perWCU := provisioned(1)
	require.InDelta(t, 0.1806, full, 0.0001)
	require.InDelta(t, 0.2889, use, 0.0001)
	require.InDelta(t, 759200, perWCU, 1)
	at70, _, _ := provisioned(0.7)
	require.InDelta(t, 0.2579, at70, 0.0001)
	var out strings.Builder
	printProvisioned(&out, map[string]int{"PutItem delivery": 10, "PutItem delivery_batch": 1, "GetItem health": 1})
	require.Contains(t, out.String(), "herald + store writes 1.10 per notification")
	require.Contains(t, out.String(), "$0.284 per million notifications provisioned at the target, $0.688 on demand, break-even at 690182 notifications a month")
}

// TestTracingPricedPerTraceRecorded: herald with tracing on pays X-Ray's
// $5.00 per million traces recorded for the share of its 100,000
// invocations a million notifications take that it traces, on top of its
// own Lambda time; the all-in table has its rows, the tracing-off row
// stays the reference, and the note says what each ratio adds.
func TestTracingPricedPerTraceRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ratio, want float64
	}{
		{0, 0},
		{0.01, 0.005},  // 1,000 traces
		{0.1, 0.05},    // 10,000
		{1, 0.50},      // 100,000
		{0.0001, 5e-5}, // 10
	} {
		c := heraldOff
		c.traceRatio = tc.ratio
		f, _ := estimate(c, c.batch10, clean10()[noTable])
		require.InDelta(t, tc.want, f.traces, 1e-12, "ratio %v", tc.ratio)
		require.InDelta(t, 0.4200001+tc.want, f.total(), 1e-12, "ratio %v: the traces are in the total", tc.ratio)
	}

	r := fullRun()
	// Tracing at ratio 1: 600 µs of CPU per record, 6 ms a batch at
	// 128/1769 of a vCPU = 82.9 ms, under its 125 ms wall; at 0.01 the
	// wall and CPU of herald with tracing off.
	traced1 := heraldOff
	traced1.label, traced1.traceRatio, traced1.batch10, traced1.cpuUS = "herald, tracing on (ratio 1)", 1, 125*time.Millisecond, 600
	traced := heraldOff
	traced.label, traced.traceRatio = "herald, tracing on (ratio 0.01)", 0.01
	r.costRows = []costInput{heraldOff, traced, traced1, heraldOn, peerTS}
	var out strings.Builder
	require.NoError(t, sectionCost(context.Background(), opts{out: &out}, r))
	got := cells(t, out.String(), "All-in cost per million webhook notifications, us-east-1 prices (arm64 Lambda, batches of 10, ")
	require.Equal(t, []string{"120.0 ms", "128 MB", "$0.040", "$0.160", "200 B", "$0.100", "4: $0.120", "$0.000", "$0.000", "$0.000", "$0.42", "$100.42"}, got["herald, no table (emulator)"])
	require.Equal(t, []string{"120.0 ms", "128 MB", "$0.040", "$0.160", "200 B", "$0.100", "4: $0.120", "$0.000", "$0.000", "$0.005", "$0.43", "$100.43"}, got["herald, tracing on (ratio 0.01), no table (emulator)"])
	// 100,000 × 0.125 s × 0.125 GB = 1,562.5 GB-s × $0.0000133334 + $0.02.
	require.Equal(t, []string{"125.0 ms", "128 MB", "$0.041", "$0.160", "200 B", "$0.100", "4: $0.120", "$0.000", "$0.000", "$0.500", "$0.92", "$100.92"}, got["herald, tracing on (ratio 1), no table (emulator)"])
	require.Contains(t, out.String(), "\n   herald, tracing on (ratio 0.01) adds per million webhook notifications: +$0.005 all in (Lambda +$0.000, billed per batch +0.0 ms; X-Ray +$0.005 for 1000 traces recorded)\n")
	require.Contains(t, out.String(), "\n   herald, tracing on (ratio 1) adds per million webhook notifications: +$0.501 all in (Lambda +$0.001, billed per batch +5.0 ms; X-Ray +$0.500 for 100000 traces recorded)\n")
	// The store's table still compares with herald, tracing off.
	require.Contains(t, out.String(), "== What the store adds per million webhook notifications")
	require.Equal(t, []string{"$0.42", "$2.65", "+$2.226"}, cells(t, out.String(), "The store, on vs off, in this run")["all in per million webhooks (emulator rows, new environment)"])
}

// TestDeployedDefaultPricesEachEnvironment: the deployed default is the
// row without the table plus the delivered-once-off calls of each kind of
// batch; a warm environment's metrics are those without the cold start's
// (one fewer: $0.30 a month over 10 million notifications, $0.03 per
// million), and an eventually consistent read costs half a read unit: two
// of them per batch of 10 are $0.0125 per million.
func TestDeployedDefaultPricesEachEnvironment(t *testing.T) {
	t.Parallel()
	off := heraldOff
	off.warmSeries = off.series - 1
	r := &results{
		warm10:  map[storeMode]map[string]int{onceOff: {}},
		busy10:  map[storeMode]map[string]int{onceOff: {"GetItem(eventual) health": 1, "GetItem(eventual) keys": 1}},
		clean10: map[storeMode]map[string]int{onceOff: {"GetItem(eventual) health": 1, "GetItem(eventual) keys": 1, "PutItem health": 1}},
	}
	var out bytes.Buffer
	deployedDefault(&out, r, off)
	base, _ := estimate(off, off.batch10, nil)
	line := out.String()
	require.Contains(t, line, fmt.Sprintf("warm $%.3f (DynamoDB $0.0000: none)", base.total()-0.03))
	require.Contains(t, line, fmt.Sprintf("busy origin $%.3f (DynamoDB $0.0125: GetItem(eventual)×2 (health 1, keys 1))", base.total()+0.0125))
	// A write unit on top: $0.625 per million writes, one per ten.
	require.Contains(t, line, fmt.Sprintf("for a minute $%.3f (DynamoDB $0.0750: ", base.total()+0.0125+0.0625))
}
