package fanout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/kmstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/internal/testkit/testclock"
	"github.com/heraldhq/herald/notification"
)

const table = "herald-test"

// lister is the real endpoint store's listing with a hook before each
// page, for tests that act between two batches. It fails every listing
// after maxListings, so that a fan-out that lists without end fails its
// test instead of hanging it.
type lister struct {
	*endpoint.Table
	mu     sync.Mutex
	calls  int
	onList func(call int)
}

// maxListings bounds a test's listings: the most any test needs is
// TestTenThousandEndpointsAcrossInvocations's, one per page (100) and one
// more per invocation, each of which works 2 s before it hands on (fewer
// than 60 within go test's 120 s).
const maxListings = 300

var errListingWithoutEnd = errors.New("test: more listings than any fan-out of the test needs")

func (l *lister) Subscribers(ctx context.Context, tenant, eventType, cursor string, limit int) ([]endpoint.Subscriber, string, error) {
	l.mu.Lock()
	l.calls++
	call, hook := l.calls, l.onList
	l.mu.Unlock()
	if call > maxListings {
		return nil, "", errListingWithoutEnd
	}
	if hook != nil {
		hook(call)
	}
	return l.Table.Subscribers(ctx, tenant, eventType, cursor, limit)
}

// urls are a valid URL of each kind of endpoint.
var urls = map[endpoint.Kind]string{
	endpoint.KindWebhook: "https://hooks.example.com/herald",
	endpoint.KindSlack:   "https://hooks.slack.com/services/T000/B000/XXXX",
	endpoint.KindDiscord: "https://discord.com/api/webhooks/123/tok",
	endpoint.KindTeams:   "https://prod-12.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?sig=x",
}

type bundle struct {
	sqs                *sqstest.Server
	db                 *dynamotest.Server
	kms                *kmstest.Server
	table              *endpoint.Table
	reg                *lister
	clock              *testclock.Clock
	logs               *syncBuffer
	hookQ, chatQ, evtQ string
	cfg                fanout.Config
	f                  *fanout.Fanout
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		out = append(out, m)
	}
	return out
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{sqs: sqstest.New(t), db: dynamotest.New(t), kms: kmstest.New(t), clock: testclock.New(time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)), logs: &syncBuffer{}}
	base := b.sqs.URL() + "/123456789012/"
	b.hookQ = b.sqs.AddQueue(base+"herald-webhook", nil)
	b.chatQ = b.sqs.AddQueue(base+"herald-chat", nil)
	b.evtQ = b.sqs.AddQueue(base+"herald-event", nil)
	b.db.AddTable(table, store.AttrPK, store.AttrSK)
	b.db.AddIndex(table, endpoint.TenantIndex, endpoint.AttrGSI1PK, endpoint.AttrGSI1SK, []string{endpoint.AttrEventTypes, endpoint.AttrDisabledAt, endpoint.AttrKind})
	b.kms.CreateKey("alias/herald-endpoints")
	var err error
	b.table, err = endpoint.NewTable(endpoint.TableConfig{Table: table, KeyID: "alias/herald-endpoints", DB: b.db.Client(), KMS: b.kms.Client(), Now: b.clock.Now})
	require.NoError(t, err)
	b.reg = &lister{Table: b.table}
	b.cfg = fanout.Config{
		Subscribers: b.reg, Endpoints: b.table,
		DB: b.db.Client(), Table: table,
		SQS:             b.sqs.Client(),
		WebhookQueueURL: b.hookQ, ChatQueueURL: b.chatQ, EventQueueURL: b.evtQ,
		Logger: slog.New(slog.NewJSONHandler(b.logs, nil)),
		Now:    b.clock.Now,
	}
	b.rebuild(t)
	return b
}

func (b *bundle) rebuild(t *testing.T) {
	t.Helper()
	f, err := fanout.New(b.cfg)
	require.NoError(t, err)
	b.f = f
}

