package deadletter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// A FIFO message group's dead letters go back in the group's order, stop
// at the group's first letter not sent, and keep their place when they are
// dead-lettered again. The queues are sqstest's FIFO queues: a source
// queue whose dead-letter queue receives letters as herald sends them
// (SendMessage with a herald.reason, its failed_at) and as the redrive
// policy moves them (MoveByRedrivePolicy: no reason, no failure time, a new
// SequenceNumber).

const (
	fifoSrcURL = "https://sqs.us-east-1.amazonaws.com/1/q.fifo"
	// fifoDLQ is the dead-letter queue of fifoSrcURL (fifoDLQURL is
	// another test's).
	fifoDLQ = "https://sqs.us-east-1.amazonaws.com/1/order-dlq.fifo"
)

type fifoQueues struct {
	w      *sqstest.Server
	client *sqs.Client
	t0     time.Time
}

func newFIFOQueues(t *testing.T) *fifoQueues {
	t.Helper()
	w := sqstest.New(t)
	w.AddQueue(fifoSrcURL, nil)
	w.AddQueue(fifoDLQ, nil)
	t0 := time.Unix(1_800_000_000, 0)
	w.SetReceiveClock(t0, receiveCost)
	return &fifoQueues{w: w, client: w.Client(), t0: t0}
}

// byPolicy puts id's notification in group g of the source queue and has
// the redrive policy move it.
func (q *fifoQueues) byPolicy(g, id string) {
	msg := q.w.PutInGroup(fifoSrcURL, g, `{"version":1,"id":"`+id+`"}`, q.t0, nil)
	q.w.MoveByRedrivePolicy(fifoSrcURL, fifoDLQ, msg)
}

// byHerald sends id's notification of group g to the dead-letter queue as
// the deliver function does, failed at failedAt.
func (q *fifoQueues) byHerald(t *testing.T, g, id string, failedAt time.Time) {
	t.Helper()
	_, err := q.client.SendMessage(context.Background(), &sqs.SendMessageInput{
		QueueUrl: aws.String(fifoDLQ), MessageBody: aws.String(`{"version":1,"id":"` + id + `"}`),
		MessageGroupId: aws.String(g), MessageDeduplicationId: aws.String("src-" + id),
		MessageAttributes: map[string]types.MessageAttributeValue{
			redrive.AttrReason:     str(reasonJSON(t, "webhook_http_5xx", failedAt)),
			redrive.AttrErrorClass: str("webhook_http_5xx"),
		},
	})
	require.NoError(t, err)
}

// redrive scans the dead-letter queue and redrives the letters ids names
// (all when none) to the source queue.
func (q *fifoQueues) redrive(t *testing.T, ids ...string) Report {
	t.Helper()
	ctx := context.Background()
	letters, err := Scan(ctx, q.client, fifoDLQ, time.Minute)
	require.NoError(t, err)
	f := Filter{IDs: ids}
	rep, err := Redrive(ctx, q.client, fifoDLQ, fifoSrcURL, letters, func(l *Letter) bool { return f.Match(l, q.t0) }, false)
	require.NoError(t, err)
	return rep
}

// sentIDs are the notification ids in the source queue, in the order SQS
// stored them.
func (q *fifoQueues) sentIDs() []string {
	var out []string
	for _, b := range bodies(q.w, fifoSrcURL) {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(b, `{"version":1,"id":"`), `"}`))
	}
	return out
}

// n-9, n-10 and n-11, moved by the redrive policy without a failure time,
// go back as n-9, n-10, n-11: not sorted as text (n-10, n-11, n-9), also
// when named with --id.
func TestRedriveKeepsAGroupsOrderWithoutFailureTimes(t *testing.T) {
	t.Parallel()
	for _, ids := range [][]string{nil, {"n-10", "n-9"}} {
		q := newFIFOQueues(t)
		for _, id := range []string{"n-9", "n-10", "n-11"} {
			q.byPolicy("n", id)
		}
		rep := q.redrive(t, ids...)
		require.Zero(t, rep.Failed)
		want := []string{"n-9", "n-10", "n-11"}
		if ids != nil {
			want = want[:2]
		}
		require.Equal(t, want, q.sentIDs(), "chosen %v", ids)
	}
}

