package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/deadletter"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/producer"
)

// newDLQWire starts the shared SQS wire fake (package sqstest) with a
// dead-letter queue dlq holding bodies (on a FIFO queue, all in one message
// group) and the main queue queue, and points the SDK's default chain, as
// herald reads it, at it.
func newDLQWire(t *testing.T, dlq, queue string, bodies ...string) *sqstest.Server {
	w := sqstest.New(t)
	w.AddQueue(w.URL()+dlq, nil)
	w.AddQueue(w.URL()+queue, nil)
	sentAt := time.Unix(1_799_000_000, 0)
	for _, b := range bodies {
		if producer.IsFIFO(dlq) {
			w.PutInGroup(w.URL()+dlq, "g", b, sentAt, nil)
		} else {
			w.Put(w.URL()+dlq, b, sentAt, nil)
		}
	}
	t.Setenv("AWS_ENDPOINT_URL", w.URL())
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	return w
}

// heraldCtx is herald with a context of the test's.
func heraldCtx(ctx context.Context, args ...string) result {
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" },
		now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	code := execute(ctx, e, args)
	return result{code, out.String(), errOut.String()}
}

// Ctrl-C during a redrive stops before the next dead letter; the command
// must then not exit 0 as if the selection had been redriven.
func TestDLQRedriveInterruptedExitsNonZero(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q", `{"id":"a-1"}`, `{"id":"a-2"}`, `{"id":"a-3"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.OnSend(cancel) // the signal arrives while the first letter is sent
	r := heraldCtx(ctx, "dlq", "redrive", "--all", "--dlq-url", w.URL()+"/dlq", "--queue-url", w.URL()+"/q")
	require.Len(t, w.Messages(w.URL()+"/q"), 1, "%+v", r)
	require.Contains(t, r.stdout, "sent 1, skipped 2, failed 0")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "interrupted")
	visible, hidden := w.Counts(w.URL() + "/dlq")
	require.Equal(t, 2, visible, "the letters not redriven are visible again")
	require.Zero(t, hidden)
}

// A FIFO dead-letter queue returns no more of a message group while the
// scan holds some of it: with 13 letters in one group, ls and redrive see
// 10. They must say the view is partial and exit 1, not report it as all.
func TestDLQOnFIFOQueueSaysWhenItReadOnlyPart(t *testing.T) {
	var bodies []string
	for i := range 13 {
		bodies = append(bodies, fmt.Sprintf(`{"id":"f-%02d"}`, i))
	}
	w := newDLQWire(t, "/dlq.fifo", "/q.fifo", bodies...)
	dlq, queue := "--dlq-url="+w.URL()+"/dlq.fifo", "--queue-url="+w.URL()+"/q.fifo"
	ctx := context.Background()

	r := heraldCtx(ctx, "dlq", "ls", dlq)
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "about 3 more")
	require.Contains(t, r.stderr, "10 of 10 dead letters shown")
	visible, _ := w.Counts(w.URL() + "/dlq.fifo")
	require.Equal(t, 13, visible, "nothing consumed")

	r = heraldCtx(ctx, "dlq", "redrive", "--all", dlq, queue)
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stdout, "sent 10, skipped 0, failed 0")
	require.Contains(t, r.stderr, "about 3 more")

	r = heraldCtx(ctx, "dlq", "redrive", "--all", dlq, queue)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "sent 3, skipped 0, failed 0")
	require.Len(t, w.Messages(w.URL()+"/q.fifo"), 13)
}

// dlq show of a letter the redrive policy moved while it still carried the
// herald.reason of an earlier dead-lettering says the redrive policy moved
// it and shows the old reason as earlier, never as the current one.
func TestDLQShowOfALetterMovedAgainByTheRedrivePolicy(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q")
	reason := `{"outcome":"permanent_failure","error_class":"webhook_gone","error":"410","attempts":1,"failed_at":"2026-11-30T10:00:00.000Z","source_message_id":"src-1"}`
	id := w.Put(w.URL()+"/q", `{"version":1,"id":"n-1","channel":"webhook"}`, time.Unix(1_799_000_000, 0), map[string]sqstest.MessageAttribute{
		"herald.reason": {DataType: "String", StringValue: &reason},
	})
	w.MoveByRedrivePolicy(w.URL()+"/q", w.URL()+"/dlq", id)
	r := heraldCtx(context.Background(), "dlq", "show", "n-1", "--dlq-url", w.URL()+"/dlq")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "moved by:        redrive_policy")
	require.Contains(t, r.stdout, "earlier reason:  webhook_gone (permanent_failure, failed at 2026-11-30T10:00:00.000Z), from an earlier dead-lettering")
	require.NotContains(t, r.stdout, "error class:")
	require.NotContains(t, r.stdout, "outcome:")
}

