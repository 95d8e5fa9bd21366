package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/app"
)

// Public prices in US East (N. Virginia), us-east-1, the only place the
// estimate reads them; looked up December 2026 (docs/benchmarks.md links
// each page). First tiers: a bill large enough to reach the next tier pays
// less per unit.
const (
	region = "us-east-1"
	// AWS Lambda: requests, and duration on arm64 (Graviton).
	lambdaPerMillionRequests = 0.20
	lambdaPerGBSecondARM     = 0.0000133334
	// Amazon SQS standard queue: every API action, per 64 KiB chunk of
	// payload, is a request.
	sqsPerMillionRequests = 0.40
	// CloudWatch Logs: Lambda logs delivered to CloudWatch Logs (Standard
	// log class), per GB ingested.
	logsPerGBIngested = 0.50
	// CloudWatch custom metrics (EMF extracts custom metrics): per metric,
	// a metric name with one set of dimension values, per month.
	metricPerMonth = 0.30
	// AWS KMS: symmetric key requests.
	kmsPerTenThousandRequests = 0.03
	// Amazon DynamoDB on-demand: write and read request units.
	dynamoPerMillionWRU = 0.625
	dynamoPerMillionRRU = 0.125
	// Amazon DynamoDB provisioned capacity: per capacity unit-hour
	// (template parameter StoreCapacity).
	dynamoPerWCUHour = 0.00065
	dynamoPerRCUHour = 0.00013
	// Amazon SES outbound email.
	sesPerThousandEmails = 0.10
	// AWS X-Ray: traces recorded (a trace is one request, all its spans),
	// beyond the free 100,000 a month.
	xrayPerMillionTraces = 5.00
)

// The assumptions the estimate states next to its figures.
const (
	// batchSize is the event source mapping's batch (the template's
	// default), and the producer's SendMessageBatch.
	batchSize = 10
	// monthlyNotifications spreads the custom metrics' monthly price over a
	// volume: at 10 million notifications a month.
	monthlyNotifications = 10e6
	// maxLogBytes is issue 22's goal: log bytes per delivered notification.
	maxLogBytes = 250
)

// lambdaMemoryMB is the configured memory a function with this peak RSS
// needs: at least 128 MB, in 64 MB steps with a quarter of headroom.
func lambdaMemoryMB(rssKB int64) float64 {
	need := float64(rssKB) / 1024 * 1.25
	return math.Max(128, math.Ceil(need/64)*64)
}

// vcpu128 is the share of a vCPU a 128 MB function gets (AWS: one vCPU at
// 1,769 MB, proportionally less below).
const vcpu128 = 128.0 / app.MemoryPerVCPU

// opPrice is the price of one API operation the processor was counted
// making, by its SDK operation name: SQS actions per request, DynamoDB
// writes and reads at one request unit each (items up to 1 KB written, 4 KB
// read strongly consistent), KMS requests. ok is false for an operation the
// estimate does not know, which the table then names.
func opPrice(op string) (float64, string, bool) {
	switch op {
	case "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch",
		"ChangeMessageVisibility", "ChangeMessageVisibilityBatch":
		return sqsPerMillionRequests / 1e6, "sqs", true
	case "PutItem", "UpdateItem", "DeleteItem":
		return dynamoPerMillionWRU / 1e6, "dynamodb", true
	case "GetItem", "Query":
		return dynamoPerMillionRRU / 1e6, "dynamodb", true
	case eventualGetItem:
		// An eventually consistent read of up to 4 KB is half a read
		// request unit (DynamoDB pricing).
		return dynamoPerMillionRRU / 2 / 1e6, "dynamodb", true
	case "Decrypt", "Encrypt", "GenerateDataKey":
		return kmsPerTenThousandRequests / 1e4, "kms", true
	}
	return 0, "", false
}

// autoScalingTarget is the template's write capacity target tracking
// (StoreWriteScalingPolicy): 70 % of the provisioned writes in use.
const autoScalingTarget = 0.70

// hoursPerMonth is AWS's month for hourly prices: 730 hours.
const hoursPerMonth = 730

// provisioned is what provisioned write capacity costs per million writes
// when a share use (0–1] of it is used on average, and the share of use
// above which it costs less than on demand (dynamoPerMillionWRU), and the
// writes a month one write capacity unit must carry to break even.
func provisioned(use float64) (perMillion, breakEvenUse, breakEvenWrites float64) {
	full := dynamoPerWCUHour / 3600 * 1e6 // one write a second for an hour
	return full / use, full / dynamoPerMillionWRU, dynamoPerWCUHour * hoursPerMonth / dynamoPerMillionWRU * 1e6
}

