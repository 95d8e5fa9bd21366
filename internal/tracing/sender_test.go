package tracing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/testkit/otlptest"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/notification"
)

// keyed is a sender that keys its destinations (as the chat sender does)
// and fails with err.
type keyed struct{ err error }

func (k *keyed) Send(context.Context, *notification.Message) error { return k.err }
func (k *keyed) DestinationKey(*notification.Message) string       { return "key" }

func setup(t *testing.T) (*tracing.Tracing, *otlptest.Server) {
	t.Helper()
	rcv := otlptest.New(t)
	tr, err := tracing.New(t.Context(), tracing.Config{Mode: tracing.OTLP, Endpoint: rcv.Endpoint(), SampleRatio: 1}, tracing.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, rcv
}

// TestSenderKeepsDestinationKeyer: the circuit keys a chat webhook by its
// sender's DestinationKey; the wrapper must not hide it.
func TestSenderKeepsDestinationKeyer(t *testing.T) {
	t.Parallel()
	tr, _ := setup(t)
	k, ok := tr.Sender(&keyed{}).(processor.DestinationKeyer)
	require.True(t, ok)
	require.Equal(t, "key", k.DestinationKey(&notification.Message{}))
	_, ok = tr.Sender(plain{}).(processor.DestinationKeyer)
	require.False(t, ok, "a sender without one gets none")
}

type plain struct{}

func (plain) Send(context.Context, *notification.Message) error { return nil }

// TestSenderSpan: the error class, permanence and Retry-After of a failed
// send; a chat URL's host alone; an email's recipients never.
func TestSenderSpan(t *testing.T) {
	t.Parallel()
	tr, rcv := setup(t)
	chatErr := &delivery.TransientError{Class: "chat_slack_rate_limited", Err: errors.New("429 from https://hooks.slack.com/services/T0/B0/SECRET"), RetryAfter: 30 * time.Second}
	msgs := []struct {
		m   *notification.Message
		err error
	}{
		{&notification.Message{ID: "c1", Channel: notification.ChannelChat, Chat: &notification.Chat{URL: "https://hooks.slack.com/services/T0/B0/SECRET"}}, chatErr},
		{&notification.Message{ID: "e1", Channel: notification.ChannelEmail, Email: &notification.Email{To: []string{"jana@example.org"}}}, delivery.Permanent("ses_message_rejected", errors.New("jana@example.org rejected"))},
	}
	for _, c := range msgs {
		err := tr.Sender(&keyed{err: c.err}).Send(t.Context(), c.m)
		require.ErrorIs(t, err, c.err, "the sender's error, unchanged")
	}
	require.NoError(t, tr.Flush(t.Context()))
	spans := rcv.Spans()
	require.Len(t, spans, 2)
	chat, mail := spans[0], spans[1]
	require.Equal(t, "hooks.slack.com", chat.Attributes[string(tracing.KeyServerAddress)])
	require.Equal(t, "chat_slack_rate_limited", chat.Attributes[string(tracing.KeyErrorType)])
	require.Equal(t, int64(30_000), chat.Attributes[string(tracing.KeyRetryAfterMS)])
	require.Equal(t, false, chat.Attributes[string(tracing.KeyPermanent)])
	require.Equal(t, tracepb.Status_STATUS_CODE_ERROR, chat.StatusCode)
	require.Equal(t, "chat_slack_rate_limited", chat.StatusText, "the class, not the error's text")
	require.NotContains(t, mail.Attributes, string(tracing.KeyServerAddress))
	require.Equal(t, true, mail.Attributes[string(tracing.KeyPermanent)])
	for _, b := range rcv.Bodies() {
		require.NotContains(t, string(b), "SECRET")
		require.NotContains(t, string(b), "services/")
		require.NotContains(t, string(b), "jana@")
	}
}

// TestNewXRaySignsExports: the xray mode exports by OTLP/HTTP protobuf,
// each request signed with SigV4 for xray in the Region.
func TestNewXRaySignsExports(t *testing.T) {
	t.Parallel()
	rcv := otlptest.NewTLS(t)
	tr, err := tracing.New(t.Context(), tracing.Config{Mode: tracing.XRay, Endpoint: rcv.Endpoint(), SampleRatio: 1},
		tracing.Options{Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""), Region: "us-west-2", HTTPClient: rcv.Client()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	_, span := tr.Tracer().Start(t.Context(), "x")
	span.End()
	require.NoError(t, tr.Flush(t.Context()))
	require.Len(t, rcv.Spans(), 1)
	reqs := rcv.Requests()
	require.Len(t, reqs, 1)
	require.Contains(t, reqs[0].Header.Get("Authorization"), "/us-west-2/xray/aws4_request")

	_, err = tracing.New(t.Context(), tracing.Config{Mode: tracing.XRay}, tracing.Options{Region: "us-west-2"})
	require.ErrorContains(t, err, "credentials", "xray cannot sign without them")
	_, err = tracing.New(t.Context(), tracing.Config{Mode: tracing.XRay}, tracing.Options{Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")})
	require.ErrorContains(t, err, "AWS_REGION")
}
