package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/deadletter"
	"github.com/heraldhq/herald/internal/processor"
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
	printLetter(e, &deadletter.Letter{MessageID: "m-1", MovedBy: deadletter.MovedByHerald, Body: "not json " + hostile + "\nsecond line",
		Reason: &processor.Reason{Outcome: hostile, ErrorClass: "x", Error: hostile, FailedAt: hostile, SourceMessageID: hostile, NotificationID: hostile, Channel: hostile}})
	requireNoControls(t, out.String())
	require.True(t, strings.Contains(out.String(), "\nsecond line") || strings.Contains(out.String(), `\nsecond line`))
}
