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

	// fan-out, batch of 10 to the 100 ms receiver, without the store's
	// table and with the store on
	fan10, fan10Seq           time.Duration
	fan10Store, fan10SeqStore time.Duration
	// batch of 100 at the default concurrency, without and with the store
	fan100, fan100Store time.Duration
	// what the store added to a batch of 10 and of 100 at the default
	// concurrency, turn by turn (section 2)
	fanAdded10, fanAdded100 []time.Duration

	// under the RIE, for the cost estimate: herald first, then the peers
	costRows []costInput

	// AWS operations herald's processor made for a clean batch of 10
	// (section 3) with the store on, by operation name
	clean10Ops map[string]int
	// the same by store mode, keyed by itemOp for DynamoDB calls (the
	// operation and the kind of item): on a new environment (clean10) and
	// on its second batch (warm10), and on a new environment whose origin
	// another environment delivered to just before (busy10)
	clean10, warm10, busy10 map[storeMode]map[string]int

	// the events section's fan-outs, by tenant size
	eventRows []eventRow

	// notifications per second end to end and the queue's ceiling
	e2eRate, ceilingRate float64
	// end to end without the store's table and with the store on
	e2eOff, e2eOn e2eRun
	// section 6's rounds of herald without the store's table and with the
	// store on
	rieHerald, rieStore peerSamples
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
	// warmSeries is the custom metrics of a warm environment's clean
	// batches (no cold start's Paused 0).
	warmSeries int
	// herald marks herald's rows, priced with the calls its processor made
	// in section 3 with store (the Powertools peers make none of their own)
	herald bool
	store  storeMode
	// calls are a peer's own AWS calls per clean batch of batchSize, by
	// itemOp (herald's come from section 3).
	calls map[string]int
	// traceRatio is herald's tracing sample ratio: the share of
	// invocations whose trace X-Ray records; 0 is tracing off.
	traceRatio float64
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
