//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/retention"
)

func TestRetentionDeletesOldDeadLettersAndKeepsYoungOnes(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	now := time.Now()
	sendDead := func(body string, sentAt *time.Time) {
		in := &sqs.SendMessageInput{QueueUrl: aws.String(e.queues.DLQURL), MessageBody: aws.String(body)}
		if sentAt != nil {
			r, err := json.Marshal(redrive.Reason{Outcome: "permanent_failure", ErrorClass: "webhook_gone", OriginalSentTimestamp: sentAt.UnixMilli()})
			require.NoError(t, err)
			in.MessageAttributes = map[string]types.MessageAttributeValue{
				redrive.AttrReason: {DataType: aws.String("String"), StringValue: aws.String(string(r))},
			}
		}
		_, err := e.sqs.SendMessage(e.ctx, in)
		require.NoError(t, err)
	}
	old, young := now.Add(-30*24*time.Hour), now.Add(-time.Hour)
	sendDead("old", &old)
	sendDead("young", &young)
	sendDead("redriven", nil) // moved by the redrive policy: its own SentTimestamp counts

	sweep := func(at time.Time) retention.Summary {
		s, err := retention.New(e.sqs, retention.Config{
			QueueURL: e.queues.DLQURL, MaxAge: 24 * time.Hour,
			Logger: slog.New(slog.NewJSONHandler(e.logs, nil)),
			Now:    func() time.Time { return at },
		})
		require.NoError(t, err)
		sum, err := s.Sweep(e.ctx)
		require.NoError(t, err)
		return sum
	}

	require.Equal(t, retention.Summary{Scanned: 3, Deleted: 1, Kept: 2}, sweep(now))
	// Visible again at once, not after the sweep's 15-minute hold.
	left, err := localenv.ReceiveAll(e.ctx, e.sqs, e.queues.DLQURL, 3*time.Second)
	require.NoError(t, err)
	var bodies []string
	for _, d := range left {
		bodies = append(bodies, d.Body)
	}
	require.ElementsMatch(t, []string{"young", "redriven"}, bodies)

	// Two days on, both are past 24 h; the "redriven" one by its SentTimestamp.
	require.Eventually(t, func() bool { return len(peek(t, e)) == 2 }, 15*time.Second, 500*time.Millisecond, "the read above hid them for 3 s")
	require.Equal(t, retention.Summary{Scanned: 2, Deleted: 2}, sweep(now.Add(48*time.Hour)))
	require.Empty(t, e.deadLetters())

	var deletedLines int
	for _, l := range e.logs.all() {
		if l["msg"] == "dead letter deleted" {
			deletedLines++
		}
	}
	require.Equal(t, 3, deletedLines, "one log line per deleted message")

	// The sweep lines carry DeadLettersDeleted and DeadLettersKept in EMF.
	var sweeps []map[string]any
	for _, l := range e.logs.all() {
		if l["msg"] == "retention sweep" {
			sweeps = append(sweeps, l)
		}
	}
	require.NotEmpty(t, sweeps)
	last := sweeps[len(sweeps)-1]
	require.EqualValues(t, 2, last[metrics.DeadLettersDeleted])
	require.EqualValues(t, 0, last[metrics.DeadLettersKept])
	require.Equal(t, retention.FunctionName, last[metrics.DimFunction])
	require.Contains(t, last, "_aws")
	require.Empty(t, e.logs.emfErrors(), "every line with metrics is valid EMF")
}

// peek counts the visible dead letters without hiding them.
func peek(t *testing.T, e *env) []string {
	out, err := e.sqs.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(e.queues.DLQURL), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages},
	})
	require.NoError(t, err)
	var n int
	fmt.Sscan(out.Attributes["ApproximateNumberOfMessages"], &n)
	return make([]string, n)
}
