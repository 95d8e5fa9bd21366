package main

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Public prices (us-east-1) used by the estimate.
const (
	lambdaGBSecondARM = 0.0000133334 // $ per GB-s, arm64
	lambdaPerMillion  = 0.20         // $ per 1M requests
	sqsPerMillion     = 0.40         // $ per 1M requests (standard queue)
	sesPerThousand    = 0.10         // $ per 1000 emails
	batchSize         = 10
)

// lambdaMemoryMB is the configured memory a function with this peak RSS
// needs: at least 128 MB, in 64 MB steps with a quarter of headroom.
func lambdaMemoryMB(rssKB int64) float64 {
	need := float64(rssKB) / 1024 * 1.25
	return math.Max(128, math.Ceil(need/64)*64)
}

// sectionCost estimates the cost per million webhook notifications at
// batch 10, each record answered after 100 ms, from this run's figures,
// next to the same batch delivered one at a time.
func sectionCost(_ context.Context, _ opts, r *results) error {
	if r.fan10 == 0 || r.heraldRSSKB == 0 {
		return fmt.Errorf("needs sections 2 and 5")
	}
	invocations := 1e6 / batchSize
	// SQS requests per notification from the event source mapping: one
	// receive and one delete per batch; change-visibility only on failures.
	sqsCalls := 2 * invocations
	row := func(name string, d time.Duration, rssKB int64) []string {
		mem := lambdaMemoryMB(rssKB)
		gbs := invocations * d.Seconds() * mem / 1024
		lambda := gbs*lambdaGBSecondARM + invocations/1e6*lambdaPerMillion
		sqs := sqsCalls / 1e6 * sqsPerMillion
		return []string{name, ms(d), fmt.Sprintf("%.0f MB", mem), fmt.Sprintf("%.0f", gbs), fmt.Sprintf("$%.3f", lambda), fmt.Sprintf("$%.3f", sqs),
			fmt.Sprintf("$%.2f", lambda+sqs), fmt.Sprintf("$%.2f", lambda+sqs+1e6/1000*sesPerThousand)}
	}
	rows := [][]string{row("herald (default concurrency)", r.fan10, r.heraldRSSKB)}
	if r.fan10Seq > 0 {
		rows = append(rows, row("one at a time (concurrency 1)", r.fan10Seq, r.heraldRSSKB))
	}
	if r.peerBatch10 > 0 {
		rows = append(rows, row("peer (Powertools, sequential)", r.peerBatch10, r.peerRSSKB))
	}
	table("Cost per million notifications (arm64 Lambda at batch 10, receivers answering in 100 ms; SQS: receive + delete per batch; email adds SES $100)",
		[]string{"", "batch duration", "memory", "GB-s", "Lambda", "SQS", "webhooks total", "emails total (+SES)"}, rows)
	return nil
}
