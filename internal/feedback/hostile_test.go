package feedback_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// withDetail returns the sample name with change applied to its decoded
// detail.
func withDetail(t *testing.T, name string, change func(detail map[string]any)) []byte {
	t.Helper()
	ev := load(t, name)
	var detail map[string]any
	require.NoError(t, json.Unmarshal(ev.Detail, &detail))
	change(detail)
	raw, err := json.Marshal(detail)
	require.NoError(t, err)
	return raw
}

// TestBounceTypeDimensionStaysWithinEMF: bounce_type is a metric
// dimension, whose value EMF bounds to 1–1024 ASCII characters and which
// must be a class, not free text; a bounce whose bounceType is anything
// else still counts, under bounce_type "other", on a line CloudWatch
// extracts.
func TestBounceTypeDimensionStaysWithinEMF(t *testing.T) {
	t.Parallel()
	for _, bt := range []string{strings.Repeat("Permanent", 200), "Permanént", "jana.novak@mail.example.org", "Permanent\n"} {
		b := setup(t)
		ev := load(t, "bounce.json")
		ev.Detail = withDetail(t, "bounce.json", func(d map[string]any) {
			d["bounce"].(map[string]any)["bounceType"] = bt
		})
		require.NoError(t, b.h.Handle(context.Background(), ev))
		l := b.lines(t) // each line is valid EMF
		require.Len(t, l, 1)
		require.Equal(t, "other", l[0]["bounce_type"], "bounceType %.40q", bt)
		require.Equal(t, float64(1), l[0]["EmailEvents"])
	}
	b := setup(t)
	require.NoError(t, b.h.Handle(context.Background(), load(t, "bounce.json")))
	require.Equal(t, "Permanent", b.lines(t)[0]["bounce_type"], "SES's own types are kept")
}

// TestEventTimeOutsideTheEMFWindow: CloudWatch extracts no metric whose
// timestamp is more than 14 days old or 2 hours ahead; an event replayed
// from an EventBridge archive, or from a skewed clock, is still counted, at
// the handler's clock.
func TestEventTimeOutsideTheEMFWindow(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{-30 * 24 * time.Hour, 3 * time.Hour} {
		b := setup(t)
		ev := load(t, "send.json")
		ev.Time = b.now.Add(skew)
		require.NoError(t, b.h.Handle(context.Background(), ev))
		l := b.lines(t) // validated at b.now
		require.Equal(t, float64(b.now.UnixMilli()), l[0]["_aws"].(map[string]any)["Timestamp"], "skew %v", skew)
	}
}

// TestAddressesInOddFieldsAreScrubbed: the free-text members herald logs
// (a complaint's feedback type comes from the mailbox provider's report)
// hold no address in the log, wherever one turns up.
func TestAddressesInOddFieldsAreScrubbed(t *testing.T) {
	t.Parallel()
	const addr = "jana.novak@mail.example.org"
	for _, c := range []struct {
		file   string
		change func(d map[string]any)
	}{
		{"bounce.json", func(d map[string]any) { d["bounce"].(map[string]any)["bounceSubType"] = "NoEmail " + addr }},
		{"complaint.json", func(d map[string]any) { d["complaint"].(map[string]any)["complaintFeedbackType"] = "abuse; " + addr }},
		{"complaint.json", func(d map[string]any) { d["complaint"].(map[string]any)["complaintSubType"] = addr }},
		{"delivery-delay.json", func(d map[string]any) { d["deliveryDelay"].(map[string]any)["delayType"] = "MailboxFull " + addr }},
		{"send.json", func(d map[string]any) { d["mail"].(map[string]any)["messageId"] = addr }},
		{"send.json", func(d map[string]any) {
			d["mail"].(map[string]any)["tags"].(map[string]any)["ses:configuration-set"] = []any{addr}
		}},
		{"rendering-failure.json", func(d map[string]any) { d["failure"].(map[string]any)["templateName"] = addr }},
		{"send.json", func(d map[string]any) {
			d["mail"].(map[string]any)["tags"].(map[string]any)["herald-id"] = []any{addr}
		}},
		{"bounce.json", func(d map[string]any) {
			d["bounce"].(map[string]any)["bouncedRecipients"] = []any{map[string]any{"emailAddress": "x@bounce.example\n" + addr}}
		}},
	} {
		b := setup(t)
		ev := load(t, c.file)
		ev.Detail = withDetail(t, c.file, c.change)
		require.NoError(t, b.h.Handle(context.Background(), ev))
		b.lines(t)
		require.Empty(t, addressLike.FindAllString(b.buf.String(), -1), "%s: %s", c.file, b.buf.String())
	}
}

// TestComplaintSubTypeOnlyWhenSESGivesOne: complaintSubType is null for
// most complaints (SES Developer Guide, complaint object); the line has
// complaint_sub_type only when SES wrote one.
func TestComplaintSubTypeOnlyWhenSESGivesOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.h.Handle(context.Background(), load(t, "complaint.json")))
	require.NotContains(t, b.lines(t)[0], "complaint_sub_type", "null in the sample")

	b = setup(t)
	ev := load(t, "complaint.json")
	ev.Detail = withDetail(t, "complaint.json", func(d map[string]any) {
		d["complaint"].(map[string]any)["complaintSubType"] = "OnAccountSuppressionList"
	})
	require.NoError(t, b.h.Handle(context.Background(), ev))
	require.Equal(t, "OnAccountSuppressionList", b.lines(t)[0]["complaint_sub_type"])
}
