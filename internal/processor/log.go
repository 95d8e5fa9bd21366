package processor

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/notification"
)

// This file is the one home of the deliver function's log lines: one
// "notification" line per record that has something to tell, and the
// batch's "batch" lines, which carry every metric in CloudWatch Embedded
// Metric Format (package metrics) and list the notifications of the clean
// path.
//
// Every byte is billed as CloudWatch Logs ingestion, so the clean path,
// a notification delivered on its first receive with nothing to report
// (Listed), gets no line of its own at INFO: its batch line lists it, by
// id with its send's duration and webhook host (75 bytes with an id of 27
// and a host of 17 characters, where its own line took 155). Every other record gets its own line: a
// record that ends well otherwise (delivered after a retry, dropped,
// duplicate, moved, or one whose span was sampled, for its trace_id) a
// compact one: id, channel, outcome, receive_count, webhook_host and the
// send's duration_ms (the saved queries of template.yaml read these), and
// duplicate_of or, for a copy the store says was delivered, delivered_at.
// A record with an error gets full detail: sqs_message_id, error_class,
// error, delay_seconds, store_error, sqs_error and its metadata; at DEBUG
// every record gets its own line, in full detail, and no batch line lists.
// Metrics are not repeated on each line but aggregated per batch: one EMF
// document per channel, outcome and error class, each metric of many
// values an array (the EMF specification allows up to MaxValuesPerMetric
// numbers per metric member).

// The messages ("msg") of the deliver function's lines: the saved queries
// and herald run select on them.
const (
	LineNotification = "notification"
	LineBatch        = "batch"
)

// log writes the record's one line, none for a record its batch line
// lists (isListed).
func (p *Processor) log(ctx context.Context, r *record) {
	debug := p.cfg.Logger.Enabled(ctx, slog.LevelDebug)
	if isListed(r, debug) {
		return
	}
	level := lineLevel(r)
	detail := level > slog.LevelInfo || debug
	attrs := make([]slog.Attr, 0, 12)
	if r.id != "" {
		attrs = append(attrs, slog.String("id", r.id))
	}
	attrs = append(attrs,
		slog.String(metrics.DimChannel, channelOf(r)),
		slog.String(metrics.DimOutcome, string(r.outcome)),
		slog.Int("receive_count", r.receiveCount),
	)
	if host := webhookHost(r); host != "" {
		attrs = append(attrs, slog.String("webhook_host", host))
	}
	if r.sendTime > 0 {
		attrs = append(attrs, slog.Float64("duration_ms", durationMS(r.sendTime)))
	}
	if r.duplicate != nil {
		attrs = append(attrs, slog.String("duplicate_of", r.duplicate.msg.MessageId))
	}
	if !r.deliveredAt.IsZero() {
		attrs = append(attrs, slog.Time("delivered_at", r.deliveredAt.UTC()))
	}
	if detail {
		attrs = append(attrs, slog.String("sqs_message_id", r.msg.MessageId))
	}
	if r.class != "" {
		attrs = append(attrs, slog.String(metrics.DimErrorClass, string(r.class)))
	}
	if r.n != nil && r.queue.Channel != "" && r.n.Channel != r.queue.Channel {
		// A producer sent it to another channel's queue.
		attrs = append(attrs, slog.String("queue_channel", string(r.queue.Channel)))
	}
	if r.movedTo != "" {
		attrs = append(attrs, slog.String("moved_to", r.movedTo))
	}
	if r.traceID != "" {
		// The record's span was sampled: `herald trace` and X-Ray join here.
		attrs = append(attrs, slog.String("trace_id", r.traceID))
	}
	if r.reasonless {
		// Its dead letter has no herald.reason: this line is the reason.
		attrs = append(attrs, slog.Bool("dead_letter_without_reason", true))
	}
	if r.outcome == Retry {
		attrs = append(attrs, slog.Int("delay_seconds", int(r.delay.Seconds())))
	}
	if r.err != nil {
		attrs = append(attrs, slog.String("error", delivery.Truncate(delivery.Detail(r.err), maxErrorText)))
	}
	if r.storeErr != nil {
		attrs = append(attrs, slog.String("store_error", delivery.Truncate(r.storeErr.Error(), maxErrorText)))
	}
	if r.sqsErr != nil {
		attrs = append(attrs, slog.String("sqs_error", delivery.Truncate(r.sqsErr.Error(), maxErrorText)))
	}
	if detail && r.n != nil && len(r.n.Metadata) > 0 {
		meta := make([]slog.Attr, 0, len(r.n.Metadata))
		for k, v := range r.n.Metadata {
			meta = append(meta, slog.String(k, v))
		}
		attrs = append(attrs, slog.Attr{Key: "metadata", Value: slog.GroupValue(meta...)})
	}
	p.cfg.Logger.LogAttrs(ctx, level, LineNotification, attrs...)
}