// add registers one endpoint through the endpoint store and returns its
// id; disabled ones are disabled by an operator.
func (b *bundle) add(t *testing.T, tenant string, kind endpoint.Kind, filter []string, disabled bool) string {
	t.Helper()
	e, err := b.table.Create(context.Background(), endpoint.Endpoint{Tenant: tenant, Kind: kind, URL: urls[kind], EventTypes: filter})
	require.NoError(t, err)
	if disabled {
		_, err = b.table.SetDisabled(context.Background(), e.ID, &endpoint.Disabled{Reason: "maintenance", By: "operator"})
		require.NoError(t, err)
	}
	return e.ID
}

// endpoints registers n endpoints of tenant acme of kind subscribed to
// filter (nil: every type), 8 at a time, and returns their ids.
func (b *bundle) endpoints(t *testing.T, n int, kind endpoint.Kind, filter ...string) []string {
	t.Helper()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				var e endpoint.Endpoint
				e, errs[i] = b.table.Create(context.Background(), endpoint.Endpoint{Tenant: "acme", Kind: kind, URL: urls[kind], EventTypes: filter})
				ids[i] = e.ID
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return ids
}

func event(id string, extra ...string) *notification.Message {
	body := `{"version":1,"id":"` + id + `","channel":"event","event":{"tenant":"acme","type":"invoice.paid","payload":{"amount":42}}}`
	for i := 0; i+1 < len(extra); i += 2 {
		body = strings.Replace(body, extra[i], extra[i+1], 1)
	}
	m, err := notification.Parse([]byte(body))
	if err != nil {
		panic(err)
	}
	return m
}

// sentAt is m with created_at t, as the processor fills it from the SQS
// SentTimestamp of a copy whose producer left it out.
func sentAt(m *notification.Message, t time.Time) *notification.Message {
	c := *m
	c.CreatedAt = &t
	return &c
}

// deliveries parses every message of the webhook and chat queues.
func (b *bundle) deliveries(t *testing.T) []*notification.Message {
	t.Helper()
	var out []*notification.Message
	for _, q := range []string{b.hookQ, b.chatQ} {
		for _, msg := range b.sqs.Messages(q) {
			m, err := notification.Parse([]byte(msg.Body))
			require.NoError(t, err, "every delivery is a valid message: %s", msg.Body)
			out = append(out, m)
		}
	}
	return out
}

// exactlyOnce checks that the queues hold one delivery of evt to each of
// ids, and nothing else.
func exactlyOnce(t *testing.T, got []*notification.Message, evt string, ids []string) {
	t.Helper()
	count := map[string]int{}
	for _, d := range got {
		count[d.ID]++
	}
	require.Len(t, got, len(ids), "one delivery per endpoint, no more")
	for _, id := range ids {
		require.Equal(t, 1, count[endpoint.DeliveryID(evt, id)], "endpoint %s gets exactly one delivery", id)
	}
}

