package tracing_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/testkit/otlptest"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/notification"
)

type instant struct{}

func (instant) Send(context.Context, *notification.Message) error { return nil }

// nopQueue is never called by a batch without failures.
type nopQueue struct{ processor.QueueAPI }

// BenchmarkTracedBatch is what tracing adds to herald's own work on a
// batch of 10 webhook records (decode, route, log, respond; a sender that
// returns at once), the invocation's export included: off (no tracer, the
// template's default), on at the default ratio (0.01) and on for every
// invocation (each exporting its 12 spans to a local OTLP/HTTP receiver
// before returning). docs/benchmarks.md, "Tracing", has the numbers.
func BenchmarkTracedBatch(b *testing.B) {
	for _, bc := range []struct {
		name  string
		ratio float64 // below 0: off
	}{{"off", -1}, {"ratio_0.01", 0.01}, {"ratio_1", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			var tr *tracing.Tracing
			if bc.ratio >= 0 {
				rcv := otlptest.New(b)
				var err error
				tr, err = tracing.New(b.Context(), tracing.Config{Mode: tracing.OTLP, Endpoint: rcv.Endpoint(), SampleRatio: bc.ratio}, tracing.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
			}
			cfg := processor.Config{
				QueueURL: "q", DeadLetterQueueURL: "d", MaxReceiveCount: 13,
				Senders: map[notification.Channel]processor.Sender{notification.ChannelWebhook: tr.Sender(instant{})},
				Logger:  slog.New(slog.NewJSONHandler(io.Discard, nil)),
			}
			if tr != nil {
				cfg.Tracer = tr
			}
			p, err := processor.New(nopQueue{}, cfg)
			if err != nil {
				b.Fatal(err)
			}
			handle := tr.Handler(p.Handle, nil)
			var ev events.SQSEvent
			tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			for i := range 10 {
				ev.Records = append(ev.Records, events.SQSMessage{
					MessageId: fmt.Sprintf("m%d", i), ReceiptHandle: "rh",
					Body:              fmt.Sprintf(`{"version":1,"id":"n%d","channel":"webhook","webhook":{"url":"https://hooks.example.com/acme","event_type":"invoice.paid","payload":{"invoice_id":"INV-2026-0042"}}}`, i),
					Attributes:        map[string]string{"ApproximateReceiveCount": "1"},
					MessageAttributes: map[string]events.SQSMessageAttribute{"traceparent": {DataType: "String", StringValue: &tp}},
				})
			}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := handle(context.Background(), ev)
				if err != nil || len(resp.BatchItemFailures) != 0 {
					b.Fatal("batch failed")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/record")
		})
	}
}

// BenchmarkNew is tracing's part of a cold start: the exporter and the
// provider (HERALD_TRACING=otlp or xray; off builds nothing).
func BenchmarkNew(b *testing.B) {
	rcv := otlptest.New(b)
	b.ReportAllocs()
	for b.Loop() {
		tr, err := tracing.New(b.Context(), tracing.Config{Mode: tracing.OTLP, Endpoint: rcv.Endpoint(), SampleRatio: 0.01}, tracing.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = tr.Shutdown(context.Background())
		b.StartTimer()
	}
}