// MemberDelivered is the member of a "batch" line of delivered records
// that lists its channel's notifications of the clean path: an array of
// Listed. Readers of a notification's fate (herald trace, herald run,
// herald email events, the saved queries) find a delivered notification's
// id there. Not "notifications": JSON decoders that match names without
// case (Go's encoding/json) would read the Notifications metric into it.
const MemberDelivered = "delivered"

// Listed is one notification of the clean path in its batch line's
// MemberDelivered: delivered on its first receive, with no error, no
// store error and no trace sampled (isListed). The line's channel and
// outcome ("delivered") are its own, its receive count 1. The keys are
// short because they repeat for every notification of the line:
// {"id":"…","ms":105.3,"host":"hooks.example.com"}, 31 bytes beside the id
// and host, where the record's own line took 111.
type Listed struct {
	// ID is the notification id.
	ID string `json:"id"`
	// DurationMS is the send's duration, milliseconds to 0.1 ms (the
	// record line's duration_ms).
	DurationMS float64 `json:"ms"`
	// Host is the webhook or chat URL's host (the record line's
	// webhook_host); none for email.
	Host string `json:"host,omitempty"`
}

// isListed reports whether r is on the clean path, listed by its batch
// line instead of a line of its own: delivered on its first receive,
// nothing to report (no error of the store or of SQS, not misrouted, its
// span not sampled: a sampled record's own line carries its trace_id),
// and the logger not at DEBUG.
func isListed(r *record, debug bool) bool {
	return !debug && r.outcome == Delivered && r.receiveCount == 1 && r.id != "" &&
		lineLevel(r) == slog.LevelInfo && r.err == nil && r.traceID == "" &&
		(r.n == nil || r.queue.Channel == "" || r.n.Channel == r.queue.Channel)
}