// TestDeliveryShape: each subscriber gets one delivery on its channel's
// queue, in the wire shape of docs/endpoints.md: id DeliveryID, tenant,
// event_id, the event's created_at, expires_at and metadata, the endpoint
// and no URL; a chat endpoint a text cut to its service's limit.
func TestDeliveryShape(t *testing.T) {
	t.Parallel()
	b := setup(t)
	hook := b.endpoints(t, 1, endpoint.KindWebhook)[0]
	discord := b.endpoints(t, 1, endpoint.KindDiscord)[0]
	big := `"` + strings.Repeat("x", 3000) + `"`
	m := event("evt_shape", `"channel":"event"`, `"channel":"event","created_at":"2026-12-05T02:00:00Z","expires_at":"2026-12-06T02:00:00Z","metadata":{"request":"r1"}`, `{"amount":42}`, `{"note":`+big+`}`)
	require.NoError(t, b.f.Send(context.Background(), m))

	hooks := b.sqs.Messages(b.hookQ)
	require.Len(t, hooks, 1)
	var wire map[string]any
	require.NoError(t, json.Unmarshal([]byte(hooks[0].Body), &wire))
	require.Equal(t, map[string]any{
		"version": float64(1), "id": endpoint.DeliveryID("evt_shape", hook), "channel": "webhook",
		"tenant": "acme", "event_id": "evt_shape",
		"created_at": "2026-12-05T02:00:00Z", "expires_at": "2026-12-06T02:00:00Z",
		"metadata": map[string]any{"request": "r1"},
		"webhook":  map[string]any{"endpoint": hook, "event_type": "invoice.paid", "payload": map[string]any{"note": strings.Repeat("x", 3000)}},
	}, wire)

	chats := b.sqs.Messages(b.chatQ)
	require.Len(t, chats, 1)
	c, err := notification.Parse([]byte(chats[0].Body))
	require.NoError(t, err)
	require.Equal(t, endpoint.DeliveryID("evt_shape", discord), c.ID)
	require.Equal(t, discord, c.Chat.Endpoint)
	require.Empty(t, c.Chat.URL)
	require.Empty(t, c.Chat.Service)
	require.Equal(t, notification.MaxDiscordContentChars, len([]rune(c.Chat.Text)), "cut to Discord's limit")
	require.True(t, strings.HasPrefix(c.Chat.Text, `invoice.paid for acme: {"note":"xxx`))
	require.True(t, strings.HasSuffix(c.Chat.Text, "…"))

	line := b.logs.lines(t)[0]
	require.Equal(t, "fanout", line["msg"])
	require.Equal(t, fanout.OutcomeFannedOut, line["fanout"])
	require.Equal(t, float64(2), line["DeliveriesEnqueued"])
	require.Equal(t, float64(1), line["EventsFannedOut"])
	require.NotContains(t, line, "EventsWithoutSubscribers")
}

// TestChatText: short texts whole, long ones cut to the limit on a
// character, ending "…"; the payload compacted.
func TestChatText(t *testing.T) {
	t.Parallel()
	ev := &notification.Event{Tenant: "acme", Type: "a.b", Payload: json.RawMessage("{ \"k\" : [1, 2] }")}
	require.Equal(t, `a.b for acme: {"k":[1,2]}`, fanout.ChatText(ev, 100))
	require.Equal(t, `a.b for acme: {"k":[1,2]}`, fanout.ChatText(ev, 25), "exactly the limit")
	require.Equal(t, `a.b for acme: {"k":[1,2…`, fanout.ChatText(ev, 24))
	ev.Payload = json.RawMessage(`"ääää"`)
	require.Equal(t, `a.b for acme: "ää…`, fanout.ChatText(ev, 18), "cut on characters, not bytes")
}

// TestFilterMatching: exact types, prefix wildcards and "every type"
// subscribe; another type, another prefix, another tenant's endpoint and a
// disabled endpoint do not.
func TestFilterMatching(t *testing.T) {
	t.Parallel()
	b := setup(t)
	add := func(tenant string, filter []string, disabled bool) string {
		return b.add(t, tenant, endpoint.KindWebhook, filter, disabled)
	}
	want := []string{
		add("acme", nil, false),                                    // every type
		add("acme", []string{"invoice.paid"}, false),               // exact
		add("acme", []string{"invoice.*"}, false),                  // prefix
		add("acme", []string{"customer.*", "invoice.paid"}, false), // one of two
	}
	add("acme", []string{"invoice.created"}, false)   // another type
	add("acme", []string{"invoice.paid.late"}, false) // a longer type
	add("acme", []string{"inv.*"}, false)             // a prefix of a word, not of the dotted name
	add("acme", []string{"customer.*"}, false)        // another prefix
	add("globex", nil, false)                         // another tenant
	add("acme", nil, true)                            // disabled
	add("acme", []string{"invoice.paid"}, true)       // disabled
	require.NoError(t, b.f.Send(context.Background(), event("evt_filter")))
	exactlyOnce(t, b.deliveries(t), "evt_filter", want)
}

