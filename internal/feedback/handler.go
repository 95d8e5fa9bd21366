package feedback

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/metrics"
)

// maxErrorText bounds the rendering failure's error text in the log.
const maxErrorText = 1024

// maxEnvelopeText bounds each EventBridge envelope member (id, source,
// detail-type) an unreadable event's line repeats, and each short member of
// an event's detail a line repeats (message id, configuration set,
// sub-types, template name): a malformed event may carry any size there.
const maxEnvelopeText = 256

// text is s, a short member of an event, fit for a line: scrubbed of
// addresses and at most maxEnvelopeText bytes.
func text(s string) string { return delivery.Truncate(scrub(s), maxEnvelopeText) }

// Config configures a [Handler].
type Config struct {
	// Logger receives one line per event; it must write JSON
	// (slog.JSONHandler) for the metrics to be extracted. Required.
	Logger *slog.Logger
	// Now is the clock of the metrics' timestamp when an event has no time,
	// or one outside the window CloudWatch extracts EMF metrics in.
	// Defaults to time.Now.
	Now func() time.Time
}

// Handler logs SES email sending events. It is safe for concurrent use.
type Handler struct {
	cfg Config
}

// New returns a Handler. It fails when cfg.Logger is nil.
func New(cfg Config) (*Handler, error) {
	if cfg.Logger == nil {
		return nil, errors.New("feedback config: Logger is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Handler{cfg: cfg}, nil
}

// HandleRaw is the function's entry point: it reads the invocation's payload
// as an EventBridge event itself, so that no payload makes the invocation
// fail. Lambda would retry a failed asynchronous invocation and then send the
// event to the function's dead-letter queue, although it would fail the same
// way each time. A payload that is not a JSON object is logged as
// "email_event_unreadable" and counted once ([MetricEmailEventsUnreadable]);
// an envelope member of the wrong type reads as empty, a time that is not
// RFC 3339 as none. The event is then handled as by [Handler.Handle]. It
// always returns nil.
func (h *Handler) HandleRaw(ctx context.Context, raw json.RawMessage) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		why := "the payload is not a JSON object"
		if err != nil {
			why += ": " + err.Error()
		}
		h.unreadable(ctx, events.EventBridgeEvent{}, h.cfg.Now(), why)
		return nil
	}
	str := func(name string) string {
		var s string
		_ = json.Unmarshal(members[name], &s) // absent or not a string: ""
		return s
	}
	ev := events.EventBridgeEvent{
		ID:         str("id"),
		Source:     str("source"),
		DetailType: str("detail-type"),
		Detail:     members["detail"],
	}
	ev.Time, _ = time.Parse(time.RFC3339, str("time")) // invalid: zero, timed by the clock
	return h.Handle(ctx, ev)
}

// Handle logs the SES event ev carries (EventBridge source "aws.ses", detail
// an [Event]). It always returns nil: an event it cannot read (another
// source, a detail that does not decode, an eventType herald does not
// publish, no mail.messageId, no object of its type) is logged as
// "email_event_unreadable", with metric [MetricEmailEventsUnreadable], and
// not retried, as it would fail the same way again.
func (h *Handler) Handle(ctx context.Context, ev events.EventBridgeEvent) error {
	at := metricTime(ev.Time, h.cfg.Now())
	if ev.Source != SourceSES {
		h.unreadable(ctx, ev, at, "source is not "+SourceSES)
		return nil
	}
	var e Event
	if err := json.Unmarshal(ev.Detail, &e); err != nil {
		h.unreadable(ctx, ev, at, "detail: "+err.Error())
		return nil
	}
	k, ok := kindOf(e.EventType)
	if !ok {
		h.unreadable(ctx, ev, at, "eventType "+delivery.Truncate(e.EventType, maxEnvelopeText)+" is not one herald publishes")
		return nil
	}
	if why := incomplete(k, &e); why != "" {
		h.unreadable(ctx, ev, at, "eventType "+k.Record+": "+why)
		return nil
	}
	h.record(ctx, k, &e, at)
	return nil
}

// incomplete returns what an event of kind k lacks of the members SES
// always writes for it: the mail's message id, and the object of its type
// (bounce, complaint, …); "" when it has them.
func incomplete(k Kind, e *Event) string {
	if e.Mail.MessageID == "" {
		return "no mail.messageId"
	}
	var missing bool
	switch k.Type {
	case Bounced:
		missing = e.Bounce == nil
	case Complained:
		missing = e.Complaint == nil
	case Delivered:
		missing = e.Delivery == nil
	case DeliveryDelayed:
		missing = e.DeliveryDelay == nil
	case Rejected:
		missing = e.Reject == nil
	case RenderingFailed:
		missing = e.Failure == nil
	}
	if missing {
		return "no " + k.Object + " object"
	}
	return ""
}

