package processor_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/notification"
)

// TestDeadLetterErrorOfExactlyTheShortLengthSkipsTheShortErrorStep: a
// dead letter whose error is already no longer than the short error (256
// bytes) and that has no overflow attributes has nothing to gain from the
// short-error step: refused at full size, it is sent next with the
// shortest reason, two sends in all.
func TestDeadLetterErrorOfExactlyTheShortLengthSkipsTheShortErrorStep(t *testing.T) {
	t.Parallel()
	text := "410 Gone: " + strings.Repeat("e", 256-len("410 Gone: "))
	run := func(t *testing.T, limit int) *bundle {
		t.Helper()
		b := setup(t, func(c *processor.Config) {
			c.Senders[notification.ChannelWebhook] = senderFunc(func(context.Context, *notification.Message) error {
				return delivery.Permanent("webhook_gone", errors.New(text))
			})
		})
		b.wire.AddQueue(b.dlqURL, map[string]string{"MaximumMessageSize": strconv.Itoa(limit)})
		_, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m1", webhookBody("permanent-256"), 1)}})
		require.NoError(t, err)
		return b
	}
	b := run(t, notification.SQSMaxMessageBytes)
	dl := b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Equal(t, text, dl[0].reason.Error, "256 bytes, kept whole")

	b = run(t, dl[0].size-1)
	dl = b.storedDeadLetters(t)
	require.Len(t, dl, 1)
	require.Equal(t, 2, len(b.wire.Requests("SendMessage")), "refused once, then the shortest reason")
	require.Contains(t, dl[0].reason.Error, "reason shortened")
}
