package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/notification"
)

// TestReadmeSampleIsWhatHeraldRunPrints: the line the README shows for
// "Terminal 1" is the line herald run prints when the notification the
// README sends (testdata/cases/email-welcome.json) is delivered on its first
// receive: the processor's log line through herald run's logger and
// recordLines. Only the time of day differs.
func TestReadmeSampleIsWhatHeraldRunPrints(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "Terminal 1 prints the notification's fate, one line per record:\n\n```\n")
	require.True(t, ok, "the README's sample of herald run's output")
	sample, _, _ := strings.Cut(after, "\n")
	require.Contains(t, string(readme), "herald send testdata/cases/email-welcome.json", "the README sends the sample it shows")

	body, err := os.ReadFile("../../testdata/cases/email-welcome.json")
	require.NoError(t, err)
	var printed bytes.Buffer
	p, err := processor.New(sqstest.New(t).Client(), processor.Config{
		QueueURL:           "https://sqs.us-east-1.amazonaws.com/123456789012/herald-notifications",
		DeadLetterQueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/herald-notifications-dlq",
		MaxReceiveCount:    13,
		Senders: map[notification.Channel]processor.Sender{
			notification.ChannelEmail: delivered{},
		},
		// as herald run builds it (run.go), at the default level
		Logger: slog.New(slog.NewJSONHandler(&recordLines{w: &printed}, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	require.NoError(t, err)
	_, err = p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: "m-1", ReceiptHandle: "rh-1", Body: string(body),
		EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:herald-notifications",
		Attributes:     map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1764500000000"},
	}}})
	require.NoError(t, err)

	clock := regexp.MustCompile(`^\d\d:\d\d:\d\d  `)
	var records []string
	for _, l := range strings.Split(strings.TrimSpace(printed.String()), "\n") {
		records = append(records, clock.ReplaceAllString(l, "HH:MM:SS  "))
	}
	require.Equal(t, []string{clock.ReplaceAllString(sample, "HH:MM:SS  ")}, records, "herald run printed:\n%s", printed.String())
}

// delivered is an email sender that SES accepts every email of.
type delivered struct{}

func (delivered) Send(context.Context, *notification.Message) error { return nil }
