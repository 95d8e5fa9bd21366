package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/heraldhq/herald/internal/app"
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

// vcpu128 is the share of a vCPU a 128 MB function gets (AWS: one vCPU at
// 1,769 MB, proportionally less below).
const vcpu128 = 128.0 / app.MemoryPerVCPU

// sectionCost estimates the cost per million webhook notifications at
// batch 10, each record answered after 100 ms, from this run's figures:
// herald and the peers under the emulator (section 6), and herald in
// process at its default concurrency and one record at a time (section 2).
// A batch's billed duration is taken as the larger of its measured wall
// time and its CPU time at the memory size's vCPU share (arithmetic): a
// small function cannot finish before its CPU work is done.
func sectionCost(_ context.Context, _ opts, r *results) error {
	if r.fan10 == 0 || len(r.costRows) == 0 {
		return fmt.Errorf("needs sections 2 and 5")
	}
	invocations := 1e6 / batchSize
	// SQS requests per notification from the event source mapping: one
	// receive and one delete per batch; change-visibility only on failures.
	sqsCalls := 2 * invocations
	row := func(name string, wall time.Duration, rssKB int64, cpuUS float64) []string {
		mem := lambdaMemoryMB(rssKB)
		cpuBound := time.Duration(cpuUS * batchSize / (mem / app.MemoryPerVCPU) * float64(time.Microsecond))
		d := max(wall, cpuBound)
		gbs := invocations * d.Seconds() * mem / 1024
		lambda := gbs*lambdaGBSecondARM + invocations/1e6*lambdaPerMillion
		sqs := sqsCalls / 1e6 * sqsPerMillion
		return []string{name, ms(wall), ms(cpuBound), fmt.Sprintf("%.0f MB", mem), fmt.Sprintf("%.0f", gbs), fmt.Sprintf("$%.3f", lambda), fmt.Sprintf("$%.3f", sqs),
			fmt.Sprintf("$%.2f", lambda+sqs), fmt.Sprintf("$%.2f", lambda+sqs+1e6/1000*sesPerThousand)}
	}
	var rows [][]string
	for _, c := range r.costRows {
		rows = append(rows, row(c.label+" (emulator)", c.batch10, c.rssKB, c.cpuUS))
	}
	h := r.costRows[0]
	rows = append(rows, row("herald in process, default concurrency", r.fan10, h.rssKB, h.cpuUS))
	if r.fan10Seq > 0 {
		rows = append(rows, row("herald in process, concurrency 1", r.fan10Seq, h.rssKB, h.cpuUS))
	}
	table("Cost per million notifications (arm64 Lambda at batch 10, receivers answering in 100 ms; billed duration = max(wall, CPU at the memory's vCPU share); SQS: receive + delete per batch; email adds SES $100)",
		[]string{"", "batch wall", "batch CPU at memory share", "memory", "GB-s", "Lambda", "SQS", "webhooks total", "emails total (+SES)"}, rows)
	return nil
}
