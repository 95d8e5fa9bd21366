package feedback_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/feedback"
	"github.com/heraldhq/herald/internal/metrics"
)

// samples is testdata/ses-events: one EventBridge event per SES event type
// herald publishes, in the shapes of the SES Developer Guide's "Examples of
// event data", all for notification "welcome-jana.2026:1".
const samples = "../../testdata/ses-events"

const sampleID = "welcome-jana.2026:1"

type bundle struct {
	h   *feedback.Handler
	buf *bytes.Buffer
	now time.Time
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{buf: &bytes.Buffer{}, now: time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)}
	h, err := feedback.New(feedback.Config{
		Logger: slog.New(slog.NewJSONHandler(b.buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    func() time.Time { return b.now },
	})
	require.NoError(t, err)
	b.h = h
	return b
}

func load(t *testing.T, name string) events.EventBridgeEvent {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(samples, name))
	require.NoError(t, err)
	var ev events.EventBridgeEvent
	require.NoError(t, json.Unmarshal(raw, &ev))
	return ev
}

// lines returns the JSON lines written, each decoded, after checking each is
// one valid EMF document.
func (b *bundle) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(b.buf.Bytes()), []byte("\n")) {
		require.NoError(t, metrics.Validate(l, b.now), "%s", l)
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m))
		out = append(out, m)
	}
	return out
}

// TestEverySampleThroughTheHandler runs each sample through Handle and
// checks the line: the notification id decoded from the herald-id tag, the
// event type, what is particular to the type, and its metric.
func TestEverySampleThroughTheHandler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		typ   feedback.EventType
		level string
		want  map[string]any
	}{
		{"send.json", feedback.Send, "INFO", map[string]any{"recipient_domains": []any{"mail.example.org"}}},
		{"delivery.json", feedback.Delivered, "INFO", map[string]any{
			"processing_time_ms": 546.0, "recipient_domains": []any{"mail.example.org"}, "event_time": "2026-11-30T10:00:00.558Z",
		}},
		{"bounce.json", feedback.Bounced, "WARN", map[string]any{
			"bounce_type": "Permanent", "bounce_sub_type": "General", "status": []any{"5.1.1"},
			// Only the bounced recipient, not Bob, who was also sent the mail.
			"recipient_domains": []any{"mail.example.org"},
		}},
		{"complaint.json", feedback.Complained, "WARN", map[string]any{
			"complaint_feedback_type": "abuse", "recipient_domains": []any{"mail.example.org"},
		}},
		{"reject.json", feedback.Rejected, "WARN", map[string]any{"reject_reason": "Bad content"}},
		{"rendering-failure.json", feedback.RenderingFailed, "WARN", map[string]any{
			"template": "welcome-v2", "error": "Attribute 'name' is not present in the rendering data.",
		}},
		{"delivery-delay.json", feedback.DeliveryDelayed, "INFO", map[string]any{
			"delay_type": "TransientCommunicationFailure", "status": []any{"4.4.1"}, "expiration_time": "2026-11-30T23:59:59Z",
		}},
	}
	files, err := filepath.Glob(filepath.Join(samples, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, len(tests), "one case per sample file")
	require.Len(t, feedback.EventTypes, len(tests), "one sample per event type herald publishes")
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ev := load(t, tt.file)
			require.NoError(t, b.h.Handle(context.Background(), ev))
			lines := b.lines(t)
			require.Len(t, lines, 1, "one line per event")
			l := lines[0]
			require.Equal(t, "email_event", l["msg"])
			require.Equal(t, tt.level, l["level"])
			require.Equal(t, sampleID, l["id"], "the deliver function's member for the notification id")
			require.Equal(t, string(tt.typ), l["event_type"])
			require.Equal(t, "EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000", l["ses_message_id"])
			require.Equal(t, "herald-email-AbCdEf", l["configuration_set"])
			for k, v := range tt.want {
				require.Equal(t, v, l[k], k)
			}
			// The metric: EmailEvents = 1, by event type (and bounce type).
			require.Equal(t, 1.0, l[feedback.MetricEmailEvents])
			aws := l["_aws"].(map[string]any)
			require.Equal(t, float64(ev.Time.UnixMilli()), aws["Timestamp"], "the metric is timed by the event")
			dir := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
			require.Equal(t, metrics.Namespace, dir["Namespace"])
			wantDims := []any{[]any{"event_type"}}
			if tt.typ == feedback.Bounced {
				wantDims = append(wantDims, []any{"event_type", "bounce_type"})
			}
			require.Equal(t, wantDims, dir["Dimensions"])
		})
	}
}

