package retention_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/retention"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

const dlqURL = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq"

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type bundle struct {
	sqs  *sqstest.Server
	s    *retention.Sweeper
	logs *bytes.Buffer
}

// setup builds a sweeper with MaxAge 7 days over an empty dead-letter queue
// in the SQS wire fake; sweeper and fake share the clock now.
func setup(t *testing.T, mutate func(*retention.Config)) *bundle {
	t.Helper()
	srv := sqstest.New(t)
	srv.SetNow(func() time.Time { return now })
	srv.AddQueue(dlqURL, nil)
	b := &bundle{sqs: srv, logs: &bytes.Buffer{}}
	cfg := retention.Config{
		QueueURL: dlqURL,
		MaxAge:   7 * 24 * time.Hour,
		Logger:   slog.New(slog.NewJSONHandler(b.logs, nil)),
		Now:      func() time.Time { return now },
	}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := retention.New(srv.Client(), cfg)
	require.NoError(t, err)
	b.s = s
	return b
}

// withReason returns a herald.reason attribute as the processor writes it,
// with the original message's SentTimestamp.
func withReason(t *testing.T, originalSent time.Time) map[string]sqstest.MessageAttribute {
	t.Helper()
	r := redrive.Reason{Outcome: "permanent_failure", ErrorClass: "webhook_gone", SourceMessageID: "src"}
	if !originalSent.IsZero() {
		r.OriginalSentTimestamp = originalSent.UnixMilli()
	}
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	return map[string]sqstest.MessageAttribute{redrive.AttrReason: {DataType: "String", StringValue: aws.String(string(raw))}}
}

func bodies(msgs []sqstest.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.Body)
	}
	return out
}

// TestSweepAgeRule: a dead letter at least MaxAge old is deleted, a younger
// one kept; the boundary is exact to the millisecond of SentTimestamp.
func TestSweepAgeRule(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	maxAge := 7 * 24 * time.Hour
	b.sqs.Put(dlqURL, "exactly max age", now.Add(-maxAge), nil)
	b.sqs.Put(dlqURL, "1 ms younger", now.Add(-maxAge+time.Millisecond), nil)
	b.sqs.Put(dlqURL, "1 ms older", now.Add(-maxAge-time.Millisecond), nil)
	b.sqs.Put(dlqURL, "fresh", now, nil)
	b.sqs.Put(dlqURL, "a year old", now.AddDate(-1, 0, 0), nil)

	sum, err := b.s.Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, retention.Summary{Scanned: 5, Deleted: 3, Kept: 2}, sum)
	require.Equal(t, []string{"1 ms younger", "fresh"}, bodies(b.sqs.Messages(dlqURL)))
}

// TestSweepMeasuresAgeFromTheReasonsOriginalTimestamp: herald's own
// dead-letter move makes a new message, so its SentTimestamp is the move's;
// the age counts from the reason's original_sent_timestamp.
func TestSweepMeasuresAgeFromTheReasonsOriginalTimestamp(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.sqs.Put(dlqURL, "moved today, sent 8 days ago", now, withReason(t, now.Add(-8*24*time.Hour)))
	b.sqs.Put(dlqURL, "moved 8 days ago?, sent today", now.Add(-8*24*time.Hour), withReason(t, now))
	b.sqs.Put(dlqURL, "reason without timestamp, moved 8 days ago", now.Add(-8*24*time.Hour), withReason(t, time.Time{}))
	b.sqs.Put(dlqURL, "reason without timestamp, moved today", now, withReason(t, time.Time{}))

	sum, err := b.s.Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, retention.Summary{Scanned: 4, Deleted: 2, Kept: 2}, sum)
	require.Equal(t, []string{"moved 8 days ago?, sent today", "reason without timestamp, moved today"}, bodies(b.sqs.Messages(dlqURL)))
}