// TestNoSubscribers: an event no endpoint asked for is settled, counted
// and logged once; a copy of it later sends nothing and logs it as done
// before, not counting it again.
func TestNoSubscribers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.add(t, "acme", endpoint.KindWebhook, []string{"customer.created"}, false)
	b.add(t, "globex", endpoint.KindWebhook, nil, false)
	require.NoError(t, b.f.Send(context.Background(), event("evt_none")))
	require.NoError(t, b.f.Send(context.Background(), event("evt_none")))
	require.Empty(t, b.deliveries(t))
	lines := b.logs.lines(t)
	require.Len(t, lines, 2)
	require.Equal(t, fanout.OutcomeNoSubscribers, lines[0]["fanout"])
	require.Equal(t, float64(1), lines[0]["EventsWithoutSubscribers"])
	require.Equal(t, float64(1), lines[0]["EventsFannedOut"])
	require.Equal(t, float64(0), lines[0]["DeliveriesEnqueued"])
	require.Equal(t, fanout.OutcomeAlreadyDone, lines[1]["fanout"])
	require.NotContains(t, lines[1], "EventsWithoutSubscribers", "counted once")
	require.NotContains(t, lines[1], "EventsFannedOut")
}

// TestOneEndpoint: an event naming an endpoint goes to that endpoint alone,
// whatever its filter, when it is the tenant's and enabled; another
// tenant's, a disabled or an unknown endpoint gets nothing (no_subscribers).
func TestOneEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	slack := b.add(t, "acme", endpoint.KindSlack, []string{"customer.created"}, false)
	b.add(t, "acme", endpoint.KindWebhook, nil, false)
	globex := b.add(t, "globex", endpoint.KindWebhook, nil, false)
	disabled := b.add(t, "acme", endpoint.KindWebhook, nil, true)
	test := func(id, ep string) *notification.Message {
		return event(id, `"payload"`, `"endpoint":"`+ep+`","payload"`, `"invoice.paid"`, `"herald.test"`)
	}
	require.NoError(t, b.f.Send(context.Background(), test("evt_t0", slack)))
	exactlyOnce(t, b.deliveries(t), "evt_t0", []string{slack})
	require.Equal(t, "herald.test for acme: {\"amount\":42}", b.deliveries(t)[0].Chat.Text)
	for i, ep := range []string{globex, disabled, endpoint.NewID()} {
		require.NoError(t, b.f.Send(context.Background(), test("evt_t"+strconv.Itoa(i+1), ep)))
	}
	require.Len(t, b.deliveries(t), 1, "nothing to another tenant's, a disabled or an unknown endpoint")
	lines := b.logs.lines(t)
	require.Equal(t, fanout.OutcomeFannedOut, lines[0]["fanout"])
	for _, l := range lines[1:] {
		require.Equal(t, fanout.OutcomeNoSubscribers, l["fanout"])
	}
}

// TestSecondRunCreatesNothing: the same event fanned out again (SQS handed
// it over again after the first finished) sends nothing.
func TestSecondRunCreatesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	want := b.endpoints(t, 25, endpoint.KindWebhook)
	m := event("evt_twice")
	require.NoError(t, b.f.Send(context.Background(), m))
	require.NoError(t, b.f.Send(context.Background(), m))
	b.clock.Advance(2 * time.Hour)
	// Another SQS message of the same event: the processor gives it its
	// own SentTimestamp as created_at; still the same event.
	require.NoError(t, b.f.Send(context.Background(), sentAt(event("evt_twice"), b.clock.Now())))
	exactlyOnce(t, b.deliveries(t), "evt_twice", want)
}

// TestConcurrentRuns: two copies at once: one fans out, the other is told
// to come back after the lease (fanout_in_progress) and then finds it done.
func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	want := b.endpoints(t, 95, endpoint.KindWebhook)
	m := event("evt_both")
	// The copy that holds the lease waits at its first listing until the
	// other has returned: under load the holder could otherwise finish
	// before the other copy starts, which then finds the fan-out done.
	other := make(chan struct{})
	b.reg.onList = func(call int) {
		if call == 1 {
			select {
			case <-other:
			case <-time.After(time.Minute):
			}
		}
	}
	errs := make([]error, 2)
	returned := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = b.f.Send(context.Background(), m); returned <- struct{}{} })
	}
	select {
	case <-returned:
		close(other)
	case <-time.After(time.Minute):
		close(other)
		t.Fatal("neither copy returned while the lease holder waited: the other copy did not find the lease")
	}
	wg.Wait()
	var failed int
	for _, err := range errs {
		if err == nil {
			continue
		}
		failed++
		var te *delivery.TransientError
		require.ErrorAs(t, err, &te)
		require.Equal(t, fanout.ClassInProgress, te.Class)
		require.Positive(t, te.RetryAfter)
	}
	require.Equal(t, 1, failed, "exactly one copy fans out")
	require.NoError(t, b.f.Send(context.Background(), m), "the copy retried later")
	exactlyOnce(t, b.deliveries(t), "evt_both", want)
}

