package main

import (
	"io"
	"log/slog"
	"time"
)

// results carries figures from one section to the ones after it (the cost
// estimate).
type results struct {
	handlerNs float64
	// goal 3's rows (section 1), repeated in the goals table
	parseGoals [][]string

	// fan-out, batch of 10 to the 100 ms receiver
	fan10, fan10Seq time.Duration

	// under the RIE, for the cost estimate: herald first, then the peers
	costRows []costInput

	// AWS operations herald's processor made for a clean batch of 10
	// (section 3), by operation name
	clean10Ops map[string]int

	// notifications per second end to end and the queue's ceiling
	e2eRate, ceilingRate float64
}

// costInput is one function's section-6 medians the cost estimate needs.
type costInput struct {
	label   string
	batch10 time.Duration // wall of a batch of 10 to the 100 ms receiver
	rssKB   int64
	cpuUS   float64 // CPU per record
	// logBytes is what the function wrote to its log per delivered
	// notification (batches of 10); series the custom metrics its EMF
	// defined on the clean path.
	logBytes float64
	series   int
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
