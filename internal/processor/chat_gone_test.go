package processor_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/chattest"
	"github.com/heraldhq/herald/internal/testkit/eventbridgetest"
	"github.com/heraldhq/herald/notification"
)

var _ processor.DestinationKeyer = (*chat.Sender)(nil)

// chatEnvironments are n environments of environments' kind whose chat
// channel is the real chat Sender, reaching rs on 127.0.0.1.
func chatEnvironments(t *testing.T, n int, rs *chattest.Receivers, concurrency ...int) (*circuitSetup, []*bundle) {
	t.Helper()
	var clock interface{ Now() time.Time }
	return environments(t, n, func(c *processor.Config) {
		clock = nowFunc(c.Now)
		if len(concurrency) > 0 {
			c.Concurrency = concurrency[0]
		}
		s, err := chat.NewSender(chat.Config{
			TLSClientConfig: rs.TLSConfig(),
			AllowCIDRs:      []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			AllowHosts:      []string{"127.0.0.1"},
			Now:             clock.Now,
		})
		require.NoError(t, err)
		c.Senders[notification.ChannelChat] = s
	})
}

type nowFunc func() time.Time

func (f nowFunc) Now() time.Time { return f() }

func chatBody(id, service, url string) string {
	return fmt.Sprintf(`{"version":1,"id":%q,"channel":"chat","chat":{"service":%q,"url":%q,"text":"deploy finished"}}`, id, service, url)
}

// A chat webhook that answers it is gone (Discord 404 code 10015, Slack
// no_service, channel_is_archived, invalid_token, Teams 404) is
// remembered: of 30 notifications to it, spread over batches and two
// execution environments, one makes a request; the other 29 are
// dead-lettered as destination_disabled without one, their reason naming
// the destination's key (never the URL's token) and the command that
// enables it. Another webhook of the same service and host is not held.
// Enabling the key sends again.
func TestGoneChatWebhookMakesOneRequest(t *testing.T) {
	t.Parallel()
	rs := chattest.NewReceivers()
	t.Cleanup(rs.Close)
	deleted := rs.Discord.URL() + rs.Discord.Create("1001", "tokDeleted7Q")
	rs.Discord.Delete("1001")
	rs.Slack.Remove("xRemoved7Q")
	rs.Slack.Answer("xArchived7Q", 410, "channel_is_archived")
	rs.Slack.Answer("xRevoked7Q", 403, "invalid_token")
	flow := rs.Teams.URL() + rs.Teams.Create("wf-gone", "sigGone7Q")
	rs.Teams.Disable("wf-gone")
	tests := []struct {
		service, url, class string
		requests            func() int
	}{
		{"discord", deleted, "discord_unknown_webhook", func() int { return len(rs.Discord.Refused()) }},
		{"slack", rs.Slack.URL() + "/services/T1/B1/xRemoved7Q", "slack_no_service", nil},
		{"slack", rs.Slack.URL() + "/services/T1/B2/xArchived7Q", "slack_channel_is_archived", nil},
		{"slack", rs.Slack.URL() + "/services/T1/B3/xRevoked7Q", "slack_invalid_token", nil},
		{"teams", flow, "teams_not_found", func() int { return len(rs.Teams.Refused()) }},
	}
	for i, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			cs, envs := chatEnvironments(t, 2, rs)
			before := map[string]int{"slack": len(rs.Slack.Refused()), "discord": len(rs.Discord.Refused()), "teams": len(rs.Teams.Refused())}
			refused := func() int {
				switch tt.service {
				case "slack":
					return len(rs.Slack.Refused()) - before["slack"]
				case "discord":
					return len(rs.Discord.Refused()) - before["discord"]
				}
				return len(rs.Teams.Refused()) - before["teams"]
			}
			for batch := range 3 {
				var recs []events.SQSMessage
				for j := range 10 {
					id := fmt.Sprintf("g%d-%d-%d", i, batch, j)
					recs = append(recs, rec(id, chatBody(id, tt.service, tt.url), 1))
				}
				resp := cs.invoke(t, envs[batch%2], recs...)
				require.Empty(t, failures(resp), "dead-lettered, none retried")
			}
			require.Equal(t, 1, refused(), "30 notifications, 1 request")
			all := append(envs[0].deadLetters(t), envs[1].deadLetters(t)...)
			require.Len(t, all, 30)
			key, err := chat.Destination(notification.ChatService(tt.service), tt.url)
			require.NoError(t, err)
			var first, disabled int
			for _, dl := range all {
				switch string(dl.reason.ErrorClass) {
				case tt.class:
					first++
				case string(circuit.ClassDestinationDisabled):
					disabled++
					require.Contains(t, dl.reason.Error, "herald destinations enable "+key)
				}
				for _, secret := range []string{"tokDeleted7Q", "xRemoved7Q", "xArchived7Q", "xRevoked7Q", "sigGone7Q"} {
					require.NotContains(t, dl.reason.Error, secret)
				}
			}
			require.Equal(t, 1, first)
			require.Equal(t, 29, disabled)
			h, err := cs.st.Health(context.Background(), key)
			require.NoError(t, err)
			require.True(t, h.Disabled())
			require.Equal(t, store.DisabledByHerald, h.DisabledBy)
			require.Equal(t, tt.class, h.FailureClass)

			// The key is enabled at once (the receiver is fixed): the
			// next notification, seen enabled within the health cache's
			// 5 s, is not lost to the environment's memory of the answer
			// (a minute, chat.GoneFor): it is retried when that memory
			// ends, then sent.
			_, changed, err := cs.st.SetDisabled(context.Background(), key, false)
			require.NoError(t, err)
			require.True(t, changed)
			cs.clock.Advance(5 * time.Second)
			again := rec("again", chatBody("again", tt.service, tt.url), 1)
			require.Equal(t, []string{"again"}, failures(cs.invoke(t, envs[0], again)), "retried, not dead-lettered")
			require.Len(t, append(envs[0].deadLetters(t), envs[1].deadLetters(t)...), 30, "none more dead-lettered")
			require.Equal(t, 1, refused(), "no request while the environment remembers the answer")
			cs.clock.Advance(chat.GoneFor)
			require.Empty(t, failures(cs.invoke(t, envs[0], rec("again", chatBody("again", tt.service, tt.url), 2))))
			require.Equal(t, 2, refused(), "sent again (and gone again)")
		})
	}
	// A healthy Discord webhook on the same host was never held.
	ok := rs.Discord.URL() + rs.Discord.Create("1002", "tokOK")
	cs, envs := chatEnvironments(t, 1, rs)
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("ok", chatBody("ok", "discord", ok), 1))))
	require.NotEmpty(t, rs.Discord.Received())
	require.True(t, strings.HasPrefix(rs.Discord.Received()[0].Path, "/api/v10/"))
}