// TestCrashBetweenSendAndCursor: the invocation dies after a batch's
// SendMessageBatch and before its cursor write. The next copy waits for
// the lease, then sends that one batch again — the same ids and the same
// bodies, which the deliver function's delivered-once and a receiver's
// webhook-id deduplicate — and every other endpoint exactly once.
func TestCrashBetweenSendAndCursor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	want := b.endpoints(t, 45, endpoint.KindWebhook)
	m := sentAt(event("evt_crash"), b.clock.Now().Add(-time.Minute))
	// The claim and two cursor writes succeed; the third cursor write
	// (after the third batch) fails, and so does the lease's release that
	// follows: as if the invocation died there.
	b.db.FailAfter("PutItem", 3, 2)
	err := b.f.Send(context.Background(), m)
	var te *delivery.TransientError
	require.ErrorAs(t, err, &te, "the table's failure is retried")
	require.Equal(t, store.ClassUnavailable, te.Class)

	err = b.f.Send(context.Background(), m)
	require.ErrorAs(t, err, &te, "the crashed copy's lease holds")
	require.Equal(t, fanout.ClassInProgress, te.Class)
	b.clock.Advance(fanout.DefaultLease)
	// The copy that goes on is another SQS message (a producer's retry):
	// another created_at from its SentTimestamp, the same deliveries.
	require.NoError(t, b.f.Send(context.Background(), sentAt(event("evt_crash"), b.clock.Now())))

	got := b.deliveries(t)
	require.Len(t, got, 45+10, "one batch of 10 again, no more")
	bodies := map[string][]string{}
	for _, q := range []string{b.hookQ} {
		for _, msg := range b.sqs.Messages(q) {
			var d struct{ ID string }
			require.NoError(t, json.Unmarshal([]byte(msg.Body), &d))
			bodies[d.ID] = append(bodies[d.ID], msg.Body)
		}
	}
	twice := 0
	for _, id := range want {
		copies := bodies[endpoint.DeliveryID("evt_crash", id)]
		require.NotEmpty(t, copies, id)
		if len(copies) == 2 {
			twice++
			require.Equal(t, copies[0], copies[1], "a copy is the same body under the same id")
		}
	}
	require.Equal(t, 10, twice, "only the unrecorded batch")
}

// TestLeaseTakenOver: a copy slower than its lease loses it to another
// copy, which goes on from the progress; the slow copy's next progress
// write fails, so it stops after at most one batch of copies.
func TestLeaseTakenOver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.endpoints(t, 2*fanout.PageSize+50, endpoint.KindWebhook)
	m := event("evt_slow")
	var other error
	b.reg.onList = func(call int) {
		if call == 2 { // the slow copy, before its second page
			b.reg.onList = nil
			b.clock.Advance(fanout.DefaultLease + time.Second)
			other = b.f.Send(context.Background(), m)
		}
	}
	err := b.f.Send(context.Background(), m)
	require.NoError(t, other, "the second copy takes the lease over and finishes")
	var te *delivery.TransientError
	require.ErrorAs(t, err, &te)
	require.Equal(t, fanout.ClassInProgress, te.Class, "the slow copy stops")
	got := b.deliveries(t)
	require.Equal(t, 2*fanout.PageSize+50+10, len(got), "one batch twice")
	seen := map[string]bool{}
	for _, d := range got {
		seen[d.ID] = true
	}
	require.Len(t, seen, 2*fanout.PageSize+50, "every endpoint")
}

