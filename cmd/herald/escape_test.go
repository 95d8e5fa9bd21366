package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/deadletter"
	"github.com/heraldhq/herald/internal/redrive"
)

// hostile holds terminal control sequences: OSC (set the window title),
// CSI (clear the screen), a bell, a C1 CSI as UTF-8 and as a lone byte.
const hostile = "\x1b]0;owned\x07 \x1b[2J \u009b31m \x9b1m \x7f"

func requireNoControls(t *testing.T, s string) {
	t.Helper()
	for _, c := range []string{"\x1b", "\x07", "\u009b", "\x9b", "\x7f"} {
		require.NotContains(t, s, c, "%q", s)
	}
}

// A dead letter is producer data (its body) and text from the reason
// attribute: printed for a person, neither may reach the terminal as
// control sequences.
func TestTableAndShowEscapeTerminalControls(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, table(&b, []string{"ID", "CLASS"}, [][]string{{"a", hostile}}))
	requireNoControls(t, b.String())
	require.Contains(t, b.String(), `\x1b]0;owned\x07`, "escaped, still readable")

	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	for _, full := range []bool{false, true} {
		out.Reset()
		printLetter(e, &deadletter.Letter{MessageID: "m-1", MovedBy: deadletter.MovedByHerald, Body: "not json " + hostile + "\nsecond line",
			Reason: &redrive.Reason{Outcome: hostile, ErrorClass: "x", Error: hostile, FailedAt: hostile, SourceMessageID: hostile, NotificationID: hostile, Channel: hostile}}, full)
		requireNoControls(t, out.String())
		require.True(t, strings.Contains(out.String(), "\nsecond line") || strings.Contains(out.String(), `\nsecond line`))
	}
}

// dlq ls --json leaves out what the table leaves out: the body and the
// producer's message attributes herald kept in the reason.
func TestListedLeavesProducerDataOut(t *testing.T) {
	t.Parallel()
	reason := &redrive.Reason{ErrorClass: "webhook_gone", OverflowAttributes: map[string]events.SQSMessageAttribute{
		"api-token": {DataType: "String", StringValue: aws.String("tok_secret")},
	}}
	l := deadletter.Letter{MessageID: "m-1", Body: `{"webhook":{"url":"https://h.example/?sig=s3cret"}}`, Reason: reason}
	var b bytes.Buffer
	require.NoError(t, writeJSON(&b, []deadletter.Letter{listed(l)}))
	require.NotContains(t, b.String(), "s3cret")
	require.NotContains(t, b.String(), "tok_secret")
	require.Contains(t, b.String(), "webhook_gone")
	require.Len(t, reason.OverflowAttributes, 1, "the letter itself is left as it was")
}

// --json output (dlq's writeJSON, listen's lines) is the same JSON value
// with no control character left raw: encoding/json escapes C0 but writes
// DEL and C1 (U+009B, CSI) as they are.
func TestJSONEscapesTerminalControls(t *testing.T) {
	t.Parallel()
	value := map[string]string{"a": hostile, "b": "café \u0080\u009f\u00a0 ok"}
	var b bytes.Buffer
	require.NoError(t, writeJSON(&b, value))
	requireNoControls(t, b.String())
	require.NotContains(t, b.String(), "\u0080")
	require.NotContains(t, b.String(), "\u009f")
	require.Contains(t, b.String(), `\u009b31m`)
	require.Contains(t, b.String(), "\u00a0", "U+00A0 is no control: left as it is")
	var back map[string]string
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	require.Equal(t, strings.ToValidUTF8(value["a"], "\uFFFD"), back["a"], "the same value")
	require.Equal(t, value["b"], back["b"])
	same := []byte(`{"plain":"é"}`)
	require.Equal(t, same, jsonControlsEscaped(same))
}
