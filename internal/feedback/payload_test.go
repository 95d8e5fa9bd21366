package feedback_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/feedback"
)

// rawSample returns the sample name as the function receives it, with
// change applied to the decoded payload (nil: unchanged).
func rawSample(t *testing.T, name string, change func(ev map[string]any)) json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(samples, name))
	require.NoError(t, err)
	if change == nil {
		return raw
	}
	var ev map[string]any
	require.NoError(t, json.Unmarshal(raw, &ev))
	change(ev)
	out, err := json.Marshal(ev)
	require.NoError(t, err)
	return out
}

func detailOf(ev map[string]any) map[string]any { return ev["detail"].(map[string]any) }

// TestPayloadsTheFunctionCannotRead: whatever the invocation's payload, the
// function returns nil (Lambda would retry a failed invocation, which fails
// the same way, then dead-letter it): an event it cannot read is one ERROR
// line "email_event_unreadable", counted once, bounded in size, with no
// address; the rest is read as far as it goes.
func TestPayloadsTheFunctionCannotRead(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("Email Sent ", 100_000) // about 1 MiB
	for _, tt := range []struct {
		name    string
		payload json.RawMessage
		why     string
	}{
		{"not JSON", json.RawMessage(`hello`), "not a JSON object"},
		{"cut JSON", rawSample(t, "send.json", nil)[:40], "not a JSON object"},
		{"an array", json.RawMessage(`[{"source":"aws.ses"}]`), "not a JSON object"},
		{"a string", json.RawMessage(`"jana.novak@mail.example.org"`), "not a JSON object"},
		{"null", json.RawMessage(`null`), "not a JSON object"},
		{"a number", json.RawMessage(`42`), "not a JSON object"},
		{"an empty object", json.RawMessage(`{}`), "source is not aws.ses"},
		{"no detail", rawSample(t, "send.json", func(ev map[string]any) { delete(ev, "detail") }), "detail:"},
		{"detail null", rawSample(t, "send.json", func(ev map[string]any) { ev["detail"] = nil }), "eventType  is not"},
		{"detail a string", rawSample(t, "send.json", func(ev map[string]any) { ev["detail"] = "Send" }), "detail:"},
		{"source of another type", rawSample(t, "send.json", func(ev map[string]any) { ev["source"] = []any{"aws.ses"} }), "source is not aws.ses"},
		{"unknown eventType", rawSample(t, "send.json", func(ev map[string]any) { detailOf(ev)["eventType"] = "Subscription" }), "eventType Subscription is not"},
		{"empty eventType", rawSample(t, "send.json", func(ev map[string]any) { detailOf(ev)["eventType"] = "" }), "eventType  is not"},
		{"eventType in another case", rawSample(t, "bounce.json", func(ev map[string]any) { detailOf(ev)["eventType"] = "bounce" }), "eventType bounce is not"},
		{"no mail", rawSample(t, "send.json", func(ev map[string]any) { delete(detailOf(ev), "mail") }), "no mail.messageId"},
		{"mail without messageId", rawSample(t, "delivery.json", func(ev map[string]any) { delete(detailOf(ev)["mail"].(map[string]any), "messageId") }), "no mail.messageId"},
		{"mail of another type", rawSample(t, "send.json", func(ev map[string]any) { detailOf(ev)["mail"] = "m-1" }), "detail:"},
		{"bounce without its object", rawSample(t, "bounce.json", func(ev map[string]any) { delete(detailOf(ev), "bounce") }), "no bounce object"},
		{"complaint without its object", rawSample(t, "complaint.json", func(ev map[string]any) { delete(detailOf(ev), "complaint") }), "no complaint object"},
		{"delivery without its object", rawSample(t, "delivery.json", func(ev map[string]any) { delete(detailOf(ev), "delivery") }), "no delivery object"},
		{"delay without its object", rawSample(t, "delivery-delay.json", func(ev map[string]any) { delete(detailOf(ev), "deliveryDelay") }), "no deliveryDelay object"},
		{"reject without its object", rawSample(t, "reject.json", func(ev map[string]any) { delete(detailOf(ev), "reject") }), "no reject object"},
		{"rendering failure without its object", rawSample(t, "rendering-failure.json", func(ev map[string]any) { delete(detailOf(ev), "failure") }), "no failure object"},
		{"a huge unknown detail-type and source", rawSample(t, "send.json", func(ev map[string]any) {
			ev["source"], ev["detail-type"], ev["id"] = huge+"jana.novak@mail.example.org", huge, huge
		}), "source is not aws.ses"},
		{"a huge unknown eventType", rawSample(t, "send.json", func(ev map[string]any) { detailOf(ev)["eventType"] = huge }), "is not one herald publishes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			require.NoError(t, b.h.HandleRaw(context.Background(), tt.payload), "never a failed invocation")
			lines := b.lines(t)
			require.Len(t, lines, 1, "logged once")
			l := lines[0]
			require.Equal(t, "email_event_unreadable", l["msg"])
			require.Equal(t, "ERROR", l["level"])
			require.Contains(t, l["error"], tt.why)
			require.Equal(t, 1.0, l[feedback.MetricEmailEventsUnreadable], "counted once")
			require.NotContains(t, l, feedback.MetricEmailEvents)
			require.Less(t, b.buf.Len(), 4096, "the line is bounded, whatever the payload's size")
			require.Empty(t, addressLike.FindAllString(b.buf.String(), -1))
		})
	}
}