// costFigures is one row of the all-in estimate: per million webhook
// notifications, in dollars, but billed (the billed duration of a batch)
// and memMB (the configured memory).
type costFigures struct {
	billed                                          time.Duration
	memMB                                           float64
	lambda, sqs, logs, metrics, kms, dynamo, traces float64
}

func (c costFigures) total() float64 {
	return c.lambda + c.sqs + c.logs + c.metrics + c.kms + c.dynamo + c.traces
}

// estimate prices a million webhook notifications at batchSize for a
// function measured as c whose batch of 10 took wall, and whose processor
// made calls per clean batch of batchSize itself (keyed by operation name
// or itemOp; nil for none): Lambda requests and GB-seconds at the memory
// the peak RSS needs, billed the larger of wall and the batch's CPU time at
// that memory's vCPU share; SQS, the producer's SendMessageBatch and the
// event source mapping's receive and delete per batch plus the calls;
// CloudWatch Logs ingestion of the bytes written; the custom metrics spread
// over monthlyNotifications; KMS and DynamoDB among the calls; X-Ray's
// traces recorded, one per invocation traced (c.traceRatio). unknown
// lists the calls' operations without a price.
func estimate(c costInput, wall time.Duration, calls map[string]int) (f costFigures, unknown []string) {
	invocations := 1e6 / batchSize
	f.memMB = lambdaMemoryMB(c.rssKB)
	cpuBound := time.Duration(c.cpuUS * batchSize / (f.memMB / app.MemoryPerVCPU) * float64(time.Microsecond))
	f.billed = max(wall, cpuBound)
	gbs := invocations * f.billed.Seconds() * f.memMB / 1024
	f.lambda = gbs*lambdaPerGBSecondARM + invocations/1e6*lambdaPerMillionRequests
	// The producer's SendMessageBatch and the event source mapping's
	// ReceiveMessage and DeleteMessageBatch, one each per batch of 10.
	f.sqs = 3 * invocations * sqsPerMillionRequests / 1e6
	for k, n := range calls {
		op, _ := splitItemOp(k)
		price, service, ok := opPrice(op)
		if !ok {
			unknown = append(unknown, op)
			continue
		}
		d := float64(n) / batchSize * 1e6 * price
		switch service {
		case "sqs":
			f.sqs += d
		case "kms":
			f.kms += d
		case "dynamodb":
			f.dynamo += d
		}
	}
	f.logs = c.logBytes * 1e6 / 1e9 * logsPerGBIngested
	f.metrics = float64(c.series) * metricPerMonth / (monthlyNotifications / 1e6)
	f.traces = invocations * c.traceRatio * xrayPerMillionTraces / 1e6
	slices.Sort(unknown)
	return f, slices.Compact(unknown)
}

