package endpointsend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/testkit/chattest"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// endpoints is a register of endpoints as the endpoint store's Cache
// returns them (with their secrets' keys), for the Sender's one-method port.
type endpoints struct {
	mu sync.Mutex
	m  map[string]endpoint.Endpoint
}

func (e *endpoints) Get(_ context.Context, id string) (endpoint.Endpoint, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ep, ok := e.m[id]
	if !ok {
		return endpoint.Endpoint{}, fmt.Errorf("endpoint %s: %w", id, endpoint.ErrNotFound)
	}
	return ep, nil
}

func (e *endpoints) put(ep endpoint.Endpoint) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[string]endpoint.Endpoint{}
	}
	e.m[ep.ID] = ep
}

// failures keeps what RecordFailure was given, and the deadline of each
// call's context (zero without one).
type failures struct {
	mu        sync.Mutex
	ids       []string
	fs        []endpoint.Failure
	deadlines []time.Time
}

func (f *failures) RecordFailure(ctx context.Context, id string, x endpoint.Failure) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids = append(f.ids, id)
	f.fs = append(f.fs, x)
	dl, _ := ctx.Deadline()
	f.deadlines = append(f.deadlines, dl)
	return nil
}

func (f *failures) all() ([]string, []endpoint.Failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ids...), append([]endpoint.Failure(nil), f.fs...)
}

// request is what a receiver saw of one request.
type request struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is an httptest TLS server answering status, recording each
// request.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []request
	code int
}

func newReceiver(t *testing.T, code int) *receiver {
	t.Helper()
	r := &receiver{code: code}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, request{path: req.URL.RequestURI(), header: req.Header.Clone(), body: b, at: time.Now()})
		code := r.code
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.reqs...)
}

// deploymentSecret is the deployment's webhook secret, which signs inline
// webhooks (with a key derived per origin), never an endpoint's.
const deploymentSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

func webhookSender(t *testing.T, r *receiver) *webhook.Sender {
	t.Helper()
	s, err := webhook.NewSender(webhook.Config{
		Secret:          deploymentSecret,
		Timeout:         5 * time.Second,
		AllowCIDRs:      loopback,
		TLSClientConfig: r.srv.Client().Transport.(*http.Transport).TLSClientConfig,
	})
	require.NoError(t, err)
	return s
}

type bundle struct {
	recv      *receiver
	endpoints *endpoints
	failures  *failures
	sender    *endpointsend.Sender
}

func setup(t *testing.T, code int) *bundle {
	t.Helper()
	b := &bundle{recv: newReceiver(t, code), endpoints: &endpoints{}, failures: &failures{}}
	b.sender = endpointsend.ForWebhook(webhookSender(t, b.recv), endpointsend.Config{Endpoints: b.endpoints, Failures: b.failures})
	return b
}

func key(fill byte) []byte { return []byte(strings.Repeat(string(fill), 32)) }

// webhookEndpoint is a webhook endpoint of tenant acme at url with one
// current secret of key(k).
func webhookEndpoint(id, url string, k byte) endpoint.Endpoint {
	return endpoint.Endpoint{
		ID: id, Tenant: "acme", Kind: endpoint.KindWebhook, URL: url,
		Headers: map[string]string{"X-Acme-Route": "billing-7"},
		Secrets: []endpoint.Secret{{Version: 1, Key: key(k), CreatedAt: time.Now().Add(-time.Hour)}},
	}
}

const (
	ep1 = "ep_01jekz5v8n3q4r5s6t7v8w9x0y"
	ep2 = "ep_01jekz5v8n3q4r5s6t7v8w9x0z"
)

// delivery is the fan-out's delivery of evt_1 (invoice.paid) to endpoint
// id on the webhook channel.
func delivery1(id string) *notification.Message {
	return &notification.Message{
		Version: notification.Version, ID: endpoint.DeliveryID("evt_1", id), Channel: notification.ChannelWebhook,
		Tenant: "acme", EventID: "evt_1",
		Webhook: &notification.Webhook{Endpoint: id, EventType: "invoice.paid", Payload: json.RawMessage(`{"invoice":"in_1"}`)},
	}
}

