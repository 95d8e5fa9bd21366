package processor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/notification"
)

// benchBody returns a valid body of about size bytes for channel.
func benchBody(channel string, size int) string {
	switch channel {
	case "email":
		pad := strings.Repeat("x", max(0, size-260))
		return fmt.Sprintf(`{"version":1,"id":"bench-1","channel":"email","metadata":{"tenant":"acme"},"email":{"from":"Acme <noreply@example.com>","to":["jana@example.org"],"subject":"Your invoice","text":%q,"tags":{"kind":"invoice"}}}`, pad)
	default:
		pad := strings.Repeat("x", max(0, size-200))
		payload, _ := json.Marshal(map[string]string{"invoice_id": "INV-2026-0042", "note": pad})
		return fmt.Sprintf(`{"version":1,"id":"bench-1","channel":"webhook","metadata":{"tenant":"acme"},"webhook":{"url":"https://hooks.example.com/acme","event_type":"invoice.paid","payload":%s}}`, payload)
	}
}

// BenchmarkHandleRecord measures herald's own overhead for one record:
// decode, validate, route, log and the batch response, with a sender that
// returns at once.
func BenchmarkHandleRecord(b *testing.B) {
	for _, bc := range []struct {
		name    string
		channel string
		size    int
	}{{"email_1KB", "email", 1 << 10}, {"webhook_1KB", "webhook", 1 << 10}, {"webhook_256KB", "webhook", 256 << 10}} {
		b.Run(bc.name, func(b *testing.B) {
			instant := senderFunc(func(context.Context, *notification.Message) error { return nil })
			p, err := processor.New(nopQueue{}, processor.Config{
				QueueURL: "q", DeadLetterQueueURL: "d", MaxReceiveCount: 13,
				Senders: map[notification.Channel]processor.Sender{notification.ChannelEmail: instant, notification.ChannelWebhook: instant},
				Logger:  slog.New(slog.NewJSONHandler(io.Discard, nil)),
			})
			if err != nil {
				b.Fatal(err)
			}
			ev := events.SQSEvent{Records: []events.SQSMessage{rec("m1", benchBody(bc.channel, bc.size), 1)}}
			b.SetBytes(int64(len(ev.Records[0].Body)))
			b.ReportAllocs()
			for b.Loop() {
				resp, _ := p.Handle(context.Background(), ev)
				if len(resp.BatchItemFailures) != 0 {
					b.Fatal("record failed")
				}
			}
		})
	}
}

// nopQueue is never called by a batch without failures.
type nopQueue struct{ processor.QueueAPI }