// TestLsRowAttempts: a letter's attempts are shown from 1; none (0, a
// letter without herald's reason) leaves the cell empty.
func TestLsRowAttempts(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	i := indexOf(lsHeader, "ATTEMPTS")
	empty, _ := lsRow(&deadletter.Letter{}, now)
	require.Equal(t, "", empty[i])
	two, _ := lsRow(&deadletter.Letter{Attempts: 2}, now)
	require.Equal(t, "2", two[i])
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	panic("no column " + s)
}

// TestDLQLsCountsLettersHeldByAnotherReader: ls lists what it can read and
// says how many more another reader holds; when the letters it read cannot
// be made visible again it says so and fails.
func TestDLQLsCountsLettersHeldByAnotherReader(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q", `{"id":"a-1"}`, `{"id":"a-2"}`)
	ctx := context.Background()
	_, err := w.Client().ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.URL() + "/dlq"), VisibilityTimeout: 600})
	require.NoError(t, err)
	r := heraldCtx(ctx, "dlq", "ls", "--dlq-url", w.URL()+"/dlq")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stderr, "1 of 1 dead letters shown; 1 more held by another reader, not listed\n")

	w2 := newDLQWire(t, "/dlq", "/q", `{"id":"b-1"}`)
	r = heraldCtx(ctx, "dlq", "ls", "--dlq-url", w2.URL()+"/dlq")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stderr, "1 of 1 dead letters shown\n", "none held: nothing more said")

	w2.FailAction("ChangeMessageVisibilityBatch")
	r = heraldCtx(ctx, "dlq", "ls", "--dlq-url", w2.URL()+"/dlq")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "listed, but some dead letters stay hidden until their hold ends")
}

// TestDLQShowTwoLettersOfOneID: show prints every letter of the id, a blank
// line between two, none before the first; a reason that left attributes
// out for size says which, one that left none says nothing of them.
func TestDLQShowTwoLettersOfOneID(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q")
	for i, reason := range []string{
		`{"outcome":"permanent_failure","error_class":"webhook_gone","error":"410","attempts":1,"failed_at":"2026-11-30T10:00:00.000Z","source_message_id":"src-1","notification_id":"n-1"}`,
		`{"outcome":"permanent_failure","error_class":"webhook_gone","error":"410","attempts":2,"failed_at":"2026-11-30T11:00:00.000Z","source_message_id":"src-2","notification_id":"n-1","dropped_attributes":["trace"]}`,
	} {
		sentAt := time.Date(2026, 11, 30, 10+i, 0, 1, 0, time.UTC) // a second after failed_at: herald moved it
		w.Put(w.URL()+"/dlq", `{"version":1,"id":"n-1","channel":"webhook"}`, sentAt, map[string]sqstest.MessageAttribute{
			"herald.reason": {DataType: "String", StringValue: aws.String(reason)},
		})
	}
	r := heraldCtx(context.Background(), "dlq", "show", "n-1", "--dlq-url", w.URL()+"/dlq")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.True(t, strings.HasPrefix(r.stdout, "SQS message id:"), r.stdout)
	require.Equal(t, 1, strings.Count(r.stdout, "\n\nSQS message id:"), r.stdout)
	require.Equal(t, 1, strings.Count(r.stdout, "attributes left out for size: [trace]\n"), r.stdout)
	require.Equal(t, 1, strings.Count(r.stdout, "attributes left out"), r.stdout)
}

// A letter whose send back fails is reported in the table and in the
// counts, the command exits 1, and nothing else is said: no interruption,
// no error beyond the table's (the letters not sent were released).
func TestDLQRedriveReportsAFailedSend(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q", `{"id":"a-1"}`, `{"id":"a-2"}`, `{"id":"a-3"}`)
	w.FailAction("SendMessage")
	r := heraldCtx(context.Background(), "dlq", "redrive", "--id", "a-2", "--dlq-url", w.URL()+"/dlq", "--queue-url", w.URL()+"/q")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3, "header, one row, counts: %q", r.stdout)
	require.Regexp(t, `^ID +DEAD LETTER +ACTION +NEW SQS MESSAGE ID +ERROR$`, lines[0])
	require.Regexp(t, `^a-2 +\S+ +`+deadletter.ActionFailed+` +- +send to `, lines[1], "no new message id")
	require.Equal(t, "sent 0, skipped 2, failed 1", lines[2])
	require.Empty(t, r.stderr, "the failure is in the table; nothing was interrupted and the release went through")
	require.Empty(t, w.Messages(w.URL()+"/q"))
	visible, hidden := w.Counts(w.URL() + "/dlq")
	require.Equal(t, 3, visible, "every letter is visible again")
	require.Zero(t, hidden)
}

