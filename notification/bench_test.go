package notification_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// The benchmark bodies are about 1 KiB, the size of a typical notification.
// make bench (bench/) runs BenchmarkParse1KiB and BenchmarkPlainDecode1KiB
// and prints their ratio against the goal of issue 12 (Parse at most 1.5 ×
// one plain encoding/json decode of the same body into a Message, at most
// 40 allocations): keep these names stable.
const (
	benchWebhook1KiB = `{
  "version": 1,
  "id": "evt_2Yq8mT4vN1xK7pR3sW9zB6cD",
  "channel": "webhook",
  "created_at": "2026-11-30T09:20:11Z",
  "expires_at": "2026-12-01T09:20:11Z",
  "metadata": {"tenant": "acme", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"},
  "webhook": {
    "url": "https://hooks.example.com/acme/billing?source=herald",
    "event_type": "invoice.paid",
    "headers": {"X-Tenant": "acme", "X-Request-Source": "billing-service"},
    "payload": {
      "invoice_id": "INV-2026-0042",
      "amount_minor": 125000,
      "currency": "EUR",
      "customer": {"id": "cus_9s8d7f6g5h4j", "name": "Société Générale d’Exemple", "country": "FR", "vat_id": "FR12345678901"},
      "lines": [
        {"sku": "PLAN-PRO", "description": "Pro plan, monthly", "qty": 1, "unit_minor": 100000},
        {"sku": "SEAT-EXTRA", "description": "Additional seats", "qty": 5, "unit_minor": 5000}
      ],
      "period": {"start": "2026-11-01T00:00:00Z", "end": "2026-11-30T23:59:59Z"},
      "paid_at": "2026-11-30T09:20:09Z",
      "payment_method": {"type": "sepa_debit", "last4": "3000"},
      "tags": ["renewal", "eu"]
    }
  }
}`
	benchEmail1KiB = `{
  "version": 1,
  "id": "ntf_01HZY3M0A1B2C3D4E5F6G7H8J9",
  "channel": "email",
  "created_at": "2026-11-30T09:20:11Z",
  "metadata": {"tenant": "acme", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"},
  "email": {
    "from": "Acme Billing <billing@example.com>",
    "to": ["ops@example.org", "Finance Team <finance@example.org>"],
    "cc": ["audit@example.net"],
    "reply_to": ["support@example.com"],
    "subject": "Invoice INV-2026-0042 is overdue (3 days)",
    "text": "Hello,\n\ninvoice INV-2026-0042 for 1.250,00 EUR was due on 2026-11-27 and is now 3 days overdue.\nPlease arrange payment at your earliest convenience or reply to this message if you believe this is an error.\n\nThank you,\nAcme Billing",
    "html": "<p>Hello,</p><p>invoice <b>INV-2026-0042</b> for 1.250,00 EUR was due on 2026-11-27 and is now 3 days overdue.</p><p>Thank you,<br>Acme Billing</p>",
    "configuration_set": "transactional",
    "tags": {"kind": "dunning", "tenant": "acme"},
    "headers": {"List-Unsubscribe": "<mailto:unsubscribe@example.com?subject=INV-2026-0042>"}
  }
}`
)

func TestBenchBodiesAreValidAndAbout1KiB(t *testing.T) {
	t.Parallel()
	for _, body := range []string{benchWebhook1KiB, benchEmail1KiB} {
		require.InDelta(t, 1024, len(body), 200)
		_, err := notification.Parse([]byte(body))
		require.NoError(t, err)
	}
}

func benchParse(b *testing.B, body string) {
	in := []byte(body)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := notification.Parse(in); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPlainDecode(b *testing.B, body string) {
	in := []byte(body)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var m notification.Message
		if err := json.Unmarshal(in, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse1KiB is notification.Parse of a 1 KiB webhook notification.
func BenchmarkParse1KiB(b *testing.B) { benchParse(b, benchWebhook1KiB) }

// BenchmarkPlainDecode1KiB is one encoding/json decode of the same body into
// a Message, with no validation: the floor Parse is measured against.
func BenchmarkPlainDecode1KiB(b *testing.B) { benchPlainDecode(b, benchWebhook1KiB) }

// BenchmarkParseEmail1KiB is notification.Parse of a 1 KiB email
// notification (four mailboxes parsed with net/mail).
func BenchmarkParseEmail1KiB(b *testing.B) { benchParse(b, benchEmail1KiB) }

// BenchmarkPlainDecodeEmail1KiB is the floor for BenchmarkParseEmail1KiB.
func BenchmarkPlainDecodeEmail1KiB(b *testing.B) { benchPlainDecode(b, benchEmail1KiB) }
