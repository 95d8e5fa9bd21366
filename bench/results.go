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

	// under the RIE
	heraldBatch10, peerBatch10 time.Duration
	heraldRSSKB, peerRSSKB     int64

	// notifications per second end to end and the queue's ceiling
	e2eRate, ceilingRate float64
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