// TestTenThousandEndpointsAcrossInvocations: a tenant with 10,000 endpoints
// fans out completely, exactly once per endpoint, over several
// invocations: each one stops when its time left falls to StopBefore and
// puts the event back on its queue, and the next goes on from the cursor.
func TestTenThousandEndpointsAcrossInvocations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	want := append(b.endpoints(t, 9000, endpoint.KindWebhook), b.endpoints(t, 1000, endpoint.KindTeams)...)
	// Each invocation has StopBefore + 2 s of time.
	b.cfg.StopBefore = time.Hour
	b.rebuild(t)
	m := event("evt_big")
	invocations := 0
	for {
		invocations++
		require.LessOrEqual(t, invocations, 1000, "the fan-out makes progress: at least one batch of 10 per invocation")
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour+2*time.Second)
		err := b.f.Send(ctx, m)
		cancel()
		require.NoError(t, err)
		put := b.sqs.Messages(b.evtQ)
		if len(put) < invocations {
			break // finished: no copy put back
		}
		require.Len(t, put, invocations, "one copy put back per invocation that stopped")
		next, err := notification.Parse([]byte(put[len(put)-1].Body))
		require.NoError(t, err)
		require.Equal(t, m, next, "the event is put back as it came")
		m = next
	}
	require.GreaterOrEqual(t, invocations, 2, "one invocation was not enough")
	got := b.deliveries(t)
	exactlyOnce(t, got, "evt_big", want)
	require.Len(t, b.sqs.Messages(b.chatQ), 1000)

	var enqueued float64
	var continued int
	for _, l := range b.logs.lines(t) {
		enqueued += l["DeliveriesEnqueued"].(float64)
		if l["fanout"] == fanout.OutcomeContinued {
			continued++
		}
	}
	require.Equal(t, float64(10000), enqueued, "the metric counts each delivery once")
	require.Equal(t, invocations-1, continued)
}

// TestEachInvocationOneBatch: with no time to spare, each invocation sends
// one batch and hands on, across pages of the listing. Endpoints disabled between two invocations, one
// already sent and one not, shift nothing: the resumed fan-out skips by
// endpoint id, not by position, so every other endpoint still gets
// exactly one delivery and the disabled one not sent none.
func TestEachInvocationOneBatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	all := b.endpoints(t, 2*fanout.PageSize+15, endpoint.KindWebhook)
	slices.Sort(all) // the listing's order
	b.cfg.StopBefore = time.Hour
	b.rebuild(t)
	m := event("evt_slices")
	invoke := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		require.NoError(t, b.f.Send(ctx, m))
	}
	invoke()
	require.Len(t, b.deliveries(t), 10)
	for _, id := range []string{all[2], all[14]} {
		_, err := b.table.SetDisabled(context.Background(), id, &endpoint.Disabled{Reason: "maintenance", By: "operator"})
		require.NoError(t, err)
	}
	pages := b.reg.calls
	invocations := 1
	for len(b.sqs.Messages(b.evtQ)) == invocations {
		require.Less(t, invocations, 1+10+10+2, "the fan-out makes progress: one batch per invocation")
		invoke()
		invocations++
	}
	// The first batch, then the first page's 92 endpoints left (100
	// enabled, 8 of them sent) in 10, the second page's 100 in 10, the
	// last 13 in 2.
	require.Equal(t, 1+10+10+2, invocations)
	require.Len(t, b.sqs.Messages(b.evtQ), invocations-1, "put back after each but the last")
	require.Equal(t, invocations-1, b.reg.calls-pages, "one page read per invocation: a batch that ends a page moves the cursor to the next")
	want := slices.Delete(slices.Clone(all), 14, 15)
	exactlyOnce(t, b.deliveries(t), "evt_slices", want)
}

