package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSendTraceParentIsChecked: a --traceparent (or TRACEPARENT) that is
// not a W3C traceparent is a usage error, before anything is sent; a good
// one passes to the queue resolution.
func TestSendTraceParentIsChecked(t *testing.T) {
	t.Parallel()
	const file = "../../testdata/cases/email-welcome.json"
	run := func(vars map[string]string, args ...string) result {
		var out, errOut bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] },
			now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
		code := execute(context.Background(), e, args)
		return result{code, out.String(), errOut.String()}
	}
	for _, tc := range []struct {
		env  map[string]string
		args []string
	}{
		{nil, []string{"send", "--traceparent", "00-abc-def-01", file}},
		{map[string]string{"TRACEPARENT": "Root=1-5759e988-bd862e3fe1be46a994272793"}, []string{"send", file}},
	} {
		r := run(tc.env, tc.args...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, "--traceparent: not a W3C traceparent")
	}
	good := run(map[string]string{"TRACEPARENT": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "send", file)
	require.Contains(t, good.stderr, "no notification queue", "checked, then on to the queue")
}