// TestPayloadsReadAsFarAsTheyGo: every sample read from its raw payload is
// logged as Handle logs it; an envelope with an id of another type or a
// time that is not RFC 3339 is still read, timed by the clock.
func TestPayloadsReadAsFarAsTheyGo(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(samples)
	require.NoError(t, err)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		viaRaw, viaHandle := setup(t), setup(t)
		require.NoError(t, viaRaw.h.HandleRaw(context.Background(), rawSample(t, e.Name(), nil)))
		require.NoError(t, viaHandle.h.Handle(context.Background(), load(t, e.Name())))
		want, got := viaHandle.lines(t), viaRaw.lines(t)
		require.Len(t, got, 1)
		delete(want[0], "time") // the logger's own clock
		delete(got[0], "time")
		require.Equal(t, want, got, e.Name())
		require.Equal(t, "email_event", got[0]["msg"])
	}
	for name, change := range map[string]func(ev map[string]any){
		"time not RFC 3339": func(ev map[string]any) { ev["time"] = "yesterday" },
		"time a number":     func(ev map[string]any) { ev["time"] = 1_800_000_000 },
		"id a number":       func(ev map[string]any) { ev["id"] = 7 },
		"no resources":      func(ev map[string]any) { delete(ev, "resources") },
		"resources a map":   func(ev map[string]any) { ev["resources"] = map[string]any{"a": 1} },
	} {
		b := setup(t)
		require.NoError(t, b.h.HandleRaw(context.Background(), rawSample(t, "delivery.json", change)), name)
		l := b.lines(t)
		require.Len(t, l, 1, name)
		require.Equal(t, "email_event", l[0]["msg"], name)
		require.Equal(t, sampleID, l[0]["id"], name)
		if strings.HasPrefix(name, "time") {
			require.Equal(t, float64(b.now.UnixMilli()), l[0]["_aws"].(map[string]any)["Timestamp"], name)
		}
	}
}

// TestHugeMembersOfReadableEvents: an event herald reads whose free-text
// members are huge (its message id, configuration set, sub-types, delay
// type, template name, a recipient's domain) is logged and counted once in a
// bounded line, as an unreadable one is: every byte logged is billed.
func TestHugeMembersOfReadableEvents(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("Ab-", 100_000) // 300 KB
	mail := func(ev map[string]any) map[string]any { return detailOf(ev)["mail"].(map[string]any) }
	for _, tt := range []struct {
		name, sample string
		change       func(ev map[string]any)
	}{
		{"message id", "delivery.json", func(ev map[string]any) { mail(ev)["messageId"] = huge }},
		{"configuration set", "delivery.json", func(ev map[string]any) {
			mail(ev)["tags"].(map[string]any)["ses:configuration-set"] = []any{huge}
		}},
		{"bounce sub-type", "bounce.json", func(ev map[string]any) { detailOf(ev)["bounce"].(map[string]any)["bounceSubType"] = huge }},
		{"complaint types", "complaint.json", func(ev map[string]any) {
			c := detailOf(ev)["complaint"].(map[string]any)
			c["complaintFeedbackType"], c["complaintSubType"] = huge, huge
		}},
		{"delay type", "delivery-delay.json", func(ev map[string]any) { detailOf(ev)["deliveryDelay"].(map[string]any)["delayType"] = huge }},
		{"template name", "rendering-failure.json", func(ev map[string]any) { detailOf(ev)["failure"].(map[string]any)["templateName"] = huge }},
		{"recipient domain", "delivery.json", func(ev map[string]any) {
			detailOf(ev)["delivery"].(map[string]any)["recipients"] = []any{"jana@" + strings.ToLower(huge) + ".example"}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			require.NoError(t, b.h.HandleRaw(context.Background(), rawSample(t, tt.sample, tt.change)))
			lines := b.lines(t)
			require.Len(t, lines, 1, "logged once")
			require.Equal(t, "email_event", lines[0]["msg"])
			require.Equal(t, 1.0, lines[0][feedback.MetricEmailEvents], "counted once")
			require.Less(t, b.buf.Len(), 4096, "the line is bounded, whatever the event's size")
		})
	}
}
