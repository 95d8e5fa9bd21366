package processor

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/metrics"
)

// log writes the record's one structured line, with its metrics in
// CloudWatch Embedded Metric Format (package metrics): Notifications by
// channel and outcome (and by channel and error class on failures),
// DeliveryDuration of an attempted send, AgeAtDelivery, AgeSinceCreated and
// ReceiveCountAtDelivery of a delivered record, DeadLetters, Retries and
// ReceiveCountAtRetry of a retried one, and DeadLettersTooLarge, by channel
// and error class.
func (p *Processor) log(ctx context.Context, r *record) {
	attrs := make([]slog.Attr, 0, 24)
	level := slog.LevelInfo
	if r.id != "" {
		attrs = append(attrs, slog.String("id", r.id))
	}
	attrs = append(attrs,
		slog.Int("receive_count", r.receiveCount),
		slog.String("sqs_message_id", r.msg.MessageId),
	)
	if r.duplicate != nil {
		attrs = append(attrs, slog.String("duplicate_of", r.duplicate.msg.MessageId))
	}
	if r.outcome == Retry {
		attrs = append(attrs, slog.Int("delay_seconds", int(r.delay.Seconds())))
	}
	if r.err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", delivery.Truncate(delivery.Detail(r.err), maxErrorText)))
	}
	if r.sqsErr != nil {
		level = slog.LevelError
		attrs = append(attrs, slog.String("sqs_error", delivery.Truncate(r.sqsErr.Error(), maxErrorText)))
	}
	if host := webhookHost(r); host != "" {
		attrs = append(attrs, slog.String("webhook_host", host))
	}
	if r.n != nil && len(r.n.Metadata) > 0 {
		meta := make([]slog.Attr, 0, len(r.n.Metadata))
		for k, v := range r.n.Metadata {
			meta = append(meta, slog.String(k, v))
		}
		attrs = append(attrs, slog.Attr{Key: "metadata", Value: slog.GroupValue(meta...)})
	}
	attrs = append(attrs, p.recordMetrics(r).Attrs()...)
	p.cfg.Logger.LogAttrs(ctx, level, "notification", attrs...)
}

// webhookHost is the host name of a webhook or chat record's URL, for the
// saved query of the slowest hosts: a log field, never a metric dimension,
// and never the URL (its userinfo, path or query can hold secrets; a chat
// webhook's path or query is its credential).
func webhookHost(r *record) string {
	if r.n == nil {
		return ""
	}
	return r.n.Host()
}

// channelUnknown is the channel dimension of a record whose body does not
// parse.
const channelUnknown = "unknown"

// recordMetrics is the metrics of one record's line. Its dimensions are the
// line's channel, outcome and error_class members.
func (p *Processor) recordMetrics(r *record) metrics.Entry {
	now := p.cfg.Now()
	channel := channelUnknown
	if r.n != nil {
		channel = string(r.n.Channel)
	}
	e := metrics.Entry{
		Time: now,
		Dimensions: []metrics.Dimension{
			{Name: metrics.DimChannel, Value: channel},
			{Name: metrics.DimOutcome, Value: string(r.outcome)},
			{Name: metrics.DimErrorClass, Value: string(r.class)},
		},
		Sets:    recordSets,
		Metrics: make([]metrics.Metric, 1, 5), // at most 5: Notifications, DeliveryDuration and three for a delivery
	}
	e.Metrics[0] = metrics.Metric{Name: metrics.Notifications, Unit: metrics.Count, Value: 1}
	if r.sendTime > 0 {
		e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.DeliveryDuration, Unit: metrics.Milliseconds, Value: ms(r.sendTime)})
	}
	switch r.outcome {
	case Delivered:
		at := r.settledAt
		if ts, err := strconv.ParseInt(r.msg.Attributes["SentTimestamp"], 10, 64); err == nil && ts > 0 {
			e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.AgeAtDelivery, Unit: metrics.Seconds, Value: at.Sub(time.UnixMilli(ts)).Seconds()})
		}
		if r.n.CreatedAt != nil {
			e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.AgeSinceCreated, Unit: metrics.Seconds, Value: at.Sub(*r.n.CreatedAt).Seconds()})
		}
		e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.ReceiveCountAtDelivery, Unit: metrics.Count, Value: float64(r.receiveCount)})
	case DeadLettered:
		e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.DeadLetters, Unit: metrics.Count, Value: 1})
	case Retry:
		e.Metrics = append(e.Metrics,
			metrics.Metric{Name: metrics.Retries, Unit: metrics.Count, Value: 1},
			metrics.Metric{Name: metrics.ReceiveCountAtRetry, Unit: metrics.Count, Value: float64(r.receiveCount)})
	case Failed:
		if r.unfit {
			e.Metrics = append(e.Metrics, metrics.Metric{Name: metrics.DeadLettersTooLarge, Unit: metrics.Count, Value: 1})
		}
	}
	return e
}

// recordSets are the dimension sets of every record's metrics; the second
// is dropped when the record has no error class.
var recordSets = [][]string{
	{metrics.DimChannel, metrics.DimOutcome},
	{metrics.DimChannel, metrics.DimErrorClass},
}

// logBatch writes the invocation's one batch line: BatchRecords, the number
// of records the event source mapping passed, and Paused 0 (this function
// delivers: the paused alarm, which keeps its state while no data comes,
// returns to OK with the first batch after a resume), by function.
func (p *Processor) logBatch(ctx context.Context, n int) {
	e := metrics.Entry{
		Time:       p.cfg.Now(),
		Dimensions: []metrics.Dimension{{Name: metrics.DimFunction, Value: FunctionName}},
		Metrics: []metrics.Metric{
			{Name: metrics.BatchRecords, Unit: metrics.Count, Value: float64(n)},
			{Name: metrics.Paused, Unit: metrics.Count, Value: 0},
		},
	}
	p.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "batch", e.Attrs()...)
}

// FunctionName is the function dimension of the deliver function's metrics.
const FunctionName = "deliver"

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
