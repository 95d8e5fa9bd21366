//go:build integration

package integration

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/chattest"
	"github.com/heraldhq/herald/notification"
)

// Two chat Senders (two execution environments) share one Slack
// webhook's pace through the local stack's table (moto): 3 posts each, in
// turns, one a second in real time, all taken by the receiver that
// refuses more than Slack's one a second (with the one-post slack its
// burst of two gives a post that arrives a little early), none refused.
// Each turn is a conditional PutItem whose failed condition returns the
// other environment's item: moto returns it as DynamoDB does.
func TestChatPaceSharedThroughTheLocalStack(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	st, err := store.New(dynamodb.NewFromConfig(awsCfg), store.Config{Table: storeTable(t)})
	require.NoError(t, err)
	slack := chattest.NewSlack()
	t.Cleanup(slack.Close)
	var envs []*chat.Sender
	for range 2 {
		s, err := chat.NewSender(chat.Config{
			TLSClientConfig: slack.TLSConfig(),
			AllowCIDRs:      []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			AllowHosts:      []string{"127.0.0.1"},
			Pace:            st,
		})
		require.NoError(t, err)
		envs = append(envs, s)
	}
	u := slack.URL() + "/services/T1/B1/xPace" + randHex(4)
	for i := range 6 {
		m := &notification.Message{Version: 1, ID: "pace", Channel: notification.ChannelChat, Chat: &notification.Chat{Service: "slack", URL: u, Text: "x"}}
		require.NoError(t, envs[i%2].Send(ctx, m), i)
	}
	require.Empty(t, slack.Refused())
	got := slack.Received()
	require.Len(t, got, 6)
	// The sixth turn is 5 s after the first; the first post arrived at
	// most its own latency after its turn.
	require.GreaterOrEqual(t, got[5].At.Sub(got[0].At), 4*time.Second, "one a second, whichever environment sent")
}
