package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A send whose answer cannot be trusted is not "NOT SENT" while the queue
// holds the message: herald send says UNKNOWN, names the queue and how to
// check, and exits 1; --json says "unknown".
func TestSendReportsAnUntrustedAnswerAsUnknown(t *testing.T) {
	for _, json_ := range []bool{false, true} {
		w := newDLQWire(t, "/dlq", "/q")
		w.GarbleDigest("SendMessageBatch")
		args := []string{"send", "--queue-url", w.URL() + "/q", "../../testdata/cases/email-welcome.json"}
		if json_ {
			args = append([]string{"--json"}, args...)
		}
		r := heraldCtx(context.Background(), args...)
		require.Equal(t, exitFailed, r.code, "%+v", r)
		require.Len(t, w.Messages(w.URL()+"/q"), 1, "the queue holds it")
		require.NotContains(t, r.stdout, "NOT SENT")
		if !json_ {
			require.Contains(t, r.stdout, "UNKNOWN, maybe sent")
			require.Contains(t, r.stdout, w.URL()+"/q")
			continue
		}
		var rows []sendRow
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
		require.Len(t, rows, 1)
		require.Equal(t, outcomeUnknown, rows[0].Outcome)
		require.Contains(t, rows[0].Error, "check whether")
	}
}

// SQS refusing the call is NOT SENT, with outcome not_sent.
func TestSendReportsARefusalAsNotSent(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q")
	w.FailAction("SendMessageBatch")
	r := heraldCtx(context.Background(), "--json", "send", "--queue-url", w.URL()+"/q", "../../testdata/cases/email-welcome.json")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	var rows []sendRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Equal(t, outcomeNotSent, rows[0].Outcome)
	require.Empty(t, w.Messages(w.URL()+"/q"))
}