// verify checks req as a Standard Webhooks receiver holding keys does, on
// the real clock: with herald's verification (herald verify, herald
// listen) and with the Standard Webhooks reference library given each key
// as the receiver installs it (whsec_…), which must agree.
func verify(t *testing.T, req request, keys ...[]byte) error {
	t.Helper()
	ts, err := strconv.ParseInt(req.header.Get(webhook.HeaderTimestamp), 10, 64)
	require.NoError(t, err)
	err = webhook.Verify(keys, req.header.Get(webhook.HeaderID), time.Unix(ts, 0), req.body,
		req.header.Get(webhook.HeaderSignature), time.Now(), webhook.DefaultTolerance)
	refOK := false
	for _, k := range keys {
		ref, rerr := standardwebhooks.NewWebhook(endpoint.Secret{Key: k}.String())
		require.NoError(t, rerr)
		refOK = refOK || ref.Verify(req.body, req.header) == nil
	}
	require.Equal(t, err == nil, refOK, "herald's verification (%v) and the reference library's agree", err)
	return err
}

func requireClass(t *testing.T, err error, permanent bool, class delivery.Class) {
	t.Helper()
	require.Error(t, err)
	p, c, _ := delivery.Classify(err)
	require.Equal(t, class, c, "error: %v", err)
	require.Equal(t, permanent, p, "error: %v", err)
}

// TestDeliversToTheEndpoint: a delivery naming an endpoint is posted to
// the endpoint's URL (path and query kept), signed so that the endpoint's
// own secret verifies it (and the deployment's per-origin key does not),
// with its custom headers and the event type; webhook-id is the delivery's
// id.
func TestDeliversToTheEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, http.StatusNoContent)
	b.endpoints.put(webhookEndpoint(ep1, b.recv.srv.URL+"/hooks/acme?src=herald", 'a'))
	m := delivery1(ep1)

	require.NoError(t, b.sender.Send(t.Context(), m))
	reqs := b.recv.requests()
	require.Len(t, reqs, 1)
	got := reqs[0]
	require.Equal(t, "/hooks/acme?src=herald", got.path)
	require.NoError(t, verify(t, got, key('a')))
	originKey, err := webhook.DeriveSecret(deploymentSecret, b.recv.srv.URL)
	require.NoError(t, err)
	decoded, err := webhook.DecodeSecret(originKey)
	require.NoError(t, err)
	require.ErrorIs(t, verify(t, got, decoded), webhook.ErrNoMatchingSignature)
	require.Equal(t, m.ID, got.header.Get(webhook.HeaderID))
	require.Equal(t, "billing-7", got.header.Get("X-Acme-Route"))
	require.Equal(t, "invoice.paid", got.header.Get(webhook.HeaderEventType))
	var body struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(got.body, &body))
	require.Equal(t, "invoice.paid", body.Type)
	require.JSONEq(t, `{"invoice":"in_1"}`, string(body.Data))
	ids, _ := b.failures.all()
	require.Empty(t, ids, "a delivered attempt records no failure")
}

// TestRotationGrace: during a rotation's grace period both secrets sign
// (a receiver holding either verifies); after it only the new one does.
func TestRotationGrace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		oldUntil  time.Duration // from now
		oldSigns  bool
		signature int
	}{
		{"in grace", time.Hour, true, 2},
		{"grace ending in a minute", time.Minute, true, 2},
		{"grace over", -time.Second, false, 1},
		{"grace long over", -48 * time.Hour, false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, http.StatusOK)
			ep := webhookEndpoint(ep1, b.recv.srv.URL, 'n')
			ep.Secrets = []endpoint.Secret{
				{Version: 2, Key: key('n'), CreatedAt: time.Now()},
				{Version: 1, Key: key('o'), CreatedAt: time.Now().Add(-time.Hour), Until: time.Now().Add(c.oldUntil)},
			}
			b.endpoints.put(ep)
			require.NoError(t, b.sender.Send(t.Context(), delivery1(ep1)))
			got := b.recv.requests()[0]
			require.NoError(t, verify(t, got, key('n')), "the new secret always signs")
			if c.oldSigns {
				require.NoError(t, verify(t, got, key('o')), "the old secret signs in its grace period")
			} else {
				require.ErrorIs(t, verify(t, got, key('o')), webhook.ErrNoMatchingSignature, "the old secret no longer signs")
			}
			require.Len(t, strings.Fields(got.header.Get(webhook.HeaderSignature)), c.signature)
		})
	}
}

