package chat_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/chattest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/notification"
)

// environment is one execution environment's chat Sender on the test's
// clock, sharing pace through st when it is not nil.
func environment(t *testing.T, c *clock, r *chattest.Receiver, st *store.Store) *chat.Sender {
	t.Helper()
	cfg := chat.Config{
		TLSClientConfig: r.TLSConfig(),
		AllowCIDRs:      []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		AllowHosts:      []string{"127.0.0.1"},
		Now:             c.Now,
	}
	if st != nil {
		cfg.Pace = st
	}
	s, err := chat.NewSender(cfg)
	require.NoError(t, err)
	chat.SetSleep(s, c.Sleep)
	return s
}

func sharedStore(t *testing.T, c *clock) (*store.Store, *dynamotest.Server) {
	t.Helper()
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: "herald-store", Now: c.Now})
	require.NoError(t, err)
	return st, ddb
}

// Two execution environments each send 10 notifications to one webhook,
// in turns, against the receiver that refuses more than its service
// allows (Slack one a second, a Teams workflow 4 in any second, Discord 5
// per 2 seconds).
// Sharing the webhook's pace through the store, they take successive
// turns: all 20 are taken, none refused (at most one 429 is the issue's
// bar; Slack's are a second apart). Pacing alone, each environment sends
// at its own pace and the receiver refuses many: the receiver enforces the
// limit the shared pace keeps. One conditional write per post, one more
// when the other environment wrote last; no read.
func TestTwoEnvironmentsShareAWebhooksPace(t *testing.T) {
	t.Parallel()
	for _, svc := range []notification.ChatService{"slack", "teams", "discord"} {
		for _, shared := range []bool{true, false} {
			t.Run(string(svc)+map[bool]string{true: " store", false: " alone"}[shared], func(t *testing.T) {
				t.Parallel()
				c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), advance: true}
				var r *chattest.Receiver
				var u string
				switch svc {
				case "slack":
					s := chattest.NewSlack()
					r, u = s.Receiver, s.URL()+"/services/T1/B1/xShared7Q"
				case "teams":
					tm := chattest.NewTeams()
					r, u = tm.Receiver, tm.URL()+tm.Create("wf-shared", "sig")
				case "discord":
					d := chattest.NewDiscord()
					r, u = d.Receiver, d.URL()+d.Create("97", "tok")
				}
				r.Now = c.Now
				t.Cleanup(r.Close)
				var st *store.Store
				var ddb *dynamotest.Server
				if shared {
					st, ddb = sharedStore(t, c)
				}
				envs := []*chat.Sender{environment(t, c, r, st), environment(t, c, r, st)}
				var limited int
				for i := range 20 {
					if err := envs[i%2].Send(context.Background(), message(t, "s", notification.Chat{Service: svc, URL: u, Text: "x"})); err != nil {
						limited++
					}
				}
				if !shared {
					require.GreaterOrEqual(t, len(r.Refused()), 3, "pacing alone, two environments exceed the webhook's rate")
					return
				}
				require.Zero(t, limited)
				require.Empty(t, r.Refused())
				got := r.Received()
				require.Len(t, got, 20)
				if svc == "slack" {
					for i := 1; i < len(got); i++ {
						require.Equal(t, time.Second, got[i].At.Sub(got[i-1].At), i)
					}
				}
				require.Zero(t, ddb.Calls("GetItem"))
				if svc == "discord" {
					// Plus a hold each time Discord announces an empty bucket.
					require.Greater(t, ddb.Calls("PutItem"), 1+19*2)
					return
				}
				require.Equal(t, 1+19*2, ddb.Calls("PutItem"), "one write per post, one more as the other environment wrote last")
			})
		}
	}
}

// A 429 one environment meets holds the webhook in the store: the other
// environment's next post waits out its Retry-After instead of meeting
// another 429.
func TestA429HoldsTheWebhookInEveryEnvironment(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), advance: true}
	slack := chattest.NewSlack()
	slack.Now = c.Now
	t.Cleanup(slack.Close)
	st, _ := sharedStore(t, c)
	a, b := environment(t, c, slack.Receiver, st), environment(t, c, slack.Receiver, st)
	u := slack.URL() + "/services/T1/B1/xHeld7Q"
	slack.Answer("xHeld7Q", http.StatusTooManyRequests, "rate_limited", "Retry-After", "30")
	require.Error(t, a.Send(context.Background(), message(t, "a", notification.Chat{Service: "slack", URL: u, Text: "x"})))
	slack.Unanswer("xHeld7Q")
	start := c.Now()
	require.NoError(t, b.Send(context.Background(), message(t, "b", notification.Chat{Service: "slack", URL: u, Text: "x"})))
	require.Equal(t, []time.Duration{30 * time.Second}, c.Slept())
	require.Equal(t, start.Add(30*time.Second), slack.Received()[0].At)
	require.Len(t, slack.Refused(), 1, "only the first 429")
}

// When the store fails, each environment paces alone: the post is sent,
// not failed, and the store is asked again only 10 s after the failed
// call, not once per post (each failed call costs a request and its
// retries). Once it answers, the pace is shared again.
func TestPaceStoreFailurePacesAlone(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), advance: true}
	slack := chattest.NewSlack()
	slack.Now = c.Now
	t.Cleanup(slack.Close)
	st, ddb := sharedStore(t, c)
	ddb.Fail("PutItem", 100)
	s := environment(t, c, slack.Receiver, st)
	u := slack.URL() + "/services/T1/B1/xAlone7Q"
	for range 5 {
		require.NoError(t, s.Send(context.Background(), message(t, "f", notification.Chat{Service: "slack", URL: u, Text: "x"})))
	}
	require.Equal(t, []time.Duration{time.Second, time.Second, time.Second, time.Second}, c.Slept())
	require.Equal(t, 1, ddb.Calls("PutItem"), "one failed call in 10 s, not one per post")
	ddb.Fail("PutItem", 0)
	c.t = c.t.Add(10 * time.Second)
	require.NoError(t, s.Send(context.Background(), message(t, "f", notification.Chat{Service: "slack", URL: u, Text: "x"})))
	require.Equal(t, 2, ddb.Calls("PutItem"), "asked again 10 s on")
	require.Len(t, ddb.Items("herald-store"), 1, "the pace is in the store again")
}

