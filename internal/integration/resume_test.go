//go:build integration

package integration

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/pause"
)

// TestCLIResumeEnablesAPausedMapping runs `herald resume` as users run it
// against a function and event source mapping registered in LocalStack's
// Lambda API (whose source is a queue of its own), paused as the deliver
// function pauses itself: --dry-run shows it and changes nothing; resume
// enables it; a second resume leaves it as it is.
func TestCLIResumeEnablesAPausedMapping(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	m := registerMapping(t, e)
	_, err := pause.Pause(e.ctx, m.lambda, m.function, m.sourceARN)
	require.NoError(t, err)
	m.waitState(t, e.ctx, "Disabled")
	c := &cliEnv{t: t, ctx: e.ctx}

	type row struct {
		UUID           string `json:"uuid"`
		EventSourceARN string `json:"event_source_arn"`
		State          string `json:"state"`
		Action         string `json:"action"`
	}
	run := func(args ...string) []row {
		t.Helper()
		r := c.herald("", append([]string{"resume", "--json", "--function", m.function}, args...)...)
		require.Equal(t, 0, r.code, "%+v", r)
		var rows []row
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
		return rows
	}

	rows := run("--dry-run")
	require.Equal(t, []row{{UUID: m.uuid, EventSourceARN: m.sourceARN, State: "Disabled", Action: "would enable"}}, rows)
	require.Equal(t, "Disabled", m.state(t, e.ctx), "--dry-run changes nothing")

	rows = run()
	require.Len(t, rows, 1)
	require.Equal(t, m.uuid, rows[0].UUID)
	require.Equal(t, "enabled", rows[0].Action)
	m.waitState(t, e.ctx, "Enabled")

	rows = run()
	require.Equal(t, []row{{UUID: m.uuid, EventSourceARN: m.sourceARN, State: "Enabled", Action: "already enabled"}}, rows)

	r := c.herald("", "resume", "--function", m.function+"-missing")
	require.Equal(t, 1, r.code, "%+v", r)
	require.Contains(t, r.stderr, "no event source mapping found")
}
