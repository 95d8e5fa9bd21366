package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/stretchr/testify/require"
)

// event reads an SES event as EventBridge delivers it
// (testdata/ses-events at the repository's root).
func event(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ses-events", name))
	require.NoError(t, err)
	return raw
}

// TestStartLogsEachEvent: the handler of a cold start writes one JSON line
// per SES event to stdout, naming the notification, and never fails the
// invocation, not even for a payload that is not an event.
func TestStartLogsEachEvent(t *testing.T) { // t.Setenv: not parallel
	t.Setenv("HERALD_LOG_LEVEL", "")
	var stdout bytes.Buffer
	handle, err := start(&stdout)
	require.NoError(t, err)
	// As Lambda invokes it: the event's JSON in, null out.
	out, err := lambda.NewHandler(handle).Invoke(context.Background(), event(t, "delivery.json"))
	require.NoError(t, err)
	require.Equal(t, "null", string(out))
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 1)
	require.Contains(t, lines[0], `"msg":"email_event"`)
	require.Contains(t, lines[0], `"id":"welcome-jana.2026:1"`, "the notification, from its SES tag")

	require.NoError(t, handle(context.Background(), []byte(`[1,2]`)))
	require.Contains(t, stdout.String(), `"msg":"email_event_unreadable"`)
}

// TestStartLogLevel: HERALD_LOG_LEVEL sets the lowest level written: at
// WARN a delivery (INFO) is not written, a bounce (WARN) is.
func TestStartLogLevel(t *testing.T) {
	t.Setenv("HERALD_LOG_LEVEL", "WARN")
	var stdout bytes.Buffer
	handle, err := start(&stdout)
	require.NoError(t, err)
	require.NoError(t, handle(context.Background(), event(t, "delivery.json")))
	require.Empty(t, stdout.String())
	require.NoError(t, handle(context.Background(), event(t, "bounce.json")))
	require.Contains(t, stdout.String(), `"level":"WARN"`)
}

// TestStartRefusesABadConfiguration: the cold start fails, naming the
// variable.
func TestStartRefusesABadConfiguration(t *testing.T) {
	t.Setenv("HERALD_LOG_LEVEL", "loud")
	handle, err := start(&bytes.Buffer{})
	require.Nil(t, handle)
	require.ErrorContains(t, err, "configuration: HERALD_LOG_LEVEL")
}