// TestSweepMakesKeptLettersVisibleAgain: the young dead letters, more than
// one batch of them, are visible again at once after the sweep, each
// received once.
func TestSweepMakesKeptLettersVisibleAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for i := range 23 {
		b.sqs.Put(dlqURL, fmt.Sprint("young ", i), now.Add(-time.Hour), nil)
	}
	sum, err := b.s.Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, retention.Summary{Scanned: 23, Kept: 23}, sum)
	msgs := b.sqs.Messages(dlqURL)
	require.Len(t, msgs, 23)
	for _, m := range msgs {
		require.Equal(t, 1, m.ReceiveCount, m.Body)
		require.False(t, m.VisibleAt.After(now), "%s visible again at once", m.Body)
	}
	require.Len(t, b.sqs.Requests("ChangeMessageVisibilityBatch"), 3, "⌈23/10⌉ calls")
}

// TestSweepHoldsReceivedLettersForTheSweep: each receive hides the letters
// for Hold, so none comes back within the sweep.
func TestSweepHoldsReceivedLettersForTheSweep(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *retention.Config) { c.Hold = 10 * time.Minute })
	b.sqs.Put(dlqURL, "young", now, nil)
	_, err := b.s.Sweep(context.Background())
	require.NoError(t, err)
	var in struct{ VisibilityTimeout int }
	require.NoError(t, json.Unmarshal(b.sqs.Requests("ReceiveMessage")[0], &in))
	require.Equal(t, 600, in.VisibilityTimeout)

	d := setup(t, nil)
	d.sqs.Put(dlqURL, "young", now, nil)
	_, err = d.s.Sweep(context.Background())
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(d.sqs.Requests("ReceiveMessage")[0], &in))
	require.Equal(t, 900, in.VisibilityTimeout, "the default hold is 15 minutes")
}

// TestSweepCountsFailedDeletes: a delete SQS refuses is counted failed and
// the letter stays for the next sweep; the others are deleted.
func TestSweepCountsFailedDeletes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	stuck := b.sqs.Put(dlqURL, "old, delete fails", now.AddDate(0, 0, -30), nil)
	b.sqs.Put(dlqURL, "old", now.AddDate(0, 0, -30), nil)
	b.sqs.FailMessage("DeleteMessageBatch", stuck)
	sum, err := b.s.Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, retention.Summary{Scanned: 2, Deleted: 1, Failed: 1}, sum)
	require.Equal(t, []string{"old, delete fails"}, bodies(b.sqs.Messages(dlqURL)))
	require.Contains(t, b.logs.String(), `"msg":"dead letter deleted"`)
	require.Equal(t, 1, bytes.Count(b.logs.Bytes(), []byte(`"dead letter deleted"`)))
}

// TestSweepReportsAFailedDeleteCall: when the whole DeleteMessageBatch call
// fails, the sweep stops with an error naming it and counts the letters
// failed; the kept ones are still made visible.
func TestSweepReportsAFailedDeleteCall(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.sqs.Put(dlqURL, "old", now.AddDate(0, 0, -30), nil)
	b.sqs.Put(dlqURL, "young", now, nil)
	b.sqs.FailAction("DeleteMessageBatch")
	sum, err := b.s.Sweep(context.Background())
	require.ErrorContains(t, err, "delete from dead-letter queue")
	require.Equal(t, retention.Summary{Scanned: 2, Kept: 1, Failed: 1}, sum)
	for _, m := range b.sqs.Messages(dlqURL) {
		if m.Body == "young" {
			require.False(t, m.VisibleAt.After(now))
		}
	}
}

// TestSweepReportsKeptLettersLeftHidden: a visibility change SQS refuses,
// for one entry or the whole call, is an error, not silence.
func TestSweepReportsKeptLettersLeftHidden(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	hidden := b.sqs.Put(dlqURL, "young, change fails", now, nil)
	b.sqs.Put(dlqURL, "young", now, nil)
	b.sqs.FailMessage("ChangeMessageVisibilityBatch", hidden)
	sum, err := b.s.Sweep(context.Background())
	require.ErrorContains(t, err, "1 of 2 stay hidden")
	require.Equal(t, retention.Summary{Scanned: 2, Kept: 2}, sum)
	for _, m := range b.sqs.Messages(dlqURL) {
		require.Equal(t, m.Body == "young", !m.VisibleAt.After(now), m.Body)
	}

	c := setup(t, nil)
	c.sqs.Put(dlqURL, "young", now, nil)
	c.sqs.FailAction("ChangeMessageVisibilityBatch")
	_, err = c.s.Sweep(context.Background())
	require.ErrorContains(t, err, "make kept dead letters visible")
}