// record writes the line of e, an event of kind k; at is the metrics'
// timestamp.
func (h *Handler) record(ctx context.Context, k Kind, e *Event, at time.Time) {
	attrs := make([]slog.Attr, 0, 20)
	attrs = append(attrs, notificationID(e.Mail.Tags)...)
	attrs = append(attrs, slog.String("ses_message_id", text(e.Mail.MessageID)))
	if cs := first(e.Mail.Tags["ses:configuration-set"]); cs != "" {
		attrs = append(attrs, slog.String("configuration_set", text(cs)))
	}
	var recipients []string
	eventTime := e.Mail.Timestamp
	dims := []metrics.Dimension{{Name: DimEventType, Value: string(k.Type)}}
	sets := [][]string{{DimEventType}}
	switch {
	case e.Bounce != nil:
		b := e.Bounce
		recipients, eventTime = addresses(b.BouncedRecipients), b.Timestamp
		dims = append(dims, metrics.Dimension{Name: DimBounceType, Value: bounceType(b.BounceType)})
		sets = append(sets, []string{DimEventType, DimBounceType})
		attrs = append(attrs, slog.String("bounce_sub_type", text(b.BounceSubType)))
		attrs = appendStatuses(attrs, b.BouncedRecipients)
	case e.Complaint != nil:
		c := e.Complaint
		recipients, eventTime = addresses(c.ComplainedRecipients), c.Timestamp
		if c.ComplaintFeedbackType != "" {
			attrs = append(attrs, slog.String("complaint_feedback_type", text(c.ComplaintFeedbackType)))
		}
		if c.ComplaintSubType != "" {
			attrs = append(attrs, slog.String("complaint_sub_type", text(c.ComplaintSubType)))
		}
	case e.Delivery != nil:
		d := e.Delivery
		recipients, eventTime = d.Recipients, d.Timestamp
		attrs = append(attrs, slog.Int64("processing_time_ms", d.ProcessingTimeMillis))
	case e.DeliveryDelay != nil:
		d := e.DeliveryDelay
		recipients, eventTime = addresses(d.DelayedRecipients), d.Timestamp
		attrs = append(attrs, slog.String("delay_type", text(d.DelayType)), slog.Time("expiration_time", d.ExpirationTime))
		attrs = appendStatuses(attrs, d.DelayedRecipients)
	case e.Reject != nil:
		attrs = append(attrs, slog.String("reject_reason", delivery.Truncate(scrub(e.Reject.Reason), maxErrorText)))
	case e.Failure != nil:
		attrs = append(attrs,
			slog.String("template", text(e.Failure.TemplateName)),
			slog.String("error", delivery.Truncate(scrub(e.Failure.ErrorMessage), maxErrorText)))
	}
	if len(recipients) == 0 {
		recipients = e.Mail.Destination
	}
	attrs = append(attrs, slog.Any("recipient_domains", Domains(recipients)))
	if !eventTime.IsZero() {
		attrs = append(attrs, slog.Time("event_time", eventTime))
	}
	attrs = append(attrs, metrics.Entry{
		Time:       at,
		Dimensions: dims,
		Sets:       sets,
		Metrics:    []metrics.Metric{{Name: MetricEmailEvents, Unit: metrics.Count, Value: 1}},
	}.Attrs()...)
	h.cfg.Logger.LogAttrs(ctx, k.Level, "email_event", attrs...)
}

// unreadable logs an event the handler cannot read: its EventBridge id,
// source and detail-type, never its detail.
func (h *Handler) unreadable(ctx context.Context, ev events.EventBridgeEvent, at time.Time, why string) {
	attrs := []slog.Attr{
		slog.String("eventbridge_id", text(ev.ID)),
		slog.String("source", text(ev.Source)),
		slog.String("detail_type", text(ev.DetailType)),
		slog.String("error", delivery.Truncate(scrub(why), maxErrorText)),
	}
	attrs = append(attrs, metrics.Entry{
		Time:    at,
		Metrics: []metrics.Metric{{Name: MetricEmailEventsUnreadable, Unit: metrics.Count, Value: 1}},
	}.Attrs()...)
	h.cfg.Logger.LogAttrs(ctx, slog.LevelError, "email_event_unreadable", attrs...)
}

// notificationID returns the "id" member decoded from the IDTag tag, or,
// when the tag's value is not one herald writes, the value as "id_tag"
// (scrubbed of addresses, which a malformed event may carry). An email without the tag (not sent
// by herald) gets neither.
func notificationID(tags map[string][]string) []slog.Attr {
	v := first(tags[email.IDTag])
	if v == "" {
		return nil
	}
	id, err := email.ParseIDTagValue(v)
	if err != nil {
		return []slog.Attr{slog.String("id_tag", delivery.Truncate(scrub(v), 256))}
	}
	return []slog.Attr{slog.String("id", id)}
}

// bounceTypePattern is the shape of SES's bounce types ("Permanent",
// "Transient", "Undetermined"): a class, fit for a metric dimension.
var bounceTypePattern = regexp.MustCompile(`^[A-Za-z]{1,64}$`)

// otherBounceType is the bounce_type dimension of a bounceType that is not
// shaped like SES's: a dimension value must be a bounded class of 1–1024
// ASCII characters (metrics.MaxDimensionValueLength), never free text.
const otherBounceType = "other"

func bounceType(t string) string {
	if bounceTypePattern.MatchString(t) {
		return t
	}
	return otherBounceType
}

// metricTime is the metrics' timestamp of an event at eventTime: eventTime,
// or now when it is zero or outside the window in which CloudWatch extracts
// EMF metrics (metrics.MaxTimestampPast before now to
// metrics.MaxTimestampFuture after), as for an event replayed from an
// EventBridge archive.
func metricTime(eventTime, now time.Time) time.Time {
	if eventTime.IsZero() || eventTime.Before(now.Add(-metrics.MaxTimestampPast)) || eventTime.After(now.Add(metrics.MaxTimestampFuture)) {
		return now
	}
	return eventTime
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func addresses(rs []Recipient) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.EmailAddress
	}
	return out
}

// appendStatuses adds the recipients' distinct SMTP enhanced status codes
// as "status".
func appendStatuses(attrs []slog.Attr, rs []Recipient) []slog.Attr {
	var st []string
	seen := map[string]bool{}
	for _, r := range rs {
		if r.Status != "" && !seen[r.Status] && statusPattern.MatchString(r.Status) {
			seen[r.Status] = true
			st = append(st, r.Status)
		}
	}
	if len(st) == 0 {
		return attrs
	}
	return append(attrs, slog.Any("status", st))
}