// A letter the redrive policy moved has no failure time; it keeps its place
// between letters herald moved before and after it, and across groups each
// keeps its own order.
func TestRedriveKeepsAGroupsOrderAcrossMovers(t *testing.T) {
	t.Parallel()
	q := newFIFOQueues(t)
	q.byHerald(t, "a", "a-1", q.t0.Add(time.Minute))
	q.byPolicy("b", "b-1")
	q.byPolicy("a", "a-2")
	q.byHerald(t, "b", "b-2", q.t0.Add(30*time.Second)) // failed earlier than a-1: not an order across groups
	q.byHerald(t, "a", "a-3", q.t0.Add(2*time.Minute))
	rep := q.redrive(t)
	require.Equal(t, 5, rep.Sent)
	var a, b []string
	for _, id := range q.sentIDs() {
		if id[0] == 'a' {
			a = append(a, id)
		} else {
			b = append(b, id)
		}
	}
	require.Equal(t, []string{"a-1", "a-2", "a-3"}, a)
	require.Equal(t, []string{"b-1", "b-2"}, b)
}

// A group stops at its first letter not sent: a-3 is held (never
// attempted) and stays with a-2; group b goes on.
func TestRedriveStopsAGroupAtItsFirstFailure(t *testing.T) {
	t.Parallel()
	q := newFIFOQueues(t)
	for _, id := range []string{"a-1", "a-2", "a-3"} {
		q.byPolicy("a", id)
	}
	q.byPolicy("b", "b-1")
	q.w.FailSendContaining(`"id":"a-2"`)
	rep := q.redrive(t)
	require.Equal(t, []string{"a-1", "b-1"}, q.sentIDs())
	require.Equal(t, 2, rep.Sent)
	require.Equal(t, 2, rep.Failed)
	actions := map[string]string{}
	for _, r := range rep.Results {
		actions[r.NotificationID] = r.Action
	}
	require.Equal(t, map[string]string{"a-1": ActionSent, "a-2": ActionFailed, "a-3": ActionHeld, "b-1": ActionSent}, actions)
	require.Len(t, q.w.Requests("SendMessage"), 3, "a-3 is not tried")
	visible, hidden := q.w.Counts(fifoDLQ)
	require.Equal(t, 2, visible, "a-2 and a-3 stay, visible again")
	require.Zero(t, hidden)
	// The next redrive sends them in order once a-2 can go.
	q2 := newFIFOQueues(t)
	for _, id := range []string{"a-1", "a-2", "a-3"} {
		q2.byPolicy("a", id)
	}
	require.Equal(t, 3, q2.redrive(t).Sent)
}

// A cut body fails before any send: its group stops there too, in a dry
// run as well.
func TestRedriveHoldsAGroupBehindACutBody(t *testing.T) {
	t.Parallel()
	for _, dryRun := range []bool{false, true} {
		letters := []Letter{
			{MessageID: "m-1", NotificationID: "a-1", Body: "{", GroupID: "a", SequenceNumber: "1", Reason: &redrive.Reason{ErrorClass: processor.ClassMessageTooLarge, OriginalBodyBytes: 2_000_000}},
			{MessageID: "m-2", NotificationID: "a-2", Body: "{}", GroupID: "a", SequenceNumber: "2"},
		}
		rep, err := Redrive(context.Background(), nil, fifoDLQ, fifoSrcURL, letters, func(*Letter) bool { return true }, dryRun)
		require.NoError(t, err)
		require.Equal(t, ActionFailed, rep.Results[0].Action, "dry run %v", dryRun)
		require.Equal(t, ActionHeld, rep.Results[1].Action)
		require.Contains(t, rep.Results[1].Error, "m-1")
	}
}

// A send whose answer cannot be trusted is unknown, not failed: the queue
// holds it, the dead letter stays, the result says how to check, and the
// rest of the group is held.
func TestRedriveUntrustedAnswerIsUnknown(t *testing.T) {
	t.Parallel()
	q := newFIFOQueues(t)
	q.byPolicy("a", "a-1")
	q.byPolicy("a", "a-2")
	q.w.GarbleDigest("SendMessage")
	rep := q.redrive(t)
	require.Equal(t, 1, rep.Unknown)
	require.Equal(t, 1, rep.Failed)
	require.Zero(t, rep.Sent)
	require.Equal(t, ActionUnknown, rep.Results[0].Action)
	require.Contains(t, rep.Results[0].Error, fifoSrcURL)
	require.Contains(t, rep.Results[0].Error, "redrive-"+rep.Results[0].MessageID)
	require.Equal(t, ActionHeld, rep.Results[1].Action)
	require.Equal(t, []string{"a-1"}, q.sentIDs(), "the queue holds the unknown one")
	visible, _ := q.w.Counts(fifoDLQ)
	require.Equal(t, 2, visible, "both dead letters stay")
}

