package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/webhook"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func key(t *testing.T) []byte {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	return k
}

type received struct {
	header http.Header
	body   []byte
}

// receiver answers status to every POST and keeps what it received.
func receiver(t *testing.T, status int) (*httptest.Server, func() []received) {
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Header.Clone(), b})
		mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

func body(id, url, payload string) string {
	return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + url + `","event_type":"invoice.paid","payload":` + payload + `}}`
}

func batch(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: "m-" + strconv.Itoa(i), Body: b})
	}
	return ev
}

func failed(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	slices.Sort(ids)
	return ids
}

// TestPostsASignedEnvelope: each record is one POST of the Standard
// Webhooks envelope (type, timestamp, the payload as data), signed with
// the secret's key for the notification's id; a 2xx answer is success.
// Payloads from empty to 64 KiB, across the 64 bytes of the envelope's
// first buffer.
func TestPostsASignedEnvelope(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 40, 63, 64, 65, 200, 64 << 10} {
		srv, got := receiver(t, http.StatusOK)
		h, err := start(func(k string) string { return map[string]string{"PEER_WEBHOOK_SECRET": secret}[k] })
		require.NoError(t, err)
		payload := `{"invoice_id":"` + strings.Repeat("x", n) + `"}`
		before := time.Now().Truncate(time.Second)
		resp, err := h(context.Background(), batch(body("evt-1", srv.URL+"/hook", payload)))
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures, "payload of %d", n)

		r := got()
		require.Len(t, r, 1)
		require.Equal(t, "application/json", r[0].header.Get("Content-Type"))
		require.Equal(t, "evt-1", r[0].header.Get("webhook-id"))
		ts, err := strconv.ParseInt(r[0].header.Get("webhook-timestamp"), 10, 64)
		require.NoError(t, err)
		require.WithinRange(t, time.Unix(ts, 0), before, time.Now())
		require.NoError(t, webhook.Verify([][]byte{key(t)}, "evt-1", time.Unix(ts, 0), r[0].body, r[0].header.Get("webhook-signature"), time.Now(), time.Minute))
		var env struct {
			Type      string          `json:"type"`
			Timestamp string          `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r[0].body, &env), "%s", r[0].body)
		require.Equal(t, "invoice.paid", env.Type)
		require.Equal(t, time.Unix(ts, 0).UTC().Format(time.RFC3339), env.Timestamp)
		require.JSONEq(t, payload, string(env.Data))
	}
}

// TestFailures: a record whose POST fails (no JSON body, no listener, a
// non-2xx answer) is a batch item failure; the others of the batch are not.
func TestFailures(t *testing.T) {
	t.Parallel()
	ok, gotOK := receiver(t, http.StatusNoContent)
	redirect, _ := receiver(t, http.StatusMultipleChoices)
	broken, gotBroken := receiver(t, http.StatusInternalServerError)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	h, err := start(func(string) string { return secret })
	require.NoError(t, err)
	resp, err := h(context.Background(), batch(
		body("a", ok.URL, `{}`),
		`not json`,
		body("c", closed.URL, `{}`),
		body("d", broken.URL, `{}`),
		body("e", ok.URL, `[1]`),
		body("f", redirect.URL, `{}`),
	))
	require.NoError(t, err)
	require.Equal(t, []string{"m-1", "m-2", "m-3", "m-5"}, failed(resp))
	require.Len(t, gotOK(), 2)
	require.Len(t, gotBroken(), 1, "no retry")
}

// TestStartRefusesASecretThatIsNotBase64: the key is the base64 after
// "whsec_"; anything else fails the cold start.
func TestStartRefusesASecretThatIsNotBase64(t *testing.T) {
	t.Parallel()
	_, err := start(func(string) string { return "whsec_not*base64" })
	require.ErrorContains(t, err, "PEER_WEBHOOK_SECRET: illegal base64 data")
}

// TestClientSettings pins the client's settings, which no unit test can
// wait out: a 15 s request timeout (herald's default webhook timeout) and
// kept-alive connections idle for up to 90 s.
func TestClientSettings(t *testing.T) {
	t.Parallel()
	c := newClient()
	require.Equal(t, 15*time.Second, c.Timeout)
	tr, ok := c.Transport.(*http.Transport)
	require.True(t, ok)
	require.Equal(t, 90*time.Second, tr.IdleConnTimeout)
	require.Equal(t, 1000, tr.MaxIdleConnsPerHost)
	require.True(t, tr.ForceAttemptHTTP2)
}
