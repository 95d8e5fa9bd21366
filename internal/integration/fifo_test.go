//go:build integration

package integration

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/localrunner"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
)

// TestFIFOGroupsKeepTheirOrder runs two message groups through LocalStack
// FIFO queues: in group a the second message fails once, so a3 and a4 wait
// for it and every group-a message is delivered in order; in group b the
// second message is gone (410) and is dead-lettered to the FIFO dead-letter
// queue with its group, and b3 still follows.
func TestFIFOGroupsKeepTheirOrder(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	client := sqs.NewFromConfig(awsCfg)
	queues, err := localenv.CreateFIFOQueues(ctx, client, "it-fifo-"+randHex(4), 4, 30*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { queues.Delete(context.Background(), client) })
	require.True(t, strings.HasSuffix(queues.URL, ".fifo") && strings.HasSuffix(queues.DLQURL, ".fifo"))

	receiver := localenv.NewReceiver(func(path string, attempt int) int {
		switch {
		case path == "/a2" && attempt == 1:
			return 503
		case path == "/b2":
			return 410
		}
		return 204
	})
	t.Cleanup(receiver.Close)
	logs := &logLines{}
	cfg := config.Deliver{
		QueueURL: queues.URL, DeadLetterQueueURL: queues.DLQURL, MaxReceiveCount: 4,
		BackoffBase: time.Second, BackoffCap: 4 * time.Second, Concurrency: 10,
		WebhookSecret: testSecret, WebhookTimeout: 5 * time.Second,
		WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		CheckQueues:       true,
	}
	require.NoError(t, app.CheckQueues(ctx, cfg, awsCfg, 0), "FIFO pair agrees with the settings")
	p, err := app.NewDeliver(cfg, awsCfg, app.DeliverOptions{WebhookTLS: receiver.TLSConfig(), Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	require.NoError(t, err)
	runner := &localrunner.Runner{SQS: client, QueueURL: queues.URL, Handler: p.Handle, WaitTime: time.Second, FunctionTimeout: 20 * time.Second}

	// Interleaved, as producers would send them.
	for _, m := range []struct{ group, id string }{
		{"a", "a1"}, {"b", "b1"}, {"a", "a2"}, {"b", "b2"}, {"a", "a3"}, {"b", "b3"}, {"a", "a4"},
	} {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl:               aws.String(queues.URL),
			MessageBody:            aws.String(fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":"%s/%s","event_type":"t","payload":{}}}`, m.id, receiver.URL(), m.id)),
			MessageGroupId:         aws.String(m.group),
			MessageDeduplicationId: aws.String(m.id),
		})
		require.NoError(t, err)
	}

	delivered := func() []string {
		var out []string
		for _, r := range receiver.Requests() {
			if r.Status/100 == 2 {
				out = append(out, strings.TrimPrefix(r.Path, "/"))
			}
		}
		return out
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(delivered()) < 5 {
		require.True(t, time.Now().Before(deadline), "not all delivered: %v; logs %v", receiver.Requests(), logs.all())
		_, err := runner.Poll(ctx)
		require.NoError(t, err)
	}

	var groupA, groupB, attemptsA []string
	for _, id := range delivered() {
		if id[0] == 'a' {
			groupA = append(groupA, id)
		} else {
			groupB = append(groupB, id)
		}
	}
	for _, r := range receiver.Requests() {
		if r.Path[1] == 'a' {
			attemptsA = append(attemptsA, strings.TrimPrefix(r.Path, "/"))
		}
	}
	require.Equal(t, []string{"a1", "a2", "a3", "a4"}, groupA, "group a delivered in order")
	require.Equal(t, []string{"a1", "a2", "a2", "a3", "a4"}, attemptsA, "a3 and a4 not attempted before a2 succeeded")
	require.Equal(t, []string{"b1", "b3"}, groupB)
	require.Equal(t, []string{"retry", "delivered"}, logs.outcomes("a2"))
	// Whether a3 came in a2's batch (then skipped) depends on how many
	// messages of a group a receive returns; either way it waited.
	a3 := logs.outcomes("a3")
	require.Equal(t, "delivered", a3[len(a3)-1])
	require.NotContains(t, a3, "retry")

	out := receiveSome(t, ctx, client, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(queues.DLQURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	require.Len(t, out.Messages, 1)
	m := out.Messages[0]
	require.Equal(t, "b", m.Attributes[processor.AttrMessageGroupID], "the dead letter keeps its group")
	r := reasonOf(t, localenv.DeadLetter{Attributes: map[string]string{redrive.AttrReason: aws.ToString(m.MessageAttributes[redrive.AttrReason].StringValue)}})
	require.Equal(t, "b2", r.NotificationID)
	require.Equal(t, delivery.Class("webhook_gone"), r.ErrorClass)
	require.Equal(t, queues.ARN, r.SourceQueueARN)
	require.Equal(t, m.Attributes["MessageDeduplicationId"], r.SourceMessageID, "deduplicated by the source message id")
}