// TestFailures: a failing SendMessageBatch, Query or table read is a
// transient error of its class (retried with backoff by the processor),
// and nothing is recorded past what was sent.
func TestFailures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.endpoints(t, 15, endpoint.KindWebhook)
	m := event("evt_fail")

	b.sqs.FailAction("SendMessageBatch")
	err := b.f.Send(context.Background(), m)
	var te *delivery.TransientError
	require.ErrorAs(t, err, &te)
	require.Equal(t, fanout.ClassEnqueueFailed, te.Class)
	require.Empty(t, b.deliveries(t))

	b.db.Fail("GetItem", 1)
	err = b.f.Send(context.Background(), m)
	require.ErrorAs(t, err, &te)
	require.Equal(t, store.ClassUnavailable, te.Class)

	b.db.Fail("Query", 1)
	err = b.f.Send(context.Background(), m)
	require.ErrorAs(t, err, &te)
	require.Equal(t, store.ClassUnavailable, te.Class)
}

// TestEventIDReused: another event under an id already fanned out is
// refused, permanently, and sends nothing.
func TestEventIDReused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.endpoints(t, 3, endpoint.KindWebhook)
	require.NoError(t, b.f.Send(context.Background(), event("evt_same")))
	err := b.f.Send(context.Background(), event("evt_same", `{"amount":42}`, `{"amount":43}`))
	var pe *delivery.PermanentError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, fanout.ClassEventIDReused, pe.Class)
	require.Len(t, b.deliveries(t), 3)
}

// TestIDRulesAgree: the contract's id rules (package notification, which
// the JSON Schema repeats) and the endpoint store's accept the same ids,
// tenants and event types.
func TestIDRulesAgree(t *testing.T) {
	t.Parallel()
	for _, id := range []string{endpoint.NewID(), endpoint.NewID(), "ep_", "ep_01JH0000000000000000000000", "ep_81jh0000000000000000000000", "ep_01jh000000000000000000000u", "x" + endpoint.NewID()[1:]} {
		require.Equal(t, endpoint.ValidID(id), notification.ValidEndpointID(id), id)
	}
	for _, typ := range []string{"invoice.paid", "a", strings.Repeat("t", 128), strings.Repeat("t", 129), "a:b", "a*", "a b", ""} {
		require.Equal(t, endpoint.ValidateEventType(typ) == nil, notification.ValidEventType(typ), typ)
	}
	for _, tenant := range []string{"acme", "a:b.c_d-e", strings.Repeat("t", 128), strings.Repeat("t", 129), "a b", "", "ä"} {
		e := endpoint.Endpoint{Tenant: tenant}
		err := endpoint.Validate(e)
		var fe *endpoint.FieldError
		tenantBad := errors.As(err, &fe) && fe.Field == "tenant"
		require.Equal(t, !tenantBad, notification.ValidTenant(tenant), tenant)
	}
}

func TestNewNamesMissingFields(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, edit := range map[string]func(*fanout.Config){
		"Subscribers":   func(c *fanout.Config) { c.Subscribers = nil },
		"Endpoints":     func(c *fanout.Config) { c.Endpoints = nil },
		"Table":         func(c *fanout.Config) { c.Table = "" },
		"SQS":           func(c *fanout.Config) { c.SQS = nil },
		"EventQueueURL": func(c *fanout.Config) { c.EventQueueURL = "" },
	} {
		cfg := b.cfg
		edit(&cfg)
		_, err := fanout.New(cfg)
		require.ErrorContains(t, err, name, fmt.Sprint(name))
	}
}

// TestFIFOQueues: on FIFO delivery queues each delivery's message group is
// its endpoint.
func TestFIFOQueues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.WebhookQueueURL = b.sqs.AddQueue(b.sqs.URL()+"/123456789012/herald-webhook.fifo", map[string]string{"FifoQueue": "true"})
	b.rebuild(t)
	ids := b.endpoints(t, 3, endpoint.KindWebhook)
	require.NoError(t, b.f.Send(context.Background(), event("evt_fifo")))
	msgs := b.sqs.Messages(b.cfg.WebhookQueueURL)
	require.Len(t, msgs, 3)
	var groups []string
	for _, m := range msgs {
		groups = append(groups, m.Attributes["MessageGroupId"])
	}
	require.ElementsMatch(t, ids, groups)
}
