package deadletter

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/redrive"
)

const (
	epA = "ep_01jekz5v8n3q4r5s6t7v8w9x0a"
	epB = "ep_01jekz5v8n3q4r5s6t7v8w9x0b"
)

// letter is a dead letter herald sent of body, failed at failedAt.
func letter(t *testing.T, id, body string, failedAt time.Time, attrs map[string]string) Letter {
	t.Helper()
	reason, err := json.Marshal(redrive.Reason{Outcome: "permanent_failure", ErrorClass: "endpoint_disabled", FailedAt: failedAt.Format(time.RFC3339Nano), SourceMessageID: id})
	require.NoError(t, err)
	ma := map[string]types.MessageAttributeValue{redrive.AttrReason: str(string(reason))}
	for k, v := range attrs {
		ma[k] = str(v)
	}
	return fromMessage(types.Message{MessageId: aws.String(id), Body: aws.String(body), MessageAttributes: ma,
		Attributes: map[string]string{"SentTimestamp": "1796000000000"}})
}

// TestLetterNamesItsTenantAndEndpoint: from the body of a fan-out's
// delivery (webhook or chat), else from herald's attributes; the endpoint
// is the letter's destination.
func TestLetterNamesItsTenantAndEndpoint(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, body           string
		attrs                map[string]string
		tenant, endpoint, ch string
	}{
		{"webhook body", `{"version":1,"id":"msg_a","channel":"webhook","tenant":"acme","event_id":"evt_1","webhook":{"endpoint":"` + epA + `","event_type":"invoice.paid","payload":{}}}`,
			nil, "acme", epA, "webhook"},
		{"chat body", `{"version":1,"id":"msg_b","channel":"chat","tenant":"globex","chat":{"endpoint":"` + epB + `","text":"x"}}`,
			nil, "globex", epB, "chat"},
		{"attributes only", `not json`, map[string]string{redrive.AttrTenant: "acme", redrive.AttrEndpoint: epB}, "acme", epB, ""},
		{"the body wins", `{"id":"msg_c","channel":"webhook","tenant":"acme","webhook":{"endpoint":"` + epA + `"}}`,
			map[string]string{redrive.AttrTenant: "forged", redrive.AttrEndpoint: epB}, "acme", epA, "webhook"},
		{"inline", `{"id":"msg_d","channel":"webhook","webhook":{"url":"https://h.example/p"}}`, nil, "", "", "webhook"},
	} {
		l := letter(t, "m-"+c.name, c.body, at, c.attrs)
		require.Equal(t, c.tenant, l.Tenant, c.name)
		require.Equal(t, c.endpoint, l.Endpoint, c.name)
		require.Equal(t, c.ch, l.Channel, c.name)
		if c.endpoint != "" && c.ch != "" {
			require.Equal(t, c.endpoint, l.Destination, c.name)
		}
	}
}

// TestFilterByTenantEndpointSince: each filter alone, combined, at the
// boundaries of --since, and matching nothing.
func TestFilterByTenantEndpointSince(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	now := t0.Add(24 * time.Hour)
	body := func(tenant, ep string) string {
		return `{"id":"x","channel":"webhook","tenant":"` + tenant + `","webhook":{"endpoint":"` + ep + `"}}`
	}
	letters := []Letter{
		letter(t, "a1-early", body("acme", epA), t0.Add(-time.Millisecond), nil),
		letter(t, "a1-at", body("acme", epA), t0, nil),
		letter(t, "a1-late", body("acme", epA), t0.Add(time.Hour), nil),
		letter(t, "a2", body("acme", epB), t0.Add(time.Hour), nil),
		letter(t, "g1", body("globex", "ep_01jekz5v8n3q4r5s6t7v8w9x0c"), t0.Add(time.Hour), nil),
		letter(t, "inline", `{"id":"y","channel":"webhook","webhook":{"url":"https://h.example/"}}`, t0.Add(time.Hour), nil),
	}
	// A letter the redrive policy moved has no failure time: its
	// SentTimestamp (1796000000000, in 2026-11) counts.
	policy := fromMessage(types.Message{MessageId: aws.String("policy"), Body: aws.String(body("acme", epA)),
		Attributes: map[string]string{"SentTimestamp": "1796000000000"}})
	letters = append(letters, policy)
	for _, c := range []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"tenant only", Filter{Tenant: "acme"}, []string{"a1-early", "a1-at", "a1-late", "a2", "policy"}},
		{"another tenant", Filter{Tenant: "globex"}, []string{"g1"}},
		{"endpoint only", Filter{Endpoint: epB}, []string{"a2"}},
		{"endpoint since, inclusive at T", Filter{Endpoint: epA, Since: t0}, []string{"a1-at", "a1-late"}},
		{"since just after T", Filter{Endpoint: epA, Since: t0.Add(time.Nanosecond)}, []string{"a1-late"}},
		{"since before everything", Filter{Since: time.UnixMilli(1796000000000)}, []string{"a1-early", "a1-at", "a1-late", "a2", "g1", "inline", "policy"}},
		{"since after everything", Filter{Since: t0.Add(2 * time.Hour)}, nil},
		{"tenant and endpoint disagree", Filter{Tenant: "globex", Endpoint: epA}, nil},
		{"unknown endpoint", Filter{Endpoint: "ep_01jekz5v8n3q4r5s6t7v8w9x0z"}, nil},
		{"tenant and class", Filter{Tenant: "acme", Class: "endpoint_disabled", Since: t0}, []string{"a1-at", "a1-late", "a2"}},
	} {
		var got []string
		for i := range letters {
			if c.filter.Match(&letters[i], now) {
				got = append(got, letters[i].MessageID)
			}
		}
		require.Equal(t, c.want, got, c.name)
	}
}