// addressLike matches anything shaped like an email address.
var addressLike = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+`)

// TestNoAddressReachesTheLog scans every line the samples produce for an
// address or a local part: the samples carry addresses in the recipients,
// the headers, the sender and the diagnostic codes.
func TestNoAddressReachesTheLog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	files, err := filepath.Glob(filepath.Join(samples, "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		require.NoError(t, b.h.Handle(context.Background(), load(t, filepath.Base(f))))
	}
	// An address inside a reject reason or a rendering error is scrubbed too.
	ev := load(t, "rendering-failure.json")
	ev.Detail = []byte(strings.Replace(string(ev.Detail), "Attribute 'name'", "Attribute 'jana.novak@mail.example.org'", 1))
	require.NoError(t, b.h.Handle(context.Background(), ev))
	out := b.buf.String()
	require.Len(t, b.lines(t), len(files)+1)
	require.Empty(t, addressLike.FindAllString(out, -1))
	for _, local := range []string{"jana.novak", "bob", "noreply", "Jana Novak"} {
		require.NotContains(t, out, local)
	}
	require.Contains(t, out, `Attribute '<address>'`)
}

func TestTagValues(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, tag string
		want      map[string]any
		absent    []string
	}{
		{"escaped id decoded", `"herald-id":["a_db_cc__d"]`, map[string]any{"id": "a.b:c_d"}, []string{"id_tag"}},
		{"not herald's escape: kept as id_tag", `"herald-id":["a_x"]`, map[string]any{"id_tag": "a_x"}, []string{"id"}},
		{"no tag: not herald's mail", `"other":["v"]`, nil, []string{"id", "id_tag"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ev := load(t, "send.json")
			ev.Detail = []byte(regexp.MustCompile(`"herald-id":\s*\[\s*"[^"]*"\s*\]`).ReplaceAllString(string(ev.Detail), tt.tag))
			require.NoError(t, b.h.Handle(context.Background(), ev))
			l := b.lines(t)[0]
			for k, v := range tt.want {
				require.Equal(t, v, l[k])
			}
			for _, k := range tt.absent {
				require.NotContains(t, l, k)
			}
			require.Equal(t, "send", l["event_type"], "logged and counted all the same")
		})
	}
}

// TestUnreadableEvents: what the handler cannot read is logged once, at
// ERROR, with a metric of its own, without the detail, and not retried.
func TestUnreadableEvents(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		change func(*events.EventBridgeEvent)
		why    string
	}{
		{"another source", func(ev *events.EventBridgeEvent) { ev.Source = "aws.s3" }, "source is not aws.ses"},
		{"detail not an object", func(ev *events.EventBridgeEvent) { ev.Detail = []byte(`["jana.novak@mail.example.org"]`) }, "detail:"},
		{"an event type herald does not publish", func(ev *events.EventBridgeEvent) {
			ev.DetailType = "Email Opened"
			ev.Detail = []byte(strings.Replace(string(ev.Detail), `"eventType": "Send"`, `"eventType": "Open"`, 1))
		}, "eventType Open"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ev := load(t, "send.json")
			tt.change(&ev)
			require.NoError(t, b.h.Handle(context.Background(), ev), "never retried")
			lines := b.lines(t)
			require.Len(t, lines, 1)
			l := lines[0]
			require.Equal(t, "email_event_unreadable", l["msg"])
			require.Equal(t, "ERROR", l["level"])
			require.Contains(t, l["error"], tt.why)
			require.Equal(t, 1.0, l[feedback.MetricEmailEventsUnreadable])
			require.Equal(t, ev.ID, l["eventbridge_id"])
			require.Empty(t, addressLike.FindAllString(b.buf.String(), -1))
		})
	}
}