// sectionCost estimates the all-in cost per million webhook notifications
// at batch 10, each answered in 100 ms, from this run's figures (estimate),
// for herald without the store's table and with the store on and for every
// Powertools peer; then what the store adds, by service and by the table's
// item kind, and the store's latency on vs off from sections 2, 4 and 6.
func sectionCost(_ context.Context, o opts, r *results) error {
	if r.fan10 == 0 || len(r.costRows) == 0 || r.clean10 == nil {
		return fmt.Errorf("needs sections 2, 3 and 5")
	}
	var unknown []string
	calls := func(c costInput) map[string]int {
		if !c.herald {
			return c.calls
		}
		return r.clean10[c.store]
	}
	row := func(name string, wall time.Duration, c costInput) ([]string, costFigures) {
		f, u := estimate(c, wall, calls(c))
		unknown = append(unknown, u...)
		return []string{name, ms(f.billed), fmt.Sprintf("%.0f MB", f.memMB), fmt.Sprintf("$%.3f", f.lambda), fmt.Sprintf("$%.3f", f.sqs),
			fmt.Sprintf("%.0f B", c.logBytes), fmt.Sprintf("$%.3f", f.logs), fmt.Sprintf("%d: $%.3f", c.series, f.metrics),
			fmt.Sprintf("$%.3f", f.kms), fmt.Sprintf("$%.3f", f.dynamo), fmt.Sprintf("$%.3f", f.traces), fmt.Sprintf("$%.2f", f.total()),
			fmt.Sprintf("$%.2f", f.total()+1e6/1000*sesPerThousandEmails)}, f
	}
	var rows [][]string
	var off, on *costInput
	var offF, onF costFigures
	var traced []tracedRow
	for i, c := range r.costRows {
		label := c.label
		if c.herald && c.store == noTable {
			label += ", no table"
		}
		line, f := row(label+" (emulator)", c.batch10, c)
		rows = append(rows, line)
		switch {
		case c.herald && c.store == noTable && c.traceRatio == 0:
			off, offF = &r.costRows[i], f
		case c.herald && c.store == storeOn:
			on, onF = &r.costRows[i], f
		case c.herald && c.traceRatio > 0:
			traced = append(traced, tracedRow{c, f})
		}
	}
	if off == nil {
		return fmt.Errorf("no herald row from section 6")
	}
	inProcess := func(name string, wall time.Duration, c *costInput) {
		if wall > 0 && c != nil {
			line, _ := row(name, wall, *c)
			rows = append(rows, line)
		}
	}
	inProcess("herald in process, default concurrency, no table", r.fan10, off)
	inProcess("herald in process, default concurrency, store on", r.fan10Store, on)
	inProcess("herald in process, concurrency 1, no table", r.fan10Seq, off)
	inProcess("herald in process, concurrency 1, store on", r.fan10SeqStore, on)
	printTable(o.out, fmt.Sprintf("All-in cost per million webhook notifications, %s prices (arm64 Lambda, batches of %d, receivers answering in 100 ms; "+
		"billed = max(wall, CPU at the memory's vCPU share); SQS: producer send, receive and delete per batch plus the processor's counted calls; "+
		"logs: what the function wrote, Lambda's own platform lines left out; custom metrics of the clean path at %.0f million notifications a month; "+
		"herald's DynamoDB: its calls for a clean batch of 10 on a new environment, section 3; traces: X-Ray's traces recorded, one per invocation traced)",
		region, batchSize, monthlyNotifications/1e6),
		[]string{"", "billed per batch", "memory", "Lambda", "SQS", "log/notification", "CloudWatch Logs", "custom metrics", "KMS", "DynamoDB", "traces (X-Ray)", "webhooks all in", "emails all in (+SES)"}, rows)
	fmt.Fprintf(o.out, "   prices: Lambda $%.2f per million requests, $%.10f per GB-s (arm64); SQS $%.2f per million requests; CloudWatch Logs $%.2f per GB ingested; custom metric $%.2f a month; KMS $%.2f per 10,000 requests; DynamoDB on demand $%.3f per million WRU, $%.3f per million RRU; SES $%.2f per 1,000 emails; X-Ray $%.2f per million traces recorded\n",
		lambdaPerMillionRequests, lambdaPerGBSecondARM, sqsPerMillionRequests, logsPerGBIngested, metricPerMonth, kmsPerTenThousandRequests, dynamoPerMillionWRU, dynamoPerMillionRRU, sesPerThousandEmails, xrayPerMillionTraces)
	fmt.Fprintf(o.out, "   herald's processor, clean batch of 10 on a new environment (section 3): store on %s; delivered-once off %s; no table %s; the plain Powertools peers make no AWS call of their own, the idempotency peer is priced with %s per batch of %d (its documented PutItem and UpdateItem per record, not counted)\n",
		describeItems(r.clean10[storeOn]), describeItems(r.clean10[onceOff]), describeItems(r.clean10[noTable]), describeItems(idempotencyCalls), batchSize)
	deployedDefault(o.out, r, *off)
	if on != nil {
		storeAdds(o.out, r, *off, *on, offF, onF)
	}
	for _, t := range traced {
		fmt.Fprintf(o.out, "   %s adds per million webhook notifications: %s all in (Lambda %s, billed per batch %s; X-Ray %s for %.0f traces recorded)\n",
			t.c.label, signedUSD(t.f.total()-offF.total()), signedUSD(t.f.lambda-offF.lambda), signedMS(t.f.billed-offF.billed), signedUSD(t.f.traces),
			1e6/batchSize*t.c.traceRatio)
	}
	printProvisioned(o.out, r.clean10[storeOn])
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("operations without a price in the estimate: %s", strings.Join(slices.Compact(unknown), ", "))
	}
	return nil
}

