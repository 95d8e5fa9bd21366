package processor_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// TestHandleDeadlineBoundsTheRealSenders: with the real webhook and SES
// senders against servers that never answer, a request's timeout is the
// time left less the reserve, not the sender's own (15 s webhook timeout,
// the SES SDK's retries): Handle answers before a deadline 3 s away. (The
// senders have 2 s to reach their servers, a TLS handshake under -race on a
// loaded machine, and Handle the 1 s reserve to answer.)
func TestHandleDeadlineBoundsTheRealSenders(t *testing.T) {
	t.Parallel()
	var hooks, sesCalls, gone atomic.Int32
	done := make(chan struct{})
	hang := func(n *atomic.Int32) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			// Read to the end: only then does the server notice the
			// client going away (r.Context() done).
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
				gone.Add(1)
			case <-done:
				t.Errorf("%s %s: the client never went away", r.Host, r.URL.Path)
			}
		}
	}
	hookSrv := httptest.NewTLSServer(hang(&hooks))
	t.Cleanup(hookSrv.Close)
	sesSrv := httptest.NewServer(hang(&sesCalls))
	t.Cleanup(sesSrv.Close)
	t.Cleanup(func() { close(done) }) // runs first: no handler outlives the test

	hook, err := webhook.NewSender(webhook.Config{
		Secret:          "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		Timeout:         15 * time.Second,
		TLSClientConfig: hookSrv.Client().Transport.(*http.Transport).TLSClientConfig,
		AllowCIDRs:      []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	})
	require.NoError(t, err)
	mail, err := email.NewSender(sesv2.New(sesv2.Options{
		BaseEndpoint: aws.String(sesSrv.URL),
		Region:       "us-east-1",
		Credentials:  aws.AnonymousCredentials{},
	}), email.Config{DefaultFrom: "noreply@example.com"})
	require.NoError(t, err)

	b := setup(t, func(c *processor.Config) {
		c.Reserve = time.Second
		c.Senders = map[notification.Channel]processor.Sender{notification.ChannelWebhook: hook, notification.ChannelEmail: mail}
		c.Now = time.Now
	})
	deadline := time.Now().Add(3 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	resp, err := b.p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		rec("m1", fmt.Sprintf(`{"version":1,"id":"w1","channel":"webhook","webhook":{"url":"%s/hook","event_type":"t","payload":{}}}`, hookSrv.URL), 1),
		rec("m2", `{"version":1,"id":"e1","channel":"email","email":{"to":["a@example.org"],"subject":"s","text":"t"}}`, 1),
	}})
	require.NoError(t, err)
	require.True(t, time.Now().Before(deadline), "Handle returned %s after the deadline", time.Since(deadline))
	require.ElementsMatch(t, []string{"m1", "m2"}, failures(resp), "both retried; the log lines: %v", b.logs.lines(t))
	require.Equal(t, int32(1), hooks.Load(), "the webhook request was made and cut off")
	require.Positive(t, sesCalls.Load(), "the SES call was made and cut off")
	// The server sees a closed connection a moment after the client closed
	// it: a loaded machine may take longer than Handle took to return.
	require.Eventually(t, func() bool { return gone.Load() == hooks.Load()+sesCalls.Load() },
		5*time.Second, 10*time.Millisecond, "every request the senders made was given up by the client")
	for _, l := range b.logs.lines(t) {
		require.Equal(t, "retry", l["outcome"], l)
	}
}
