package webhook_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
)

// endpointRequest is what an endpoint saw of one request.
type endpointRequest struct {
	header http.Header
	body   []byte
}

func recorder(ch chan<- endpointRequest) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- endpointRequest{header: r.Header.Clone(), body: b}
	}
}

// verifies reports whether the request verifies under keys as a Standard
// Webhooks receiver checks it, on the real clock.
func verifies(t *testing.T, got endpointRequest, keys ...[]byte) error {
	t.Helper()
	ts, err := strconv.ParseInt(got.header.Get(webhook.HeaderTimestamp), 10, 64)
	require.NoError(t, err)
	return webhook.Verify(keys, got.header.Get(webhook.HeaderID), time.Unix(ts, 0), got.body,
		got.header.Get(webhook.HeaderSignature), time.Now(), webhook.DefaultTolerance)
}

func realClock(c *webhook.Config) { c.Now = time.Now }

// TestSendToSignsWithTheGivenKeys: a registered endpoint's request is
// signed with its own keys, each one, not with the key derived for the
// origin; its headers and the event type header are added.
func TestSendToSignsWithTheGivenKeys(t *testing.T) {
	t.Parallel()
	ch := make(chan endpointRequest, 1)
	b := setup(t, recorder(ch), realClock)
	newKey, oldKey := []byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")
	derived, err := webhook.DeriveSecret(testSecret, b.srv.URL)
	require.NoError(t, err)
	derivedKey, err := webhook.DecodeSecret(derived)
	require.NoError(t, err)

	m := message("")
	err = b.sender.SendTo(t.Context(), m, webhook.Target{
		URL:     b.srv.URL + "/hooks/acme",
		Keys:    [][]byte{newKey, oldKey},
		Headers: map[string]string{"X-Tenant-Token": "t0k", "Herald-Event-Type": "forged"},
	})
	require.NoError(t, err)
	got := receivedBy(t, ch)
	require.NoError(t, verifies(t, got, newKey), "the new key verifies alone")
	require.NoError(t, verifies(t, got, oldKey), "the old key verifies alone")
	require.ErrorIs(t, verifies(t, got, derivedKey), webhook.ErrNoMatchingSignature, "the origin's key does not sign an endpoint's request")
	require.Len(t, got.header.Values(webhook.HeaderSignature), 1)
	require.Len(t, strings.Fields(got.header.Get(webhook.HeaderSignature)), 2)
	require.Equal(t, "t0k", got.header.Get("X-Tenant-Token"))
	require.Equal(t, []string{"invoice.paid"}, got.header.Values(webhook.HeaderEventType), "herald's event type wins over a custom header")
}

// TestSendToRefuses: no key sends nothing; a reserved header is refused as
// in a message's headers.
func TestSendToRefuses(t *testing.T) {
	t.Parallel()
	ch := make(chan endpointRequest, 1)
	b := setup(t, recorder(ch), realClock)
	key := []byte("0123456789abcdef0123456789abcdef")
	for name, c := range map[string]struct {
		to    webhook.Target
		class delivery.Class
	}{
		"no key":          {webhook.Target{URL: b.srv.URL}, delivery.ClassInvalidMessage},
		"signature":       {webhook.Target{URL: b.srv.URL, Keys: [][]byte{key}, Headers: map[string]string{"Webhook-Signature": "v1,x"}}, webhook.ClassReservedHeader},
		"connection":      {webhook.Target{URL: b.srv.URL, Keys: [][]byte{key}, Headers: map[string]string{"connection": "close"}}, webhook.ClassReservedHeader},
		"not https":       {webhook.Target{URL: "ftp://example.com/x", Keys: [][]byte{key}}, webhook.ClassInvalidURL},
		"blocked address": {webhook.Target{URL: "https://10.0.0.1/x", Keys: [][]byte{key}}, webhook.ClassBlockedDestination},
	} {
		err := b.sender.SendTo(t.Context(), message(""), c.to)
		requireOutcome(t, err, true, c.class)
		require.Zero(t, b.hits.Load(), name)
	}
}