// A letter herald redrove that is dead-lettered again keeps its place
// before the letters of its group that stayed, whichever moves it back.
func TestRedrivenLetterKeepsItsPlaceWhenDeadLetteredAgain(t *testing.T) {
	t.Parallel()
	q := newFIFOQueues(t)
	q.byPolicy("a", "a-1")
	q.byPolicy("a", "a-2")
	require.Equal(t, 1, q.redrive(t, "a-1").Sent)
	back := q.w.Messages(fifoSrcURL)
	require.Len(t, back, 1)
	require.Contains(t, back[0].MsgAttrs, AttrSequenceNumber)
	q.w.MoveByRedrivePolicy(fifoSrcURL, fifoDLQ, back[0].ID) // failed again
	letters, err := Scan(context.Background(), q.client, fifoDLQ, time.Minute)
	require.NoError(t, err)
	require.Equal(t, "a-1", letters[0].NotificationID)
	require.Equal(t, "a-2", letters[1].NotificationID)
	require.Nil(t, ProducerAttributes(&letters[0]), "herald's attribute is not the producer's")
}

func TestCompareSequenceNumbers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"9", "10", -1},
		{"10", "9", 1},
		{"0010", "10", 0},
		{"18849496460467696128", "18849496460467696129", -1},
		{"340282366920938463463374607431768211455", "18849496460467696128", 1},
	} {
		require.Equal(t, tc.want, CompareSequenceNumbers(tc.a, tc.b), "%s vs %s", tc.a, tc.b)
	}
}

// The sequence number rides along on a FIFO send when the producer's
// attributes leave room, and never on a standard queue.
func TestSendBackInputCarriesTheSequenceNumber(t *testing.T) {
	t.Parallel()
	l := &Letter{MessageID: "m-1", Body: "b", GroupID: "g", SequenceNumber: "18849496460467696128"}
	in := SendBackInput(l, fifoSrcURL)
	require.Equal(t, "18849496460467696128", aws.ToString(in.MessageAttributes[AttrSequenceNumber].StringValue))
	require.Nil(t, SendBackInput(l, mainURL).MessageAttributes)
	full := map[string]types.MessageAttributeValue{}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		full[n] = str(n)
	}
	l.attributes = full
	in = SendBackInput(l, fifoSrcURL)
	require.Len(t, in.MessageAttributes, redrive.MaxMessageAttributes)
	require.NotContains(t, in.MessageAttributes, AttrSequenceNumber, "the producer's attributes first")
}

// A gap in the chosen letters of a group (--id n-9 --id n-11, or a class
// that leaves the group's first letter out): the letter not chosen stays,
// so the later ones are held, not sent ahead of it; other groups go on.
func TestRedriveHoldsAGroupBehindALetterNotChosen(t *testing.T) {
	t.Parallel()
	q := newFIFOQueues(t)
	for _, id := range []string{"n-9", "n-10", "n-11", "n-12"} {
		q.byPolicy("n", id)
	}
	q.byPolicy("m", "m-1")
	rep := q.redrive(t, "n-9", "n-11", "n-12", "m-1")
	require.Equal(t, []string{"n-9", "m-1"}, q.sentIDs())
	require.Equal(t, 2, rep.Sent)
	require.Equal(t, 1, rep.Skipped)
	require.Equal(t, 2, rep.Failed)
	actions := map[string]Result{}
	for _, r := range rep.Results {
		actions[r.NotificationID] = r
	}
	for _, id := range []string{"n-11", "n-12"} {
		require.Equal(t, ActionHeld, actions[id].Action, id)
		require.Contains(t, actions[id].Error, "(n-10) of message group n, before it, was not chosen and stays", id)
	}
	visible, _ := q.w.Counts(fifoDLQ)
	require.Equal(t, 3, visible, "n-10, n-11 and n-12 stay, visible again")
	// Chosen together, they go in order.
	require.Equal(t, 3, q.redrive(t, "n-10", "n-11", "n-12").Sent)
	require.Equal(t, []string{"n-9", "m-1", "n-10", "n-11", "n-12"}, q.sentIDs())

	// By class: the group's first letter, of another class, stays, and
	// holds the rest of its group.
	q = newFIFOQueues(t)
	q.byPolicy("a", "a-1")
	q.byHerald(t, "a", "a-2", q.t0.Add(time.Minute))
	q.byHerald(t, "b", "b-1", q.t0.Add(time.Minute))
	letters, err := Scan(context.Background(), q.client, fifoDLQ, time.Minute)
	require.NoError(t, err)
	f := Filter{Class: "webhook_http_5xx"}
	rep, err = Redrive(context.Background(), q.client, fifoDLQ, fifoSrcURL, letters, func(l *Letter) bool { return f.Match(l, q.t0) }, true)
	require.NoError(t, err)
	require.Equal(t, []Result{
		{NotificationID: "a-2", MessageID: rep.Results[0].MessageID, Action: ActionHeld, Error: rep.Results[0].Error},
		{NotificationID: "b-1", MessageID: rep.Results[1].MessageID, Action: ActionWouldSend},
	}, rep.Results, "a dry run shows it too")
	require.Contains(t, rep.Results[0].Error, "(a-1) of message group a, before it, was not chosen")
}

