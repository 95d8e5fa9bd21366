package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/notification"
)

// delivery is the body of the event's delivery to subscriber s
// (docs/endpoints.md, "Events and fan-out"): id endpoint.DeliveryID, the
// event's tenant and id, its created_at as the progress item keeps it,
// expires_at and metadata; for a webhook endpoint the event's type and
// payload, for a chat endpoint a text "<type> for <tenant>: <payload>" cut
// to the service's limit. It names no URL, secret or header: the deliver
// function reads them from the endpoint store.
func (r *run) delivery(s endpoint.Subscriber) ([]byte, error) {
	ev := r.m.Event
	created := r.p.createdAt.UTC()
	d := notification.Message{
		Version:   notification.Version,
		ID:        endpoint.DeliveryID(r.m.ID, s.ID),
		CreatedAt: &created,
		ExpiresAt: r.m.ExpiresAt,
		Metadata:  r.m.Metadata,
		Tenant:    ev.Tenant,
		EventID:   r.m.ID,
	}
	switch s.Kind {
	case endpoint.KindWebhook:
		d.Channel = notification.ChannelWebhook
		d.Webhook = &notification.Webhook{Endpoint: s.ID, EventType: ev.Type, Payload: ev.Payload}
	case endpoint.KindSlack, endpoint.KindDiscord, endpoint.KindTeams:
		d.Channel = notification.ChannelChat
		d.Chat = &notification.Chat{Endpoint: s.ID, Text: ChatText(ev, notification.ChatTextLimit(notification.ChatService(s.Kind)))}
	default:
		// An endpoint of a kind this version does not know: the table
		// was written by a newer herald. Retried, so that a rollback
		// does not lose the event.
		return nil, delivery.Transient(ClassEnqueueFailed, fmt.Errorf("event %s: endpoint %s is of kind %q, unknown to this version", r.m.ID, s.ID, s.Kind))
	}
	return json.Marshal(&d)
}

// ChatText is the text of event ev's chat delivery: "<type> for <tenant>:
// <payload as compact JSON>", cut to limit characters (Unicode code
// points), the last of them "…" when cut.
func ChatText(ev *notification.Event, limit int) string {
	var payload bytes.Buffer
	if err := json.Compact(&payload, ev.Payload); err != nil {
		payload.Reset()
		payload.Write(ev.Payload) // parsed already: not reached
	}
	text := ev.Type + " for " + ev.Tenant + ": " + payload.String()
	if utf8.RuneCountInString(text) <= limit {
		return text
	}
	runes := []rune(text)
	return string(runes[:limit-1]) + "…"
}

// FunctionName is the fan-out function's name in its metrics' function
// dimension.
const FunctionName = "fanout"

// LineFanout is the message ("msg") of the fan-out's line.
const LineFanout = "fanout"

// log writes the one line of this invocation's work on the event, with its
// metrics (EMF, dimension function=fanout): EventsFannedOut when the
// fan-out finished, DeliveriesEnqueued (this invocation's),
// EventsWithoutSubscribers when no endpoint asked for it. The tenant is the
// application's customer id, not a secret; no URL is known here.
func (r *run) log(ctx context.Context, outcome string) {
	ev := r.m.Event
	finished := outcome == OutcomeFannedOut || outcome == OutcomeNoSubscribers
	ms := []metrics.Metric{{Name: metrics.DeliveriesEnqueued, Unit: metrics.Count, Value: float64(r.enqueued)}}
	if finished {
		ms = append(ms, metrics.Metric{Name: metrics.EventsFannedOut, Unit: metrics.Count, Value: 1})
	}
	if outcome == OutcomeNoSubscribers {
		ms = append(ms, metrics.Metric{Name: metrics.EventsWithoutSubscribers, Unit: metrics.Count, Value: 1})
	}
	emf := metrics.Entry{
		Time:       r.f.cfg.Now(),
		Dimensions: []metrics.Dimension{{Name: metrics.DimFunction, Value: FunctionName}},
		Metrics:    ms,
	}
	attrs := []slog.Attr{
		slog.String("id", r.m.ID),
		slog.String("tenant", ev.Tenant),
		slog.String("event_type", ev.Type),
		slog.String("fanout", outcome),
		slog.Int64("total", r.p.enqueued),
		slog.Float64("duration_ms", float64(r.f.cfg.Now().Sub(r.start).Microseconds())/1000),
	}
	if ev.Endpoint != "" {
		attrs = append(attrs, slog.String("endpoint", ev.Endpoint))
	}
	r.f.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, LineFanout, append(attrs, emf.Attrs()...)...)
}
