package main

import (
	"context"
	"fmt"
	"math"
	"sort"
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
	// Amazon SES outbound email.
	sesPerThousandEmails = 0.10
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
	case "Decrypt", "Encrypt", "GenerateDataKey":
		return kmsPerTenThousandRequests / 1e4, "kms", true
	}
	return 0, "", false
}

// sectionCost estimates the all-in cost per million webhook notifications
// at batch 10, each answered in 100 ms, from this run's figures: Lambda
// (requests and GB-seconds at the memory the peak RSS needs, billed
// duration the larger of the batch's wall time and its CPU time at that
// memory's vCPU share), SQS (the producer's SendMessageBatch, the event
// source mapping's receive and delete per batch, and the processor's own
// calls counted in section 3: visibility changes, dead-letter sends),
// CloudWatch Logs ingestion of the bytes each function wrote per
// notification, the custom metrics its EMF defined on the clean path spread
// over monthlyNotifications, KMS and DynamoDB requests among the counted
// calls.
func sectionCost(_ context.Context, _ opts, r *results) error {
	if r.fan10 == 0 || len(r.costRows) == 0 || r.clean10Ops == nil {
		return fmt.Errorf("needs sections 2, 3 and 5")
	}
	invocations := 1e6 / batchSize
	// The producer's SendMessageBatch and the event source mapping's
	// ReceiveMessage and DeleteMessageBatch, one each per batch of 10.
	queueSide := 3 * invocations * sqsPerMillionRequests / 1e6
	// The processor's own calls per notification, priced by service.
	own := map[string]float64{}
	var unknown []string
	for op, n := range r.clean10Ops {
		price, service, ok := opPrice(op)
		if !ok {
			unknown = append(unknown, op)
			continue
		}
		own[service] += float64(n) / batchSize * 1e6 * price
	}
	sort.Strings(unknown)
	row := func(name string, wall time.Duration, c costInput, processorCalls bool) []string {
		mem := lambdaMemoryMB(c.rssKB)
		cpuBound := time.Duration(c.cpuUS * batchSize / (mem / app.MemoryPerVCPU) * float64(time.Microsecond))
		d := max(wall, cpuBound)
		gbs := invocations * d.Seconds() * mem / 1024
		lambda := gbs*lambdaPerGBSecondARM + invocations/1e6*lambdaPerMillionRequests
		sqs, kms, dynamo := queueSide, 0.0, 0.0
		if processorCalls {
			sqs, kms, dynamo = sqs+own["sqs"], own["kms"], own["dynamodb"]
		}
		logs := c.logBytes * 1e6 / 1e9 * logsPerGBIngested
		metrics := float64(c.series) * metricPerMonth / (monthlyNotifications / 1e6)
		total := lambda + sqs + logs + metrics + kms + dynamo
		return []string{name, ms(d), fmt.Sprintf("%.0f MB", mem), fmt.Sprintf("$%.3f", lambda), fmt.Sprintf("$%.3f", sqs),
			fmt.Sprintf("%.0f B", c.logBytes), fmt.Sprintf("$%.3f", logs), fmt.Sprintf("%d: $%.3f", c.series, metrics),
			fmt.Sprintf("$%.3f", kms), fmt.Sprintf("$%.3f", dynamo), fmt.Sprintf("$%.2f", total),
			fmt.Sprintf("$%.2f", total+1e6/1000*sesPerThousandEmails)}
	}
	var rows [][]string
	for i, c := range r.costRows {
		rows = append(rows, row(c.label+" (emulator)", c.batch10, c, i == 0))
	}
	h := r.costRows[0]
	rows = append(rows, row("herald in process, default concurrency", r.fan10, h, true))
	if r.fan10Seq > 0 {
		rows = append(rows, row("herald in process, concurrency 1", r.fan10Seq, h, true))
	}
	table(fmt.Sprintf("All-in cost per million webhook notifications, %s prices (arm64 Lambda, batches of %d, receivers answering in 100 ms; "+
		"billed = max(wall, CPU at the memory's vCPU share); SQS: producer send, receive and delete per batch plus the processor's counted calls; "+
		"logs: what the function wrote, Lambda's own platform lines left out; custom metrics of the clean path at %.0f million notifications a month)",
		region, batchSize, monthlyNotifications/1e6),
		[]string{"", "billed per batch", "memory", "Lambda", "SQS", "log/notification", "CloudWatch Logs", "custom metrics", "KMS", "DynamoDB", "webhooks all in", "emails all in (+SES)"}, rows)
	fmt.Printf("   prices: Lambda $%.2f per million requests, $%.10f per GB-s (arm64); SQS $%.2f per million requests; CloudWatch Logs $%.2f per GB ingested; custom metric $%.2f a month; KMS $%.2f per 10,000 requests; DynamoDB on demand $%.3f per million WRU, $%.3f per million RRU; SES $%.2f per 1,000 emails\n",
		lambdaPerMillionRequests, lambdaPerGBSecondARM, sqsPerMillionRequests, logsPerGBIngested, metricPerMonth, kmsPerTenThousandRequests, dynamoPerMillionWRU, dynamoPerMillionRRU, sesPerThousandEmails)
	fmt.Printf("   herald's processor, clean batch of 10 (section 3): %s; the Powertools peers make no AWS call of their own\n", describe(r.clean10Ops))
	if len(unknown) > 0 {
		return fmt.Errorf("operations without a price in the estimate: %s", strings.Join(unknown, ", "))
	}
	return nil
}