// deployedDefault prints what herald costs per million webhooks all in at
// the deployed default: the table on for the circuit and key versions,
// delivered-once for email and chat but not webhooks (section 3's
// "delivered-once off" calls), the rest as off (herald without the table,
// section 6): on a warm environment (its metrics without the cold
// start's), on a new environment of a busy function (the origin's last
// success fresh in the table) and on a new environment's first batch to an
// origin with no delivery in the last minute (the circuit writes its last
// success), with section 6's metrics since the cold start.
func deployedDefault(out io.Writer, r *results, off costInput) {
	warmIn := off
	if off.warmSeries > 0 {
		warmIn.series = off.warmSeries
	}
	warm, _ := estimate(warmIn, off.batch10, nil)
	cold, _ := estimate(off, off.batch10, nil)
	at := func(f costFigures, calls map[string]int) string {
		d, _ := perMillion(calls)
		return fmt.Sprintf("$%.3f (DynamoDB $%.4f: %s)", f.total()+d, d, describeItems(calls))
	}
	fmt.Fprintf(out, "   the deployed default (the table on; delivered-once for email and chat, not webhooks) per million webhooks all in: warm %s; "+
		"new environment, busy origin %s; new environment, first batch to an origin without a delivery for a minute %s\n",
		at(warm, r.warm10[onceOff]), at(cold, r.busy10[onceOff]), at(cold, r.clean10[onceOff]))
}

// tracedRow is a row of herald with tracing on and its figures.
type tracedRow struct {
	c costInput
	f costFigures
}

// storeAdds prints what the store adds per million webhook notifications,
// by service and the table's item kind, on a new environment and on a warm
// one (section 3's two clean batches of 10), and its latency on vs off in
// this run's sections 2, 4 and 6, to out.
func storeAdds(out io.Writer, r *results, off, on costInput, offF, onF costFigures) {
	cold, warm := byKind(r.clean10[storeOn]), byKind(r.warm10[storeOn])
	dollars := func(calls map[string]int) string {
		d, _ := perMillion(calls)
		return fmt.Sprintf("$%.3f", d)
	}
	calls := func(m map[string]int) string {
		if total(m) == 0 {
			return "none"
		}
		var parts []string
		for _, op := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, fmt.Sprintf("%s×%d", op, m[op]))
		}
		return strings.Join(parts, ", ")
	}
	usd := signedUSD
	rows := [][]string{
		{fmt.Sprintf("Lambda (billed per batch %s, %.0f → %.0f MB; section 6)", signedMS(onF.billed-offF.billed), offF.memMB, onF.memMB), "", usd(onF.lambda - offF.lambda), "", usd(onF.lambda - offF.lambda)},
	}
	kinds := slices.Sorted(maps.Keys(cold))
	for _, k := range slices.Sorted(maps.Keys(warm)) {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	coldSum, warmSum := 0.0, 0.0
	for _, k := range kinds {
		if k == "" { // SQS calls, the same with and without the store
			continue
		}
		c, _ := perMillion(cold[k])
		w, _ := perMillion(warm[k])
		coldSum, warmSum = coldSum+c, warmSum+w
		rows = append(rows, []string{"DynamoDB: " + itemPurpose(k), calls(cold[k]), dollars(cold[k]), calls(warm[k]), dollars(warm[k])})
	}
	otherSQS := onF.sqs - offF.sqs
	logs := onF.logs - offF.logs
	metrics := onF.metrics - offF.metrics
	rows = append(rows,
		[]string{"SQS (the processor's own calls)", "", usd(otherSQS), "", usd(otherSQS)},
		[]string{fmt.Sprintf("CloudWatch Logs (%+.0f B per notification; section 6)", on.logBytes-off.logBytes), "", usd(logs), "", usd(logs)},
		[]string{fmt.Sprintf("custom metrics (%+d)", on.series-off.series), "", usd(metrics), "", usd(metrics)},
	)
	base := onF.lambda - offF.lambda + otherSQS + logs + metrics
	rows = append(rows, []string{"the store adds, all in", "", usd(base + coldSum), "", usd(base + warmSum)})
	printTable(out, fmt.Sprintf("What the store adds per million webhook notifications (%s prices; herald + store − herald, no table; one origin per batch): "+
		"on a new environment (every batch reads the origin's health and keys and writes its last success: a function whose batches come "+
		"further apart than the caches last, health 5 s, keys 30 s, success write 1 min) and on a warm one (its next batch)", region),
		[]string{"service", "calls per batch of 10, new environment", "per million", "calls per batch of 10, warm", "per million"}, rows)
	once, _ := perMillion(r.clean10[onceOff])
	fmt.Fprintf(out, "   delivered-once off, circuit kept (section 3, new environment): DynamoDB %s per million, %s\n", fmt.Sprintf("$%.3f", once), describeItems(r.clean10[onceOff]))

	// Latency, on vs off, from this run's sections.
	var lat [][]string
	if r.fan10Store > 0 {
		lat = append(lat, []string{"2. batch of 10, default concurrency, wall (in process)", ms(r.fan10), ms(r.fan10Store), addedRange(r.fanAdded10) + " turn by turn"})
	}
	if len(r.fanAdded100) > 0 {
		lat = append(lat, []string{"2. batch of 100, default concurrency, wall (in process)", ms(r.fan100), ms(r.fan100Store), addedRange(r.fanAdded100) + " turn by turn"})
	}
	if r.fan10SeqStore > 0 {
		lat = append(lat, []string{"2. batch of 10, one at a time, wall (in process)", ms(r.fan10Seq), ms(r.fan10SeqStore), signedMS(r.fan10SeqStore - r.fan10Seq)})
	}
	if r.e2eOn.latN > 0 {
		lat = append(lat,
			[]string{"4. end to end, notifications/s (drain)", fmt.Sprintf("%.0f", r.e2eOff.rate), fmt.Sprintf("%.0f", r.e2eOn.rate), fmt.Sprintf("%+.0f", r.e2eOn.rate-r.e2eOff.rate)},
			[]string{fmt.Sprintf("4. enqueue → delivery p50 (paced, %.0f/s each)", r.e2eOn.pace), ms(r.e2eOff.p50), ms(r.e2eOn.p50), signedMS(r.e2eOn.p50 - r.e2eOff.p50)},
			[]string{"4. enqueue → delivery p99", ms(r.e2eOff.p99), ms(r.e2eOn.p99), signedMS(r.e2eOn.p99 - r.e2eOff.p99)})
	}
	h, s := r.rieHerald, r.rieStore
	if len(s.b10) > 0 {
		lat = append(lat,
			[]string{"6. batch of 10, wall (emulator)", ms(median(h.b10)), ms(median(s.b10)), addedRange(pairedDiffs(h.b10, s.b10)) + " round by round"},
			[]string{"6. CPU per record, µs (emulator)", fmt.Sprintf("%.0f", medianF(h.cpuUS)), fmt.Sprintf("%.0f", medianF(s.cpuUS)), numRange(floatDiffs(h.cpuUS, s.cpuUS), "%+.0f")},
			[]string{"6. log bytes per record (emulator)", fmt.Sprintf("%.0f", medianF(h.logBytes)), fmt.Sprintf("%.0f", medianF(s.logBytes)), numRange(floatDiffs(h.logBytes, s.logBytes), "%+.0f")})
	}
	lat = append(lat, []string{"all in per million webhooks (emulator rows, new environment)", fmt.Sprintf("$%.2f", offF.total()), fmt.Sprintf("$%.2f", onF.total()), usd(onF.total() - offF.total())})
	printTable(out, "The store, on vs off, in this run (LocalStack's moto serves DynamoDB on the same cores as everything else: its latency, not AWS's)",
		[]string{"", "no table", "store on", "the store adds"}, lat)
}