// Letters sent back, but the ones left could not be made visible again
// (ChangeMessageVisibilityBatch failed): the sends are reported, and so is
// the release's error, with a non-zero exit.
func TestDLQRedriveReportsAFailedRelease(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q", `{"id":"a-1"}`, `{"id":"a-2"}`, `{"id":"a-3"}`)
	w.FailAction("ChangeMessageVisibilityBatch")
	r := heraldCtx(context.Background(), "dlq", "redrive", "--id", "a-2", "--dlq-url", w.URL()+"/dlq", "--queue-url", w.URL()+"/q")
	require.NotEqual(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "sent 1, skipped 2, failed 0")
	require.Contains(t, r.stderr, "ChangeMessageVisibilityBatch")
	require.Len(t, w.Messages(w.URL()+"/q"), 1)
}

// An id that names no letter: nothing chosen, so no table (not a header
// alone), the counts, "not found" and exit 1.
func TestDLQRedriveOfAnIDNotThere(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q", `{"id":"a-1"}`, `{"id":"a-2"}`)
	r := heraldCtx(context.Background(), "dlq", "redrive", "--id", "nosuch", "--dlq-url", w.URL()+"/dlq", "--queue-url", w.URL()+"/q")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Equal(t, "sent 0, skipped 2, failed 0\n", r.stdout)
	require.Equal(t, "not found: nosuch\n", r.stderr)
}

// TestDLQBoundsWhatItPrints: a dead letter of a 20 KiB body, a 5,000-byte
// error and a 2,000-byte class (an unreadable herald.reason beside a long
// herald.error_class): ls cuts each cell to maxShownCell bytes and says
// so; show prints at most maxShownBody bytes of body and maxShownField of
// each field, marked, with a note naming --full; --full and --json print
// everything. (20 KiB is five times the bound; with a 200 KiB body, under
// -race and a loaded machine, a receive's answer was lost now and then and
// its letters stayed hidden for the next command: docs/testing.md.)
func TestDLQBoundsWhatItPrints(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q")
	body := `{"version":1,"id":"big-1","channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{"blob":"` + strings.Repeat("é", 10<<10) + `"}}}`
	longErr := strings.Repeat("e", 5000)
	reason := `{"outcome":"permanent_failure","error_class":"webhook_gone","error":"` + longErr + `","attempts":1,"failed_at":"2026-11-30T10:00:00.000Z","source_message_id":"src-1","notification_id":"big-1"}`
	w.Put(w.URL()+"/dlq", body, time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC), map[string]sqstest.MessageAttribute{
		"herald.reason": {DataType: "String", StringValue: aws.String(reason)},
	})
	longClass := strings.Repeat("c", 2000)
	w.Put(w.URL()+"/dlq", `{"version":1,"id":"odd-1","channel":"webhook"}`, time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC), map[string]sqstest.MessageAttribute{
		"herald.reason":      {DataType: "String", StringValue: aws.String("not json")},
		"herald.error_class": {DataType: "String", StringValue: aws.String(longClass)},
	})
	dlq := w.URL() + "/dlq"

	r := heraldCtx(context.Background(), "dlq", "ls", "--dlq-url", dlq)
	require.Equal(t, exitOK, r.code, "%+v", r)
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		require.Less(t, len(line), 8*(maxShownCell+2)+len(lsHeader)*2, "a row of bounded cells")
	}
	require.Contains(t, r.stdout, strings.Repeat("c", maxShownCell-len("…"))+"…", "stderr: %s; receives: %v", r.stderr, len(w.Requests("ReceiveMessage")))
	require.NotContains(t, r.stdout, strings.Repeat("c", maxShownCell))
	require.Contains(t, r.stderr, "cells cut at 80 bytes (…): --json prints them whole")
	r = heraldCtx(context.Background(), "--json", "dlq", "ls", "--dlq-url", dlq)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, longClass, "--json: whole")

	r = heraldCtx(context.Background(), "dlq", "show", "big-1", "--dlq-url", dlq)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Less(t, len(r.stdout), maxShownBody+maxShownField+1024, "bounded: %d bytes", len(r.stdout))
	require.Contains(t, r.stdout, "error:           "+strings.Repeat("e", maxShownField-len("…"))+"…\n")
	require.Contains(t, r.stdout, "…\n  (the first ")
	require.Contains(t, r.stdout, fmt.Sprintf(" of %d shown)", len(body)))
	require.True(t, utf8.ValidString(r.stdout), "cut on a character boundary")
	require.Contains(t, r.stderr, "`herald dlq show --full ID` prints all of it (or --json)")

	r = heraldCtx(context.Background(), "dlq", "show", "--full", "big-1", "--dlq-url", dlq)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, longErr)
	require.Contains(t, r.stdout, strings.Repeat("é", 10<<10))
	require.Empty(t, r.stderr)
	r = heraldCtx(context.Background(), "--json", "dlq", "show", "big-1", "--dlq-url", dlq)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, longErr)

	r = heraldCtx(context.Background(), "dlq", "show", "odd-1", "--dlq-url", dlq)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "error class:     "+strings.Repeat("c", maxShownField-len("…"))+"…\n")
	require.Contains(t, r.stderr, "--full")
}

