package processor

import (
	"context"
	"log/slog"

	"github.com/heraldhq/herald/internal/delivery"
)

// log writes the record's one structured line.
func (p *Processor) log(ctx context.Context, r *record) {
	attrs := make([]slog.Attr, 0, 12)
	level := slog.LevelInfo
	if r.id != "" {
		attrs = append(attrs, slog.String("id", r.id))
	}
	if r.n != nil {
		attrs = append(attrs, slog.String("channel", string(r.n.Channel)))
	}
	attrs = append(attrs,
		slog.String("outcome", string(r.outcome)),
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
		attrs = append(attrs, slog.String("error_class", string(r.class)), slog.String("error", delivery.Truncate(delivery.Detail(r.err), maxErrorText)))
	}
	if r.sqsErr != nil {
		level = slog.LevelError
		attrs = append(attrs, slog.String("sqs_error", delivery.Truncate(r.sqsErr.Error(), maxErrorText)))
	}
	if r.n != nil && len(r.n.Metadata) > 0 {
		meta := make([]any, 0, len(r.n.Metadata))
		for k, v := range r.n.Metadata {
			meta = append(meta, slog.String(k, v))
		}
		attrs = append(attrs, slog.Group("metadata", meta...))
	}
	p.cfg.Logger.LogAttrs(ctx, level, "notification", attrs...)
}