// TestSweepReportsAFailedReceive: a receive that fails for another reason
// than the sweep's time is an error.
func TestSweepReportsAFailedReceive(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.sqs.FailAction("ReceiveMessage")
	_, err := b.s.Sweep(context.Background())
	require.ErrorContains(t, err, "receive from dead-letter queue")
}

// TestSweepStopsWithinTheReserve: with less time left than Reserve the sweep
// receives nothing and returns without an error.
func TestSweepStopsWithinTheReserve(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *retention.Config) { c.Reserve = time.Minute })
	b.sqs.Put(dlqURL, "old", now.AddDate(0, 0, -30), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, err := b.s.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, retention.Summary{}, sum)
	require.Len(t, b.sqs.Messages(dlqURL), 1)
}

// TestSweepDefaultReserveIsFiveSeconds: without a Reserve the sweep keeps 5
// s: a deadline 4 s away leaves no time to sweep, one 60 s away does.
func TestSweepDefaultReserveIsFiveSeconds(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.sqs.Put(dlqURL, "old", now.AddDate(0, 0, -30), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	sum, err := b.s.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, retention.Summary{}, sum, "4 s left is within the default reserve")
	require.Len(t, b.sqs.Messages(dlqURL), 1)

	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err = b.s.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Deleted, "60 s left is past the default reserve")
}

func TestNewRejectsIncompleteConfig(t *testing.T) {
	t.Parallel()
	client := sqstest.New(t).Client()
	for name, cfg := range map[string]retention.Config{
		"no queue":     {MaxAge: time.Hour},
		"zero max age": {QueueURL: dlqURL},
		"negative age": {QueueURL: dlqURL, MaxAge: -time.Hour},
	} {
		_, err := retention.New(client, cfg)
		require.Error(t, err, name)
	}
	_, err := retention.New(nil, retention.Config{QueueURL: dlqURL, MaxAge: time.Hour})
	require.Error(t, err, "nil API")
	_, err = retention.New(client, retention.Config{QueueURL: dlqURL, MaxAge: time.Millisecond})
	require.NoError(t, err)
}

// TestSweepAllSweepsEveryDeadLetterQueue: each channel's dead-letter queue
// is swept; one that fails (here: a queue that does not exist) is named
// in the error and does not stop the next; the summaries add up.
func TestSweepAllSweepsEveryDeadLetterQueue(t *testing.T) {
	t.Parallel()
	const emailDLQ = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-email-dlq"
	b := setup(t, nil)
	b.sqs.AddQueue(emailDLQ, nil)
	b.sqs.Put(dlqURL, "old webhook", now.Add(-8*24*time.Hour), nil)
	b.sqs.Put(emailDLQ, "old email", now.Add(-8*24*time.Hour), nil)
	b.sqs.Put(emailDLQ, "young email", now.Add(-time.Hour), nil)
	var sweepers []*retention.Sweeper
	for _, u := range []string{"https://sqs.us-east-1.amazonaws.com/123456789012/gone-dlq", emailDLQ, dlqURL} {
		s, err := retention.New(b.sqs.Client(), retention.Config{QueueURL: u, MaxAge: 7 * 24 * time.Hour, Now: func() time.Time { return now }, Logger: slog.New(slog.NewJSONHandler(b.logs, nil))})
		require.NoError(t, err)
		sweepers = append(sweepers, s)
	}
	sum, err := retention.SweepAll(context.Background(), sweepers)
	require.ErrorContains(t, err, "sweep https://sqs.us-east-1.amazonaws.com/123456789012/gone-dlq")
	require.Equal(t, retention.Summary{Scanned: 3, Deleted: 2, Kept: 1}, sum)
	require.Equal(t, []string{"young email"}, bodies(b.sqs.Messages(emailDLQ)))
	require.Empty(t, b.sqs.Messages(dlqURL))
}