// TestEndpointStateRefuses: a delivery to an endpoint that is disabled,
// unknown, another tenant's, or of a kind the channel does not send to,
// makes no request and fails permanently with its class; only the kind
// mismatch (a failure of the endpoint's own) is recorded as a failure.
func TestEndpointStateRefuses(t *testing.T) {
	t.Parallel()
	disabledAt := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		ep       func(url string) endpoint.Endpoint
		msg      func() *notification.Message
		class    delivery.Class
		recorded bool
	}{
		{"disabled by an operator", func(u string) endpoint.Endpoint {
			ep := webhookEndpoint(ep1, u, 'a')
			ep.Disabled = &endpoint.Disabled{Reason: "customer asked", At: disabledAt, By: "operator"}
			return ep
		}, func() *notification.Message { return delivery1(ep1) }, endpointsend.ClassDisabled, false},
		{"disabled by herald", func(u string) endpoint.Endpoint {
			ep := webhookEndpoint(ep1, u, 'a')
			ep.Disabled = &endpoint.Disabled{Reason: "webhook_gone", At: disabledAt, By: "herald"}
			return ep
		}, func() *notification.Message { return delivery1(ep1) }, endpointsend.ClassDisabled, false},
		{"not found", func(u string) endpoint.Endpoint { return webhookEndpoint(ep2, u, 'a') },
			func() *notification.Message { return delivery1(ep1) }, endpointsend.ClassNotFound, false},
		{"another tenant's", func(u string) endpoint.Endpoint {
			ep := webhookEndpoint(ep1, u, 'a')
			ep.Tenant = "globex"
			return ep
		}, func() *notification.Message { return delivery1(ep1) }, endpointsend.ClassNotFound, false},
		{"a delivery without a tenant", func(u string) endpoint.Endpoint { return webhookEndpoint(ep1, u, 'a') },
			func() *notification.Message { m := delivery1(ep1); m.Tenant = ""; return m }, endpointsend.ClassNotFound, false},
		{"a tenant that differs in case", func(u string) endpoint.Endpoint { return webhookEndpoint(ep1, u, 'a') },
			func() *notification.Message { m := delivery1(ep1); m.Tenant = "ACME"; return m }, endpointsend.ClassNotFound, false},
		{"a slack endpoint on the webhook channel", func(u string) endpoint.Endpoint {
			ep := webhookEndpoint(ep1, u, 'a')
			ep.Kind = endpoint.KindSlack
			return ep
		}, func() *notification.Message { return delivery1(ep1) }, endpointsend.ClassKindMismatch, true},
		{"an unknown kind", func(u string) endpoint.Endpoint {
			ep := webhookEndpoint(ep1, u, 'a')
			ep.Kind = "pager"
			return ep
		}, func() *notification.Message { return delivery1(ep1) }, endpointsend.ClassKindMismatch, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, http.StatusOK)
			b.endpoints.put(c.ep(b.recv.srv.URL))
			err := b.sender.Send(t.Context(), c.msg())
			requireClass(t, err, true, c.class)
			require.Empty(t, b.recv.requests(), "no request")
			ids, fs := b.failures.all()
			if c.recorded {
				require.Equal(t, []string{ep1}, ids)
				require.Equal(t, string(c.class), fs[0].Class)
			} else {
				require.Empty(t, ids)
			}
		})
	}
}

// TestRefusalQuotesStoredValuesSafely: a disabled endpoint's Disabled.By
// and an unknown kind (values the store holds, written by hand or by an
// older herald) are quoted in the refusal without their control
// characters (a forged line, a terminal escape, DEL, NUL), spaces kept,
// cut to 64 bytes (delivery.Truncate) after they are dropped.
func TestRefusalQuotesStoredValuesSafely(t *testing.T) {
	t.Parallel()
	b := setup(t, http.StatusOK)
	ep := webhookEndpoint(ep1, b.recv.srv.URL, 'a')
	ep.Disabled = &endpoint.Disabled{Reason: "paused", At: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC),
		By: "ops\tteam lead\r\nlevel=INFO msg=forged\x1b[0m\x7f"}
	b.endpoints.put(ep)
	err := b.sender.Send(t.Context(), delivery1(ep1))
	requireClass(t, err, true, endpointsend.ClassDisabled)
	require.Contains(t, err.Error(), "disabled by opsteam leadlevel=INFO msg=forged[0m at 2026-12-04T10:00:00Z;")

	ep2 := webhookEndpoint(ep2, b.recv.srv.URL, 'b')
	ep2.Kind = endpoint.Kind("pager\x00\n" + strings.Repeat("x ", 40))
	b.endpoints.put(ep2)
	err = b.sender.Send(t.Context(), delivery1(ep2.ID))
	requireClass(t, err, true, endpointsend.ClassKindMismatch)
	quoted := "pager" + strings.Repeat("x ", 40)
	require.Contains(t, err.Error(), "a "+delivery.Truncate(quoted, 64)+" endpoint cannot take a webhook delivery")
	require.Empty(t, b.recv.requests())
}

