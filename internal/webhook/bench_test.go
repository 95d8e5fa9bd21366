package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/webhook"
)

// BenchmarkSend1KB measures one attempt with a 1 KiB payload to a local
// server answering 204 at once, over a reused TLS connection.
func BenchmarkSend1KB(b *testing.B) {
	srv, _ := newServer(b, status(http.StatusNoContent))
	s, err := webhook.NewSender(webhook.Config{
		Secret:          testSecret,
		TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig,
		AllowCIDRs:      loopback,
	})
	if err != nil {
		b.Fatal(err)
	}
	m := message(srv.URL + "/hook")
	m.Webhook.Payload = json.RawMessage(`{"blob":"` + strings.Repeat("x", 1024-len(`{"blob":""}`)) + `"}`)
	ctx := context.Background()

	b.SetBytes(int64(len(m.Webhook.Payload)))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Send(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}
