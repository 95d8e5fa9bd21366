package deadletter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
)

// A message_too_large dead letter keeps only the head of its body. Sent
// back, that head is not the notification: it would be dead-lettered again
// as invalid_message, and the reason saying the original's size and digest
// would be lost with the deleted dead letter. Redrive fails it and keeps it.
func TestRedriveRefusesACutBody(t *testing.T) {
	t.Parallel()
	const dlq, queue = dlqURL, mainURL
	w, client, ids := newSQSWire(t, dlq, 0, `{"version":1,"id":"big-1","channel":"webhook","webhook":{"payload":"xxxx`, `{"version":1,"id":"ok-1"}`)
	ctx := context.Background()
	letters, err := Scan(ctx, client, dlq, time.Minute)
	require.NoError(t, err)
	require.Len(t, letters, 2)
	for i := range letters {
		if letters[i].MessageID == ids[0] {
			letters[i].Reason = &redrive.Reason{ErrorClass: processor.ClassMessageTooLarge, OriginalBodyBytes: 1_040_000, OriginalBodySHA256: "ab"}
		}
	}
	rep, err := Redrive(ctx, client, dlq, queue, letters, func(*Letter) bool { return true }, false)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Sent)
	require.Equal(t, 1, rep.Failed)
	require.Equal(t, []string{`{"version":1,"id":"ok-1"}`}, bodies(w, queue), "the cut body is not sent")
	for _, r := range rep.Results {
		if r.MessageID == ids[0] {
			require.Equal(t, ActionFailed, r.Action)
			require.Contains(t, r.Error, "1040000")
		}
	}
	visible, hidden := w.Counts(dlq)
	require.Equal(t, 1, visible, "the cut dead letter stays, visible again")
	require.Zero(t, hidden)
}

func TestRedriveDryRunShowsACutBodyFails(t *testing.T) {
	t.Parallel()
	l := Letter{MessageID: "m-1", Body: "{", Reason: &redrive.Reason{ErrorClass: processor.ClassMessageTooLarge, OriginalBodyBytes: 2_000_000}}
	rep, err := Redrive(context.Background(), nil, "dlq", "q", []Letter{l}, func(*Letter) bool { return true }, true)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Failed)
	require.Equal(t, ActionFailed, rep.Results[0].Action)
}

// Send comes before delete: when the delete fails the letter is in both
// queues, reported failed, and made visible again in the dead-letter queue.
func TestRedriveSentButNotDeletedIsFailedAndKept(t *testing.T) {
	t.Parallel()
	const dlq, queue = dlqURL, mainURL
	w, client, _ := newSQSWire(t, dlq, 0, `{"version":1,"id":"a-1"}`)
	ctx := context.Background()
	letters, err := Scan(ctx, client, dlq, time.Minute)
	require.NoError(t, err)
	w.FailAction("DeleteMessage")
	rep, err := Redrive(ctx, client, dlq, queue, letters, func(*Letter) bool { return true }, false)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Failed)
	require.Zero(t, rep.Sent)
	sent := w.Messages(queue)
	require.Len(t, sent, 1)
	require.Equal(t, sent[0].ID, rep.Results[0].NewMessageID)
	require.Contains(t, rep.Results[0].Error, "in both")
	visible, hidden := w.Counts(dlq)
	require.Equal(t, 1, visible)
	require.Zero(t, hidden)
}

// A body exactly as long as the reason's original_body_bytes is whole: it
// is sent back (only a shorter one is a cut head).
func TestRedriveSendsABodyOfTheOriginalSize(t *testing.T) {
	t.Parallel()
	body := `{"version":1,"id":"whole-1"}`
	for _, tc := range []struct {
		original int
		action   string
	}{{len(body), ActionWouldSend}, {len(body) + 1, ActionFailed}} {
		l := Letter{MessageID: "m-1", Body: body, Reason: &redrive.Reason{ErrorClass: processor.ClassMessageTooLarge, OriginalBodyBytes: tc.original}}
		rep, err := Redrive(context.Background(), nil, dlqURL, mainURL, []Letter{l}, func(*Letter) bool { return true }, true)
		require.NoError(t, err)
		require.Equal(t, tc.action, rep.Results[0].Action, "original %d bytes, body %d", tc.original, len(body))
	}
}

// A send SQS refuses fails the letter, which stays in the dead-letter
// queue, visible again; the others go on.
func TestRedriveSendRefusedIsFailedAndKept(t *testing.T) {
	t.Parallel()
	w, client, _ := newSQSWire(t, dlqURL, 0, `{"version":1,"id":"a-1"}`, `{"version":1,"id":"a-2"}`)
	ctx := context.Background()
	letters, err := Scan(ctx, client, dlqURL, time.Minute)
	require.NoError(t, err)
	w.FailAction("SendMessage")
	rep, err := Redrive(ctx, client, dlqURL, mainURL, letters, func(*Letter) bool { return true }, false)
	require.NoError(t, err)
	require.Equal(t, 2, rep.Failed)
	require.Zero(t, rep.Sent)
	for _, r := range rep.Results {
		require.Equal(t, ActionFailed, r.Action)
		require.Contains(t, r.Error, "send to "+mainURL)
	}
	visible, hidden := w.Counts(dlqURL)
	require.Equal(t, 2, visible)
	require.Zero(t, hidden)
}