// lineLevel is the level of r's line: ERROR when an SQS call for it
// failed, WARN when its delivery or a call to the store did, else INFO.
func lineLevel(r *record) slog.Level {
	switch {
	case r.sqsErr != nil:
		return slog.LevelError
	case r.err != nil, r.storeErr != nil:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// webhookHost is the host name of a webhook or chat record's URL, for the
// saved query of the slowest hosts: a log field, never a metric dimension,
// and never the URL (its userinfo, path or query can hold secrets; a chat
// webhook's path or query is its credential). It keeps at most
// maxHostText bytes: the contract does not bound a host's length.
func webhookHost(r *record) string {
	if r.n == nil {
		return ""
	}
	return delivery.Truncate(r.n.Host(), maxHostText)
}

// maxHostText is the longest host name in text form, 253 characters (RFC
// 1035 §2.3.4: 255 octets on the wire); a longer one names nothing.
const maxHostText = 253

// channelUnknown is the channel of a record whose body does not parse.
const channelUnknown = "unknown"

func channelOf(r *record) string {
	if r.n == nil {
		return channelUnknown
	}
	return string(r.n.Channel)
}

// logBatch writes the batch's metrics, before its records' lines: one
// "batch" line per channel, outcome and error class (and per
// MaxValuesPerMetric records of one), each an EMF document with
// Notifications (by channel and outcome, and by channel and error class
// when there is one) and DeliveryDuration of the attempted sends: the
// clean path's two metrics, what an operator needs of it (how many, how
// fast). The rest are written only when there is something to count:
// AgeAtDelivery, AgeSinceCreated (of those whose producer set created_at)
// and ReceiveCountAtDelivery of the records delivered after a retry
// (receive count above 1), DeadLetters, Retries and ReceiveCountAtRetry of
// the retried ones, and DeadLettersTooLarge and DeadLettersWithoutReason
// of the failed records whose dead letter could not fit. A line of
// delivered records lists those of the clean path (MemberDelivered),
// which get no line of their own. A line takes the highest level of its
// records' lines, so the metrics of failures are written wherever their
// lines are (HERALD_LOG_LEVEL WARN).
//
// The first INFO line also carries, by function: Paused 0, when the
// processor has a Pauser (the deliver function; the fan-out writes none),
// and the batch is this environment's first of its queue, or its first after
// PausedQuiet without one, or its first after it paused the queue (a
// resumed queue's first batch is one of these: its event source mapping
// was off; the paused alarm keeps its state while no data comes and
// returns to OK with it); StoreErrors, the records whose call to a store
// failed (noted by a middleware on the record's delivery.Attempt:
// delivered-once, the circuit), and DestinationsDisabled, the destinations
// the batch's failures disabled, each only when not 0. A custom metric costs $0.30 a
// month prorated by the hour: one written only in some hours costs only
// those hours, so a metric the clean path does not write costs nothing
// while all goes well (docs/benchmarks.md). Without an INFO outcome line
// they get an INFO line of their own.
func (p *Processor) logBatch(ctx context.Context, recs []*record) {
	now := p.cfg.Now()
	debug := p.cfg.Logger.Enabled(ctx, slog.LevelDebug)
	// A batch comes from one queue: a channel queue's Paused 0 is by its
	// channel too.
	var queueChannel notification.Channel
	if len(recs) > 0 {
		queueChannel = recs[0].queue.Channel
	}
	pausing := p.cfg.Pauser != nil && slices.ContainsFunc(recs, refuses)
	batch := metrics.PausedEntry(now, string(queueChannel), false)
	// Paused is the metric of a function that pauses its queues (the
	// deliver function's); the fan-out's batches must not answer its alarms.
	if p.cfg.Pauser == nil || !p.quiet.due(queueChannel, now, pausing) {
		batch.Metrics = nil
	}
	var storeErrors, disabled int
	for _, r := range recs {
		if r.storeErr != nil {
			storeErrors++
		}
		if r.disabledOrigin {
			disabled++
		}
	}
	if storeErrors > 0 {
		batch.Metrics = append(batch.Metrics, metrics.Metric{Name: metrics.StoreErrors, Unit: metrics.Count, Value: float64(storeErrors)})
	}
	if disabled > 0 {
		batch.Metrics = append(batch.Metrics, metrics.Metric{Name: metrics.DestinationsDisabled, Unit: metrics.Count, Value: float64(disabled)})
	}
	pending := len(batch.Metrics) > 0
	for _, g := range groupByOutcome(recs) {
		for start := 0; start < len(g); start += metrics.MaxValuesPerMetric {
			part := g[start:min(start+metrics.MaxValuesPerMetric, len(g))]
			level := slog.LevelInfo
			for _, r := range part {
				level = max(level, lineLevel(r))
			}
			es := []metrics.Entry{outcomeMetrics(now, part)}
			// Entries of one line share its members: the batch's channel
			// dimension must be the line's.
			if pending && level == slog.LevelInfo && (queueChannel == "" || channelOf(part[0]) == string(queueChannel)) {
				es, pending = append(es, batch), false
			}
			attrs := metrics.Attrs(es...)
			if ls := listed(part, debug); len(ls) > 0 {
				attrs = append(attrs, slog.Any(MemberDelivered, ls))
			}
			p.cfg.Logger.LogAttrs(ctx, level, LineBatch, attrs...)
		}
	}
	if pending {
		p.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, LineBatch, batch.Attrs()...)
	}
}

// listed is the records of recs on the clean path (isListed), for their
// batch line.
func listed(recs []*record, debug bool) []Listed {
	var out []Listed
	for _, r := range recs {
		if isListed(r, debug) {
			out = append(out, Listed{ID: r.id, DurationMS: durationMS(r.sendTime), Host: webhookHost(r)})
		}
	}
	return out
}

// PausedQuiet is how long a queue goes without a batch in an execution
// environment before its next batch there reports Paused 0 again: the
// paused alarm's period. A pause turns the queue's event source mapping
// off, so the first batch after a resume comes at least this long after
// the last one (or in a new environment, or in the one that paused it),
// and the alarm returns to OK.
const PausedQuiet = time.Minute

// quietQueues is an environment's memory of when each queue (by channel,
// "" for the queue of every channel) last had a batch, for Paused 0. The
// zero value is ready.
type quietQueues struct {
	mu     sync.Mutex
	last   map[notification.Channel]time.Time
	paused map[notification.Channel]bool
}

// due reports whether the batch of the queue of channel at now reports
// Paused 0: its first here, its first after PausedQuiet without one, or
// its first after a batch that paused the queue (pausing).
func (q *quietQueues) due(channel notification.Channel, now time.Time, pausing bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.last == nil {
		q.last, q.paused = map[notification.Channel]time.Time{}, map[notification.Channel]bool{}
	}
	// A queue not seen here has the zero time: its first batch is long
	// after it.
	last, was := q.last[channel], q.paused[channel]
	q.last[channel], q.paused[channel] = now, pausing
	return was || now.Sub(last) >= PausedQuiet
}

// outcomeKey is what one batch line's dimensions take from its records.
type outcomeKey struct {
	channel string
	outcome Outcome
	class   delivery.Class
}

// groupByOutcome splits recs by channel, outcome and error class, in the
// order each first appears.
func groupByOutcome(recs []*record) [][]*record {
	var out [][]*record
	var keys []outcomeKey
	for _, r := range recs {
		k := outcomeKey{channelOf(r), r.outcome, r.class}
		i := 0
		for i < len(keys) && keys[i] != k {
			i++
		}
		if i == len(keys) {
			keys = append(keys, k)
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// outcomeMetrics is the metrics of records that share a channel, outcome
// and error class: at most MaxValuesPerMetric of them.
func outcomeMetrics(now time.Time, recs []*record) metrics.Entry {
	r0 := recs[0]
	e := metrics.Entry{
		Time: now,
		Dimensions: []metrics.Dimension{
			{Name: metrics.DimChannel, Value: channelOf(r0)},
			{Name: metrics.DimOutcome, Value: string(r0.outcome)},
			{Name: metrics.DimErrorClass, Value: string(r0.class)},
		},
		Sets:    outcomeSets,
		Metrics: make([]metrics.Metric, 1, 6),
	}
	n := float64(len(recs))
	e.Metrics[0] = metrics.Metric{Name: metrics.Notifications, Unit: metrics.Count, Value: n}
	var sends []float64
	for _, r := range recs {
		if r.sendTime > 0 {
			sends = append(sends, durationMS(r.sendTime))
		}
	}
	e.Metrics = appendValues(e.Metrics, metrics.DeliveryDuration, metrics.Milliseconds, sends)
	switch r0.outcome {
	case Delivered:
		var atDelivery, sinceCreated, receives []float64
		for _, r := range recs {
			if r.receiveCount <= 1 {
				continue // the clean path: counted and timed above
			}
			if ts, err := strconv.ParseInt(r.msg.Attributes[AttrSentTimestamp], 10, 64); err == nil && ts > 0 {
				atDelivery = append(atDelivery, ageSeconds(r.settledAt.Sub(time.UnixMilli(ts))))
			}
			if r.created {
				sinceCreated = append(sinceCreated, ageSeconds(r.settledAt.Sub(*r.n.CreatedAt)))
			}
			receives = append(receives, float64(r.receiveCount))
		}
		e.Metrics = appendValues(e.Metrics, metrics.AgeAtDelivery, metrics.Seconds, atDelivery)
		e.Metrics = appendValues(e.Metrics, metrics.AgeSinceCreated, metrics.Seconds, sinceCreated)
		e.Metrics = appendValues(e.Metrics, metrics.ReceiveCountAtDelivery, metrics.Count, receives)
	case DeadLettered:
		e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.DeadLetters, Unit: metrics.Count, Value: n})
	case Retry:
		receives := make([]float64, 0, len(recs))
		for _, r := range recs {
			receives = append(receives, float64(r.receiveCount))
		}
		e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.Retries, Unit: metrics.Count, Value: n})
		e.Metrics = appendValues(e.Metrics, metrics.ReceiveCountAtRetry, metrics.Count, receives)
	}
	unfit, reasonless := 0, 0 // unfit: failed, or skipped behind its FIFO group
	for _, r := range recs {
		if r.unfit {
			unfit++
		}
		if r.reasonless {
			reasonless++
		}
	}
	if unfit > 0 {
		e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.DeadLettersTooLarge, Unit: metrics.Count, Value: float64(unfit)})
	}
	if reasonless > 0 {
		e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.DeadLettersWithoutReason, Unit: metrics.Count, Value: float64(reasonless)})
	}
	return e
}

// appendValues adds the metric of values vs, none when vs is empty (a nil
// Values would be one value of 0).
func appendValues(ms []metrics.Metric, name string, unit metrics.Unit, vs []float64) []metrics.Metric {
	if len(vs) == 0 {
		return ms
	}
	return append(ms, metrics.Metric{Name: name, Unit: unit, Values: vs})
}

// outcomeSets are the dimension sets of the outcome metrics; the second is
// dropped when the records have no error class.
var outcomeSets = [][]string{
	{metrics.DimChannel, metrics.DimOutcome},
	{metrics.DimChannel, metrics.DimErrorClass},
}

// durationMS is d in milliseconds to 0.1 ms: finer digits are noise that
// every line and metric value would pay for.
func durationMS(d time.Duration) float64 {
	return math.Round(float64(d)/float64(100*time.Microsecond)) / 10
}

// ageSeconds is d in seconds to 0.01 s.
func ageSeconds(d time.Duration) float64 {
	return math.Round(float64(d)/float64(10*time.Millisecond)) / 100
}
