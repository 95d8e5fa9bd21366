package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/redrive"
)

// TestDescribe: a record's log lines become its fate, checked against the
// expected outcome's first word, the receive it names, or the reason's
// words.
func TestDescribe(t *testing.T) {
	t.Parallel()
	retry := func(d, class string) map[string]any {
		return map[string]any{"outcome": "retry", "delay_seconds": d, "error_class": class}
	}
	delivered := map[string]any{"outcome": "delivered", "receive_count": 3}
	dead := map[string]any{"outcome": "dead_lettered", "error_class": "invalid_message", "error": "invalid message: email.to: must be an array"}
	for _, tc := range []struct {
		h        []map[string]any
		expected string
		fate     string
		ok       bool
	}{
		{nil, "delivered", "no outcome yet", false},
		{[]map[string]any{delivered}, "delivered on receive 3", "delivered on receive 3", true},
		{[]map[string]any{delivered}, "delivered on receive 2", "delivered on receive 3", false},
		{[]map[string]any{delivered}, "delivered", "delivered on receive 3", true},
		{[]map[string]any{delivered}, "dropped as expired", "delivered on receive 3", false},
		{[]map[string]any{retry("1", "a"), retry("2", "b"), retry("4", "a"), delivered}, "delivered", "retried 1s, 2s, 4s (a, b); delivered on receive 3", true},
		{[]map[string]any{{"outcome": "failed"}, delivered}, "delivered", "delivered on receive 3", true},
		{[]map[string]any{{"outcome": "dropped"}}, "dropped as expired (no request made)", "dropped (expired)", true},
		{[]map[string]any{dead}, "dead-lettered, reason names email.to", "dead-lettered (invalid_message)", true},
		{[]map[string]any{dead}, "dead-lettered, reason names channel", "dead-lettered (invalid_message)", false},
		{[]map[string]any{dead}, "dead-lettered, reason: must be an array", "dead-lettered (invalid_message)", true},
		{[]map[string]any{dead}, "dead-lettered, reason: must be a string", "dead-lettered (invalid_message)", false},
		{[]map[string]any{dead}, "delivered", "dead-lettered (invalid_message)", false},
		{[]map[string]any{{"outcome": "retry"}}, "delivered", "retry", false},
	} {
		fate, ok := describe(tc.h, tc.expected)
		require.Equal(t, tc.fate, fate, "%v %q", tc.h, tc.expected)
		require.Equal(t, tc.ok, ok, "%v %q", tc.h, tc.expected)
	}
}

// TestDeadLetterReport: a dead letter herald sent is named as its sample,
// one of another run by its notification id, one without herald's reason as
// moved by the redrive policy; sorted by that name, letters of one name
// in the order read.
func TestDeadLetterReport(t *testing.T) {
	t.Parallel()
	samples := []*sample{{name: "poison-a.json", msgID: "m-1"}, {name: "b.json", msgID: "m-2"}}
	letters := []localenv.DeadLetter{
		{MessageID: "m-1", Attributes: map[string]string{redrive.AttrReason: `{"source_message_id":"m-1","notification_id":"n-1","error_class":"invalid_message","error":"invalid JSON"}`}},
		{MessageID: "m-9", Attributes: map[string]string{redrive.AttrReason: `{"source_message_id":"m-9","notification_id":"old-7","error_class":"webhook_http_4xx","error":"HTTP 410"}`}},
		{MessageID: "m-3", Attributes: map[string]string{}},
		{MessageID: "m-8", Attributes: map[string]string{redrive.AttrReason: `{"source_message_id":"m-8","notification_id":"old-7","error_class":"webhook_http_5xx","error":"HTTP 503"}`}},
	}
	var out bytes.Buffer
	deadLetterReport(&out, samples, letters)
	require.Equal(t, ""+
		"  (message m-3)                no reason\n      moved by the redrive policy\n"+
		"  (not this run's) old-7       webhook_http_4xx\n      HTTP 410\n"+
		"  (not this run's) old-7       webhook_http_5xx\n      HTTP 503\n"+
		"  poison-a.json                invalid_message\n      invalid JSON\n", out.String())
}

// TestFatesWrite: the fates keep JSON lines naming an SQS message id, under
// that id, and take every line whole.
func TestFatesWrite(t *testing.T) {
	t.Parallel()
	f := newFates()
	for _, l := range []string{`{"sqs_message_id":"m-1","outcome":"retry"}`, `not json`, `{"msg":"batch"}`, `{"sqs_message_id":"m-1","outcome":"delivered"}`} {
		n, err := f.Write([]byte(l))
		require.NoError(t, err)
		require.Equal(t, len(l), n)
	}
	require.Equal(t, []map[string]any{{"sqs_message_id": "m-1", "outcome": "retry"}, {"sqs_message_id": "m-1", "outcome": "delivered"}}, f.history("m-1"))
	require.True(t, f.allFinal([]*sample{{msgID: "m-1"}}))
	require.False(t, f.allFinal([]*sample{{msgID: "m-1"}, {msgID: "m-2"}}))
	_, _ = f.Write([]byte(`{"sqs_message_id":"m-2","outcome":"retry"}`))
	require.False(t, f.allFinal([]*sample{{msgID: "m-2"}}), "a retry is not final")
}

// TestReport: one row per sample, sorted by name (samples of one name in
// the order sent), each fate marked as expected or not; false when one is
// not.
func TestReport(t *testing.T) {
	t.Parallel()
	f := newFates()
	for _, l := range []string{
		`{"sqs_message_id":"m-1","outcome":"delivered","receive_count":1}`,
		`{"sqs_message_id":"m-2","outcome":"dropped"}`,
		`{"sqs_message_id":"m-3","outcome":"delivered","receive_count":2}`,
	} {
		_, _ = f.Write([]byte(l))
	}
	samples := []*sample{{name: "z.json", msgID: "m-2", expected: "dropped as expired"}, {name: "a.json", msgID: "m-3", expected: "delivered"}, {name: "a.json", msgID: "m-1", expected: "delivered on receive 2"}}
	var out bytes.Buffer
	require.False(t, report(&out, samples, f))
	require.Equal(t, ""+
		"NOTIFICATION  FATE                    AS EXPECTED\n"+
		"a.json        delivered on receive 2  yes\n"+
		"a.json        delivered on receive 1  NO, expected: delivered on receive 2\n"+
		"z.json        dropped (expired)       yes\n", out.String())
	out.Reset()
	require.True(t, report(&out, samples[:1], f))
}