// A store that does not answer (a network partition) costs a post at most
// the pace call's timeout, 2 s, not the invocation: the post is sent,
// paced alone.
func TestPaceStoreThatHangsPacesAlone(t *testing.T) {
	t.Parallel()
	released := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-released:
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(released) }) // before Close: cleanups run last first
	st, err := store.New(dynamodb.NewFromConfig(awstest.Config(hung.URL)), store.Config{Table: "herald-store"})
	require.NoError(t, err)
	// The invocation's deadline is the wall clock's; the pacer compares
	// its clock's turns with it, so the clock starts at the wall clock's now.
	c := &clock{t: time.Now(), advance: true}
	slack := chattest.NewSlack()
	slack.Now = c.Now
	t.Cleanup(slack.Close)
	s := environment(t, c, slack.Receiver, st)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	require.NoError(t, s.Send(ctx, message(t, "h", notification.Chat{Service: "slack", URL: slack.URL() + "/services/T1/B1/xHung7Q", Text: "x"})))
	require.Less(t, time.Since(start), 20*time.Second, "not the invocation's 30 s")
	require.Len(t, slack.Received(), 1)
}

// Discord's ban met by one environment is written as a hold on every
// Discord webhook that environment has paced: another environment posting
// to one of them waits for the ban's end instead of meeting it again.
func TestDiscordBanHoldsTheWebhooksOfEveryEnvironment(t *testing.T) {
	t.Parallel()
	// The invocation's deadline is the wall clock's (a minute away); the
	// pacer compares its clock's turns with it, so the clock starts at the
	// wall clock's now.
	c := &clock{t: time.Now(), advance: true}
	d := chattest.NewDiscord()
	d.Now = c.Now
	t.Cleanup(d.Close)
	st, _ := sharedStore(t, c)
	a, b := environment(t, c, d.Receiver, st), environment(t, c, d.Receiver, st)
	x := d.URL() + d.Create("71", "tokX")
	y := d.URL() + d.Create("72", "tokY")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, a.Send(ctx, message(t, "x1", notification.Chat{Service: "discord", URL: x, Text: "x"})))
	require.NoError(t, b.Send(ctx, message(t, "x2", notification.Chat{Service: "discord", URL: x, Text: "x"})))
	d.Ban(chattest.DiscordBanJSON)
	err := a.Send(ctx, message(t, "y1", notification.Chat{Service: "discord", URL: y, Text: "x"}))
	_, class, _ := delivery.Classify(err)
	require.Equal(t, delivery.Class("discord_banned"), class, "%v", err)
	err = b.Send(ctx, message(t, "x3", notification.Chat{Service: "discord", URL: x, Text: "x"}))
	_, class, after := delivery.Classify(err)
	require.Equal(t, delivery.Class("discord_rate_limited"), class, "%v", err)
	require.InDelta(t, chat.DiscordBanPause.Seconds(), after.Seconds(), 1)
	require.Len(t, d.Refused(), 1, "the ban met once")
}

// An environment whose clock runs a day ahead writes a webhook's shared
// pace (its next turn) and a 429's hold a day ahead of the others': a
// post from an environment with the right clock waits at most Lambda's
// longest invocation for the turn and 12 hours for the hold, never a day,
// and never a negative time.
func TestPaceWrittenByAClockAheadIsBounded(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), advance: true}
	ahead := &clock{t: c.t.Add(24 * time.Hour), advance: true}
	slack := chattest.NewSlack()
	slack.Now = c.Now
	t.Cleanup(slack.Close)
	st, ddb := sharedStore(t, c)
	stAhead, err := store.New(ddb.Client(), store.Config{Table: "herald-store", Now: ahead.Now})
	require.NoError(t, err)
	right, wrong := environment(t, c, slack.Receiver, st), environment(t, ahead, slack.Receiver, stAhead)
	u := slack.URL() + "/services/T1/B1/xSkew7Q"
	for range 2 { // the wrong clock's turns: its now, +1 s
		require.NoError(t, wrong.Send(context.Background(), message(t, "w", notification.Chat{Service: "slack", URL: u, Text: "x"})))
	}
	require.NoError(t, right.Send(context.Background(), message(t, "r", notification.Chat{Service: "slack", URL: u, Text: "x"})))
	slept := c.Slept()
	require.Len(t, slept, 1)
	require.Positive(t, slept[0])
	require.LessOrEqual(t, slept[0], 15*time.Minute+2*time.Second, "bounded by Lambda's longest invocation, not a day")

	u2 := slack.URL() + "/services/T1/B1/xSkewHold7Q"
	slack.Answer("xSkewHold7Q", http.StatusTooManyRequests, "rate_limited", "Retry-After", "30")
	require.Error(t, wrong.Send(context.Background(), message(t, "w", notification.Chat{Service: "slack", URL: u2, Text: "x"})))
	slack.Unanswer("xSkewHold7Q")
	require.NoError(t, right.Send(context.Background(), message(t, "r", notification.Chat{Service: "slack", URL: u2, Text: "x"})))
	slept = c.Slept()
	require.Len(t, slept, 2)
	require.Equal(t, chat.MaxRetryAfter, slept[1], "a hold is at most 12 h from now")
}