// printProvisioned prints what the store's writes cost with provisioned
// capacity (template parameter StoreCapacity) against on demand, for the
// writes of a clean batch of batchSize (calls, section 3) and at break-even.
func printProvisioned(out io.Writer, calls map[string]int) {
	writes := 0
	for k, n := range calls {
		if op, _ := splitItemOp(k); op == "PutItem" || op == "UpdateItem" || op == "DeleteItem" {
			writes += n
		}
	}
	perNotification := float64(writes) / batchSize
	atTarget, use, perWCU := provisioned(autoScalingTarget)
	atFull, _, _ := provisioned(1)
	fmt.Fprintf(out, "   provisioned capacity (StoreCapacity=provisioned; $%.5f per WCU-hour, $%.5f per RCU-hour): writes cost $%.3f per million at full use, $%.3f at auto scaling's %.0f %% target, against $%.3f on demand; "+
		"break-even at %.0f %% average use, %.0f writes a month per write capacity unit; herald + store writes %.2f per notification (section 3, new environment): "+
		"$%.3f per million notifications provisioned at the target, $%.3f on demand, break-even at %.0f notifications a month per write capacity unit\n",
		dynamoPerWCUHour, dynamoPerRCUHour, atFull, atTarget, autoScalingTarget*100, dynamoPerMillionWRU, use*100, perWCU,
		perNotification, perNotification*atTarget, perNotification*dynamoPerMillionWRU, perWCU/max(perNotification, 1e-9))
}
