package processor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/notification"
)

// sesWire answers SES v2 SendEmail in its REST-JSON wire format: it accepts
// `accept` emails, then throttles (429 TooManyRequestsException), or pauses
// sending (400 SendingPausedException) when paused is set. It counts the
// emails it accepted by recipient.
type sesWire struct {
	mu       sync.Mutex
	accept   int
	paused   bool
	accepted map[string]int
}

func (s *sesWire) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Destination struct{ ToAddresses []string }
	}
	_ = json.NewDecoder(r.Body).Decode(&in)
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case s.paused:
		w.Header().Set("X-Amzn-ErrorType", "SendingPausedException")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"message":"Sending is paused for this account."}`)
	case s.accept <= 0:
		w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"message":"Maximum sending rate exceeded."}`)
	default:
		s.accept--
		s.accepted[in.Destination.ToAddresses[0]]++
		fmt.Fprintf(w, `{"MessageId":"ses-%d"}`, len(s.accepted))
	}
}

func emailBody(i int) string {
	return fmt.Sprintf(`{"version":1,"id":"mail-%d","channel":"email","email":{"from":"noreply@example.com","to":["r%d@example.org"],"subject":"s","text":"t"}}`, i, i)
}

// sesSetup wires the processor to the real SES v2 client and email sender,
// talking to ses.
func sesSetup(t *testing.T, ses *sesWire) *bundle {
	t.Helper()
	srv := httptest.NewServer(ses)
	t.Cleanup(srv.Close)
	client := sesv2.New(sesv2.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: aws.AnonymousCredentials{},
		RetryMaxAttempts: 1, // herald's backoff, not the SDK's, is under test
	})
	sender, err := email.NewSender(client, email.Config{})
	require.NoError(t, err)
	return setup(t, func(c *processor.Config) {
		c.Concurrency = 1 // one at a time, so the throttle falls mid-batch
		c.Senders = map[notification.Channel]processor.Sender{notification.ChannelEmail: sender}
	})
}

// TestHandleSESThrottlingMidBatch: SES throttles after three emails of six.
// The three sent are acknowledged and never sent again; the other three are
// retried after their backoff and sent once each on the next receive.
func TestHandleSESThrottlingMidBatch(t *testing.T) {
	t.Parallel()
	ses := &sesWire{accept: 3, accepted: map[string]int{}}
	b := sesSetup(t, ses)
	var ev events.SQSEvent
	for i := range 6 {
		ev.Records = append(ev.Records, rec(fmt.Sprint("m", i), emailBody(i), 1))
	}
	resp, err := b.p.Handle(context.Background(), ev)
	require.NoError(t, err)
	throttled := failures(resp)
	require.Len(t, throttled, 3)
	for _, l := range b.logs.lines(t) {
		if l["outcome"] == "retry" {
			require.Equal(t, string(email.ClassThrottled), l["error_class"])
		}
	}

	// SQS brings back only the failed records; SES accepts again.
	ses.mu.Lock()
	ses.accept = 10
	ses.mu.Unlock()
	var again events.SQSEvent
	for _, id := range throttled {
		var i int
		fmt.Sscanf(id, "m%d", &i)
		again.Records = append(again.Records, rec(id, emailBody(i), 2))
	}
	resp, err = b.p.Handle(context.Background(), again)
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	for i := range 6 {
		require.Equal(t, 1, ses.accepted[fmt.Sprintf("r%d@example.org", i)], "email %d sent exactly once", i)
	}
}

// TestHandleSESSendingPausedWaitsLong: a paused account is retried no sooner
// than the sending-paused delay (1 h), however early the receive.
func TestHandleSESSendingPausedWaitsLong(t *testing.T) {
	t.Parallel()
	ses := &sesWire{paused: true, accepted: map[string]int{}}
	b := sesSetup(t, ses)
	resp, err := b.p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("m1", emailBody(1), 1)}})
	require.NoError(t, err)
	require.Equal(t, []string{"m1"}, failures(resp))
	vis := b.wire.Requests("ChangeMessageVisibilityBatch")
	require.Len(t, vis, 1)
	var in struct {
		Entries []struct{ VisibilityTimeout int }
	}
	require.NoError(t, json.Unmarshal(vis[0], &in))
	require.Equal(t, int(time.Hour.Seconds()), in.Entries[0].VisibilityTimeout)
}