func TestDomains(t *testing.T) {
	t.Parallel()
	require.Equal(t,
		[]string{"example.org", "mail.example.org", "unknown", "xn--bcher-kva.example"},
		feedback.Domains([]string{
			"jana@Mail.Example.org", "Bob <bob@example.org>", "\"Ann, B\" <ann@EXAMPLE.org>",
			"x@xn--bcher-kva.example", "no-at-sign", "trailing@", "c@mail.example.org",
		}))
	require.Empty(t, feedback.Domains(nil))
	require.Equal(t, []string{"example.org"}, feedback.Domains([]string{"@example.org"}), "an @ at the start still has a domain after it")
}

// A domain name is at most 253 characters in text form (RFC 1035 §2.3.4):
// one of exactly that length is a domain, one character more is not.
func TestDomainsAtTheLengthLimit(t *testing.T) {
	t.Parallel()
	// Three labels of 63 (the most a label may have), one of 57, "org",
	// and the dots between them: 253.
	longest := strings.Join([]string{strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("d", 57), "org"}, ".")
	require.Len(t, longest, 253)
	require.Equal(t, []string{longest}, feedback.Domains([]string{"x@" + longest}))
	require.Equal(t, []string{"unknown"}, feedback.Domains([]string{"x@a" + longest}))
}

func TestNewNeedsALogger(t *testing.T) {
	t.Parallel()
	_, err := feedback.New(feedback.Config{})
	require.ErrorContains(t, err, "Logger")
}

func TestEventsQuery(t *testing.T) {
	t.Parallel()
	q := feedback.EventsQuery(sampleID)
	require.Contains(t, q, `| filter id = "welcome-jana.2026:1"`)
	require.Contains(t, q, "| sort @timestamp asc")
	require.Contains(t, feedback.EventsQuery(`a" or 1=1`), `filter id = "a\" or 1=1"`, "the id stays one string literal")
}

// TestBounceStatuses: the recipients' SMTP enhanced status codes, each once;
// a value that is not one (it could hold anything) is left out.
func TestBounceStatuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ev := load(t, "bounce.json")
	var detail map[string]any
	require.NoError(t, json.Unmarshal(ev.Detail, &detail))
	bounce := detail["bounce"].(map[string]any)
	bounce["bouncedRecipients"] = []any{
		map[string]any{"emailAddress": "a@one.example", "status": "5.1.1"},
		map[string]any{"emailAddress": "b@two.example", "status": "5.1.1"},
		map[string]any{"emailAddress": "c@two.example", "status": "5.7.1"},
		map[string]any{"emailAddress": "d@three.example", "status": "see d@three.example"},
	}
	raw, err := json.Marshal(detail)
	require.NoError(t, err)
	ev.Detail = raw
	require.NoError(t, b.h.Handle(context.Background(), ev))
	l := b.lines(t)[0]
	require.Equal(t, []any{"5.1.1", "5.7.1"}, l["status"])
	require.Equal(t, []any{"one.example", "three.example", "two.example"}, l["recipient_domains"])
	require.Empty(t, addressLike.FindAllString(b.buf.String(), -1))
}

// TestEventWithoutTime: the metric is timed by the clock when EventBridge
// gave no time.
func TestEventWithoutTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ev := load(t, "send.json")
	ev.Time = time.Time{}
	require.NoError(t, b.h.Handle(context.Background(), ev))
	require.Equal(t, float64(b.now.UnixMilli()), b.lines(t)[0]["_aws"].(map[string]any)["Timestamp"])
}