// A redrive whose send's answer cannot be trusted counts it unknown, keeps
// the dead letter and exits 1; the rest of the FIFO group is held.
func TestDLQRedriveUntrustedAnswerIsUnknown(t *testing.T) {
	w := newDLQWire(t, "/dlq.fifo", "/q.fifo", `{"id":"a-1"}`, `{"id":"a-2"}`)
	w.GarbleDigest("SendMessage")
	r := heraldCtx(context.Background(), "dlq", "redrive", "--all", "--dlq-url", w.URL()+"/dlq.fifo", "--queue-url", w.URL()+"/q.fifo")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stdout, "sent 0, skipped 0, failed 1, unknown 1")
	require.Contains(t, r.stdout, deadletter.ActionHeld)
	require.Len(t, w.Messages(w.URL()+"/q.fifo"), 1, "the queue holds the unknown one")
	visible, _ := w.Counts(w.URL() + "/dlq.fifo")
	require.Equal(t, 2, visible)
}

// TestDLQBoundsWhatItPrintsOfControlCharacters: the bounds hold for what a
// terminal gets, after control characters are escaped (DEL as \x7f, 4
// bytes for 1; CSI U+009B as \u009b, 6 bytes for 2), cut between escapes,
// never inside one.
func TestDLQBoundsWhatItPrintsOfControlCharacters(t *testing.T) {
	w := newDLQWire(t, "/dlq", "/q")
	body := `{"version":1,"id":"ctl-1","channel":"webhook","note":"` + strings.Repeat("\u009b", 3000) + `"}`
	reason := `{"outcome":"permanent_failure","error_class":"webhook_gone","error":"` + strings.Repeat("\u007f", 2000) + `","attempts":1,"failed_at":"2026-11-30T10:00:00.000Z","source_message_id":"src-1","notification_id":"ctl-1"}`
	w.Put(w.URL()+"/dlq", body, time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC), map[string]sqstest.MessageAttribute{
		"herald.reason": {DataType: "String", StringValue: aws.String(reason)},
	})
	w.Put(w.URL()+"/dlq", `{"version":1,"id":"ctl-2","channel":"webhook"}`, time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC), map[string]sqstest.MessageAttribute{
		"herald.reason":      {DataType: "String", StringValue: aws.String("not json")},
		"herald.error_class": {DataType: "String", StringValue: aws.String(strings.Repeat("\u009b", 500))},
	})
	dlq := w.URL() + "/dlq"

	r := heraldCtx(context.Background(), "dlq", "ls", "--dlq-url", dlq)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.NotContains(t, r.stdout, "\u009b")
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		for _, c := range strings.Fields(line) {
			require.LessOrEqual(t, len(c), maxShownCell, "a cell as printed: %q", c)
		}
	}
	require.Contains(t, r.stdout, strings.Repeat(`\u009b`, (maxShownCell-len("…"))/6)+"…")

	r = heraldCtx(context.Background(), "dlq", "show", "ctl-1", "--dlq-url", dlq)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.NotContains(t, r.stdout, "\u009b")
	require.NotContains(t, r.stdout, "\u007f")
	require.Contains(t, r.stdout, "error:           "+strings.Repeat(`\x7f`, (maxShownField-len("…"))/4)+"…\n")
	require.Less(t, len(r.stdout), maxShownBody+maxShownField+1024, "bounded as printed: %d bytes", len(r.stdout))

	r = heraldCtx(context.Background(), "dlq", "show", "--full", "ctl-1", "--dlq-url", dlq)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, strings.Repeat(`\x7f`, 2000), "--full: all of it, escaped")
}