// TestKindMismatchOnTheChatChannel: a webhook endpoint named by a chat
// delivery is refused the same way.
func TestKindMismatchOnTheChatChannel(t *testing.T) {
	t.Parallel()
	reg := &endpoints{}
	reg.put(webhookEndpoint(ep1, "https://127.0.0.1:1/x", 'a'))
	cs, err := chat.NewSender(chat.Config{AllowCIDRs: loopback, AllowHosts: []string{"127.0.0.1"}})
	require.NoError(t, err)
	s := endpointsend.ForChat(cs, endpointsend.Config{Endpoints: reg})
	m := &notification.Message{Version: notification.Version, ID: "msg_1", Channel: notification.ChannelChat, Tenant: "acme",
		Chat: &notification.Chat{Endpoint: ep1, Text: "invoice.paid for acme: {}"}}
	requireClass(t, s.Send(t.Context(), m), true, endpointsend.ClassKindMismatch)
}

// TestFailuresAreRecorded: every failed attempt is one failure of the
// endpoint, with the delivery's ids, the attempt number, the class and a
// reason that holds neither the URL's path and query nor a header value
// nor a key. The write of each is bounded by its own 2 s (the delivery's
// context has a later deadline here), begun during the Send. An endpoint
// without a rate limit is not paced: the second attempt follows at once.
func TestFailuresAreRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t, http.StatusInternalServerError)
	ep := webhookEndpoint(ep1, b.recv.srv.URL+"/hooks/s3cr3t-path?token=tok-123456", 'a')
	b.endpoints.put(ep)
	var sent [][2]time.Time // each Send's start and end
	for attempt := 1; attempt <= 2; attempt++ {
		ctx, cancel := context.WithTimeout(delivery.WithAttempt(t.Context(), attempt), time.Minute)
		start := time.Now()
		err := b.sender.Send(ctx, delivery1(ep1))
		sent = append(sent, [2]time.Time{start, time.Now()})
		cancel()
		requireClass(t, err, false, webhook.ClassHTTP5xx)
	}
	b.failures.mu.Lock()
	deadlines := append([]time.Time(nil), b.failures.deadlines...)
	b.failures.mu.Unlock()
	require.Len(t, deadlines, 2)
	for i, dl := range deadlines {
		require.False(t, dl.Before(sent[i][0].Add(2*time.Second)), "attempt %d: the record's deadline is 2 s after it began, not sooner", i+1)
		require.False(t, dl.After(sent[i][1].Add(2*time.Second)), "attempt %d: the record's deadline is 2 s after it began, not later", i+1)
	}
	ids, fs := b.failures.all()
	require.Equal(t, []string{ep1, ep1}, ids)
	for i, f := range fs {
		require.Equal(t, i+1, f.Attempt)
		require.Equal(t, endpoint.DeliveryID("evt_1", ep1), f.MessageID)
		require.Equal(t, "evt_1", f.EventID)
		require.Equal(t, string(webhook.ClassHTTP5xx), f.Class)
		require.NotEmpty(t, f.Reason)
		for _, secret := range []string{"s3cr3t-path", "tok-123456", "billing-7", string(key('a'))} {
			require.NotContains(t, f.Reason, secret)
		}
		require.WithinDuration(t, time.Now(), f.At, time.Minute)
	}
}

// TestInlineMessagesPassThrough: a message with a URL of its own goes to
// the wrapped sender unchanged (signed with the per-origin key, no event
// type header), and keeps its destination key.
func TestInlineMessagesPassThrough(t *testing.T) {
	t.Parallel()
	b := setup(t, http.StatusOK)
	m := &notification.Message{Version: notification.Version, ID: "msg_inline", Channel: notification.ChannelWebhook,
		Webhook: &notification.Webhook{URL: b.recv.srv.URL + "/in", EventType: "user.created", Payload: json.RawMessage(`{}`)}}
	require.NoError(t, b.sender.Send(t.Context(), m))
	got := b.recv.requests()[0]
	secret, err := webhook.DeriveSecret(deploymentSecret, b.recv.srv.URL)
	require.NoError(t, err)
	k, err := webhook.DecodeSecret(secret)
	require.NoError(t, err)
	require.NoError(t, verify(t, got, k))
	require.Empty(t, got.header.Get(webhook.HeaderEventType))
	require.Equal(t, "", b.sender.DestinationKey(m), "an inline webhook is keyed by its origin (the processor's default)")
	require.Equal(t, "endpoint:"+ep1, b.sender.DestinationKey(delivery1(ep1)))
}