// The same in one batch of 30 delivered at once (concurrency 30, as the
// deliver function runs a batch): the webhook's first post goes alone
// until it is answered, so a deleted Discord webhook (Discord's burst is
// 5) gets one request and its notification is dead-lettered; the other 29,
// already past the health check, are retried once the Sender's memory of
// the answer ends (chat.GoneFor), and then dead-lettered as
// destination_disabled, still without a request.
func TestGoneChatWebhookInOneConcurrentBatch(t *testing.T) {
	t.Parallel()
	rs := chattest.NewReceivers()
	t.Cleanup(rs.Close)
	deleted := rs.Discord.URL() + rs.Discord.Create("2001", "tokDeleted7Q")
	rs.Discord.Delete("2001")
	cs, envs := chatEnvironments(t, 1, rs, 30)
	var recs []events.SQSMessage
	for j := range 30 {
		id := fmt.Sprintf("c-%d", j)
		recs = append(recs, rec(id, chatBody(id, "discord", deleted), 1))
	}
	retried := failures(cs.invoke(t, envs[0], recs...))
	require.Len(t, rs.Discord.Refused(), 1, "30 notifications at once, 1 request")
	// The posts that waited behind the first are retried; one that reached
	// the circuit after the disable was written (a slow goroutine) is
	// dead-lettered at once instead. Either way none makes a request.
	first := envs[0].deadLetters(t)
	require.Len(t, retried, 30-len(first))
	require.Greater(t, len(retried), 0)
	cs.clock.Advance(chat.GoneFor)
	recs = recs[:0]
	for _, id := range retried {
		recs = append(recs, rec(id, chatBody(id, "discord", deleted), 2))
	}
	require.Empty(t, failures(cs.invoke(t, envs[0], recs...)))
	require.Len(t, rs.Discord.Refused(), 1, "still 1 request")
	dls := envs[0].deadLetters(t)
	require.Len(t, dls, 30)
	classes := map[delivery.Class]int{}
	for _, dl := range dls {
		classes[dl.reason.ErrorClass]++
	}
	require.Equal(t, map[delivery.Class]int{"discord_unknown_webhook": 1, circuit.ClassDestinationDisabled: 29}, classes)
}

// TestGoneChatWebhookAnnouncesOnce: the webhook disabled at once because
// its service said it is gone is announced like an origin disabled after
// its failures: one destination.disabled event, naming the key (never
// the URL's token) and the service's class, however many notifications
// then meet the disabled key.
func TestGoneChatWebhookAnnouncesOnce(t *testing.T) {
	t.Parallel()
	rs := chattest.NewReceivers()
	t.Cleanup(rs.Close)
	eb := eventbridgetest.New(t)
	pub, err := announce.New(eb.Client(), "default")
	require.NoError(t, err)
	var clock interface{ Now() time.Time }
	cs, envs := environmentsWith(t, 1, func(c *processor.Config) {
		clock = nowFunc(c.Now)
		s, err := chat.NewSender(chat.Config{
			TLSClientConfig: rs.TLSConfig(),
			AllowCIDRs:      []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			AllowHosts:      []string{"127.0.0.1"},
			Now:             clock.Now,
		})
		require.NoError(t, err)
		c.Senders[notification.ChannelChat] = s
	}, func(c *circuit.Config) { c.Announcer = pub })
	gone := rs.Discord.URL() + rs.Discord.Create("2001", "tokAnnounce7Q")
	rs.Discord.Delete("2001")
	var recs []events.SQSMessage
	for j := range 5 {
		id := fmt.Sprintf("ga-%d", j)
		recs = append(recs, rec(id, chatBody(id, "discord", gone), 1))
	}
	require.Empty(t, failures(cs.invoke(t, envs[0], recs...)))
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("ga-late", chatBody("ga-late", "discord", gone), 1))))

	key, err := chat.Destination("discord", gone)
	require.NoError(t, err)
	evs := eb.Events()
	require.Len(t, evs, 1)
	require.Equal(t, "destination.disabled", evs[0].DetailType)
	require.Equal(t, key, evs[0].Detail["origin"])
	require.Equal(t, "herald", evs[0].Detail["disabled_by"])
	require.Equal(t, "discord_unknown_webhook", evs[0].Detail["last_failure_class"])
	require.NotContains(t, fmt.Sprint(evs[0].Detail), "tokAnnounce7Q")
	h, err := cs.st.Health(context.Background(), key)
	require.NoError(t, err)
	require.Empty(t, h.PendingEvents, "published, so no longer pending")
}
