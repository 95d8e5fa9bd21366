package tracing

import (
	"context"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/notification"
)

// Sender wraps next so that each send is a span (SpanSend, a client span,
// child of the record's) with the channel, the notification id, the
// destination's scheme and host (a webhook's or chat webhook's; never its
// path, query or credentials; an email's recipients never), and, when it
// failed, the error class, whether it is permanent and a Retry-After. The
// span is in the context next is given: a webhook or chat POST carries it
// as traceparent (package tracecontext). A nil t returns next itself.
// next's DestinationKeyer, when it has one, is kept.
func (t *Tracing) Sender(next processor.Sender) processor.Sender {
	if t == nil {
		return next
	}
	s := &sender{next: next, t: t}
	if k, ok := next.(processor.DestinationKeyer); ok {
		return &keyedSender{sender: s, keyer: k}
	}
	return s
}

type sender struct {
	next processor.Sender
	t    *Tracing
}

var _ processor.Sender = (*sender)(nil)

func (s *sender) Send(ctx context.Context, m *notification.Message) error {
	attrs := append(make([]attribute.KeyValue, 0, 4),
		KeyChannel.String(string(m.Channel)),
		KeyNotificationID.String(m.ID))
	attrs = append(attrs, destination(m)...)
	ctx, span := s.t.Tracer().Start(ctx, SpanSend, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	err := s.next.Send(ctx, m)
	if err == nil {
		span.SetAttributes(KeyOutcome.String("sent"))
		return nil
	}
	permanent, class, retryAfter := delivery.Classify(err)
	span.SetAttributes(KeyOutcome.String("failed"),
		KeyErrorType.String(string(class)), KeyErrorClass.String(string(class)),
		KeyPermanent.Bool(permanent))
	if retryAfter > 0 {
		span.SetAttributes(KeyRetryAfterMS.Int64(retryAfter.Milliseconds()))
	}
	// The class, never the error's text: it can hold a URL or an address.
	span.SetStatus(codes.Error, string(class))
	return err
}

// keyedSender is a sender whose next keys its destinations' health.
type keyedSender struct {
	*sender
	keyer processor.DestinationKeyer
}

func (s *keyedSender) DestinationKey(m *notification.Message) string {
	return s.keyer.DestinationKey(m)
}

// destination returns server.address and url.scheme of a webhook's or a
// chat webhook's URL: nothing else of it.
func destination(m *notification.Message) []attribute.KeyValue {
	raw := m.DestinationURL()
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	return []attribute.KeyValue{KeyServerAddress.String(u.Hostname()), KeyURLScheme.String(u.Scheme)}
}