// On a standard queue, which keeps no order, a letter not chosen holds
// nothing back.
func TestRedriveStandardQueueGapHoldsNothing(t *testing.T) {
	t.Parallel()
	letters := []Letter{
		{MessageID: "d-1", NotificationID: "n-1", GroupID: "g", Body: `{}`},
		{MessageID: "d-2", NotificationID: "n-2", GroupID: "g", Body: `{}`},
	}
	rep, err := Redrive(context.Background(), nil, "https://sqs.us-east-1.amazonaws.com/1/dlq", "https://sqs.us-east-1.amazonaws.com/1/q", letters,
		func(l *Letter) bool { return l.NotificationID == "n-2" }, true)
	require.NoError(t, err)
	require.Equal(t, ActionWouldSend, rep.Results[0].Action)
	require.Equal(t, 1, rep.Skipped)
}

// A herald.sequence_number that herald's redrive did not put there (a
// producer's own attribute of that name: garbage, or a number not smaller
// than the letter's own SequenceNumber, which a number of an earlier stay
// always is) does not move the letter in its group; on a standard queue,
// which keeps no order, none is read.
func TestForgedSequenceNumberIsIgnored(t *testing.T) {
	t.Parallel()
	q := newFIFOQueues(t)
	forged := func(v string) map[string]sqstest.MessageAttribute {
		return map[string]sqstest.MessageAttribute{AttrSequenceNumber: {DataType: "String", StringValue: aws.String(v)}}
	}
	put := func(id string, attrs map[string]sqstest.MessageAttribute) {
		msg := q.w.PutInGroup(fifoSrcURL, "a", `{"version":1,"id":"`+id+`"}`, q.t0, attrs)
		q.w.MoveByRedrivePolicy(fifoSrcURL, fifoDLQ, msg)
	}
	put("a-1", forged("99999999999999999999999999999999999999"))
	put("a-2", forged("not-a-number"))
	put("a-3", nil)
	put("a-4", forged("-1"))
	letters, err := Scan(context.Background(), q.client, fifoDLQ, time.Minute)
	require.NoError(t, err)
	var ids []string
	for _, l := range letters {
		ids = append(ids, l.NotificationID)
	}
	require.Equal(t, []string{"a-1", "a-2", "a-3", "a-4"}, ids)

	std := fromMessage(types.Message{MessageId: aws.String("m"), Body: aws.String(`{}`),
		MessageAttributes: map[string]types.MessageAttributeValue{AttrSequenceNumber: str("12")}})
	require.Empty(t, std.SequenceNumber, "a standard queue's letter has no place in a group")
}

// With the SDK's retries on (herald's real client), a send whose
// connection is cut after SQS stored it is not sent again by the SDK: one
// copy in the queue, reported unknown, the dead letter kept.
func TestRedriveCutSendIsNotRetriedBySDK(t *testing.T) {
	t.Parallel()
	w, _, _ := newSQSWire(t, dlqURL, 0, `{"version":1,"id":"c-1"}`)
	w.CutAfterStore("SendMessage")
	cfg := awstest.Config(w.URL())
	cfg.RetryMaxAttempts = 0 // the retryer's own: 3
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})
	}
	client := sqs.NewFromConfig(cfg)
	letters, err := Scan(context.Background(), client, dlqURL, time.Minute)
	require.NoError(t, err)
	rep, err := Redrive(context.Background(), client, dlqURL, mainURL, letters, func(*Letter) bool { return true }, false)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Unknown)
	require.Equal(t, 1, len(w.Requests("SendMessage")), "not sent again by the SDK")
	require.Equal(t, []string{`{"version":1,"id":"c-1"}`}, bodies(w, mainURL))
}