// TestDestinationKeys: an endpoint delivery is keyed by its endpoint on
// either channel; an inline chat message keeps the chat sender's key.
func TestDestinationKeys(t *testing.T) {
	t.Parallel()
	cs, err := chat.NewSender(chat.Config{})
	require.NoError(t, err)
	s := endpointsend.ForChat(cs, endpointsend.Config{Endpoints: &endpoints{}})
	inline := &notification.Message{Channel: notification.ChannelChat, Chat: &notification.Chat{Service: "slack", URL: "https://hooks.slack.com/services/T1/B1/xyz"}}
	want, err := chat.Destination("slack", inline.Chat.URL)
	require.NoError(t, err)
	require.Equal(t, want, s.DestinationKey(inline))
	require.Equal(t, "endpoint:"+ep2, s.DestinationKey(&notification.Message{Channel: notification.ChannelChat, Chat: &notification.Chat{Endpoint: ep2}}))
	require.True(t, endpointsend.IsDestination(endpointsend.DestinationKey(ep1)))
	for _, bad := range []string{"endpoint:", "endpoint:ep_short", "chat:slack:" + strings.Repeat("0", 32), ep1, "endpoint:" + ep1 + "x"} {
		require.False(t, endpointsend.IsDestination(bad), bad)
	}
}

// TestChatEndpoint: a chat endpoint's delivery is posted to its URL (the
// credential the store unsealed) with its kind as the service.
func TestChatEndpoint(t *testing.T) {
	t.Parallel()
	slack := chattest.NewSlack()
	t.Cleanup(slack.Close)
	cs, err := chat.NewSender(chat.Config{TLSClientConfig: slack.TLSConfig(), AllowCIDRs: loopback, AllowHosts: []string{"127.0.0.1"}})
	require.NoError(t, err)
	reg := &endpoints{}
	reg.put(endpoint.Endpoint{ID: ep2, Tenant: "acme", Kind: endpoint.KindSlack, URL: slack.URL() + "/services/T1/B1/xAcmeToken"})
	s := endpointsend.ForChat(cs, endpointsend.Config{Endpoints: reg})
	m := &notification.Message{Version: notification.Version, ID: endpoint.DeliveryID("evt_1", ep2), Channel: notification.ChannelChat,
		Tenant: "acme", EventID: "evt_1", Chat: &notification.Chat{Endpoint: ep2, Text: `invoice.paid for acme: {"invoice":"in_1"}`}}
	require.NoError(t, s.Send(t.Context(), m))
	got := slack.Received()
	require.Len(t, got, 1)
	require.Equal(t, "xAcmeToken", got[0].Hook)
	require.Contains(t, string(got[0].Body), "invoice.paid for acme")
	require.Equal(t, ep2, m.Chat.Endpoint, "the caller's message is left as it was")
	require.Empty(t, m.Chat.URL)
}

// TestUnreadableEndpointIsRetried: a store that fails is a transient
// failure, nothing sent.
func TestUnreadableEndpointIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, http.StatusOK)
	s := endpointsend.ForWebhook(webhookSender(t, b.recv), endpointsend.Config{Endpoints: failing{}})
	requireClass(t, s.Send(t.Context(), delivery1(ep1)), false, endpointsend.ClassUnavailable)
	require.Empty(t, b.recv.requests())
}

type failing struct{}

func (failing) Get(context.Context, string) (endpoint.Endpoint, error) {
	return endpoint.Endpoint{}, fmt.Errorf("kms: AccessDeniedException")
}

// TestDeadlineIsNoFailure: an attempt the invocation's deadline cut short
// is retried but not recorded as the endpoint's failure.
func TestDeadlineIsNoFailure(t *testing.T) {
	t.Parallel()
	hang := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(hang.Close)
	recv := &receiver{srv: hang}
	reg, fs := &endpoints{}, &failures{}
	reg.put(webhookEndpoint(ep1, hang.URL, 'a'))
	s := endpointsend.ForWebhook(webhookSender(t, recv), endpointsend.Config{Endpoints: reg, Failures: fs})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	requireClass(t, s.Send(ctx, delivery1(ep1)), false, delivery.ClassDeadline)
	ids, _ := fs.all()
	require.Empty(t, ids)
}
