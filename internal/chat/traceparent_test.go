package chat_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/tracecontext"
	"github.com/heraldhq/herald/notification"
)

// TestPostCarriesTraceParent: a chat post carries the send's span as W3C
// traceparent, for a receiver (a chat proxy, a Teams workflow) to join the
// trace; untraced, it carries none.
func TestPostCarriesTraceParent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx, err := tracecontext.FromTraceParent(context.Background(), tp)
	require.NoError(t, err)
	require.NoError(t, b.sender.Send(ctx, message(t, "tp-1", notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T1/B1/tok1", Text: "traced"})))
	require.NoError(t, b.sender.Send(context.Background(), message(t, "tp-2", notification.Chat{Service: "slack", URL: b.slack.URL() + "/services/T1/B1/tok1", Text: "untraced"})))
	got := b.slack.Received()
	require.Len(t, got, 2)
	require.Equal(t, []string{tp}, got[0].Header.Values("traceparent"))
	require.Empty(t, got[1].Header.Values("traceparent"))
}
