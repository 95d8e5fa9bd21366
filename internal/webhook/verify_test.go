package webhook_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/webhook"
)

func TestVerify(t *testing.T) {
	t.Parallel()
	key, err := webhook.DecodeSecret(webhook.NewSecret())
	require.NoError(t, err)
	require.Len(t, key, webhook.SecretKeyBytes)
	other, _ := webhook.DecodeSecret(webhook.NewSecret())
	ts := time.Unix(1_800_000_000, 0)
	body := []byte(`{"type":"a.b"}`)
	sig := webhook.Sign(key, "msg_1", ts, body)

	require.NoError(t, webhook.Verify([][]byte{key}, "msg_1", ts, body, sig, ts, webhook.DefaultTolerance))
	require.NoError(t, webhook.Verify([][]byte{other, key}, "msg_1", ts, body, "v1,bm9wZQ== "+sig, ts.Add(4*time.Minute), webhook.DefaultTolerance), "any secret, any listed signature")
	require.ErrorIs(t, webhook.Verify([][]byte{key}, "msg_1", ts, []byte(`{"type":"a.c"}`), sig, ts, webhook.DefaultTolerance), webhook.ErrNoMatchingSignature)
	require.ErrorIs(t, webhook.Verify([][]byte{key}, "msg_2", ts, body, sig, ts, webhook.DefaultTolerance), webhook.ErrNoMatchingSignature)
	require.ErrorIs(t, webhook.Verify([][]byte{other}, "msg_1", ts, body, sig, ts, webhook.DefaultTolerance), webhook.ErrNoMatchingSignature)
	require.ErrorIs(t, webhook.Verify([][]byte{key}, "msg_1", ts, body, sig, ts.Add(6*time.Minute), webhook.DefaultTolerance), webhook.ErrTimestampOutOfRange)
	require.ErrorIs(t, webhook.Verify([][]byte{key}, "msg_1", ts, body, sig, ts.Add(-6*time.Minute), webhook.DefaultTolerance), webhook.ErrTimestampOutOfRange)
	// The tolerance's ends are inside it, on both sides; a nanosecond past is not.
	tol := webhook.DefaultTolerance
	require.NoError(t, webhook.Verify([][]byte{key}, "msg_1", ts, body, sig, ts.Add(tol), tol))
	require.NoError(t, webhook.Verify([][]byte{key}, "msg_1", ts, body, sig, ts.Add(-tol), tol))
	require.ErrorIs(t, webhook.Verify([][]byte{key}, "msg_1", ts, body, sig, ts.Add(tol+1), tol), webhook.ErrTimestampOutOfRange)
	require.ErrorIs(t, webhook.Verify([][]byte{key}, "msg_1", ts, body, sig, ts.Add(-tol-1), tol), webhook.ErrTimestampOutOfRange)
	require.True(t, strings.HasPrefix(webhook.NewSecret(), "whsec_"))
	require.NotEqual(t, webhook.NewSecret(), webhook.NewSecret())
}

// TestVerifyRequest: the headers a receiver reads, checked before the
// signature; a request the Standard Webhooks reference library (Go) signs
// verifies, and one it rejects for its content is rejected too.
func TestVerifyRequest(t *testing.T) {
	t.Parallel()
	secret := webhook.NewSecret()
	key, err := webhook.DecodeSecret(secret)
	require.NoError(t, err)
	other, _ := webhook.DecodeSecret(webhook.NewSecret())
	ref, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	now := time.Now() // the reference library checks against the real clock
	body := []byte(`{"type":"a.b","timestamp":"2026-12-01T00:00:00Z","data":{}}`)
	sig, err := ref.Sign("msg_1", now, body)
	require.NoError(t, err)
	headers := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	good := headers(webhook.HeaderID, "msg_1", webhook.HeaderTimestamp, ts, webhook.HeaderSignature, sig)
	require.NoError(t, ref.Verify(body, good))
	require.NoError(t, webhook.VerifyRequest([][]byte{key}, good, body, now, webhook.DefaultTolerance))
	require.NoError(t, webhook.VerifyRequest([][]byte{other, key}, headers(webhook.HeaderID, "msg_1", webhook.HeaderTimestamp, ts,
		webhook.HeaderSignature, "v1,bm9wZQ== "+sig), body, now, webhook.DefaultTolerance), "rotation: any key, any listed signature")

	for _, tc := range []struct {
		name   string
		h      http.Header
		body   []byte
		now    time.Time
		want   error
		detail string
	}{
		{"no headers", http.Header{}, body, now, webhook.ErrMissingHeader, "webhook-id, webhook-timestamp, webhook-signature"},
		{"no id", headers(webhook.HeaderTimestamp, ts, webhook.HeaderSignature, sig), body, now, webhook.ErrMissingHeader, ": webhook-id"},
		{"blank signature", headers(webhook.HeaderID, "msg_1", webhook.HeaderTimestamp, ts, webhook.HeaderSignature, "  "), body, now, webhook.ErrMissingHeader, ": webhook-signature"},
		{"no timestamp", headers(webhook.HeaderID, "msg_1", webhook.HeaderSignature, sig), body, now, webhook.ErrMissingHeader, ": webhook-timestamp"},
		{"timestamp in milliseconds' form", headers(webhook.HeaderID, "msg_1", webhook.HeaderTimestamp, ts+".5", webhook.HeaderSignature, sig), body, now, webhook.ErrBadTimestamp, ""},
		{"timestamp as a date", headers(webhook.HeaderID, "msg_1", webhook.HeaderTimestamp, now.UTC().Format(time.RFC3339), webhook.HeaderSignature, sig), body, now, webhook.ErrBadTimestamp, ""},
		{"old timestamp", good, body, now.Add(webhook.DefaultTolerance + time.Second), webhook.ErrTimestampOutOfRange, ""},
		{"future timestamp", good, body, now.Add(-webhook.DefaultTolerance - time.Second), webhook.ErrTimestampOutOfRange, ""},
		{"other body", good, []byte(`{"type":"a.c"}`), now, webhook.ErrNoMatchingSignature, ""},
		{"other id", headers(webhook.HeaderID, "msg_2", webhook.HeaderTimestamp, ts, webhook.HeaderSignature, sig), body, now, webhook.ErrNoMatchingSignature, ""},
		{"only v2 entries", headers(webhook.HeaderID, "msg_1", webhook.HeaderTimestamp, ts, webhook.HeaderSignature, "v1a,"+sig[3:]+" v2,abc"), body, now, webhook.ErrNoMatchingSignature, "no v1,<base64> entry"},
	} {
		err := webhook.VerifyRequest([][]byte{key}, tc.h, tc.body, tc.now, webhook.DefaultTolerance)
		require.ErrorIs(t, err, tc.want, tc.name)
		require.Contains(t, err.Error(), tc.detail, tc.name)
		require.NotContains(t, err.Error(), sig[3:], tc.name)
	}
	// The reference library rejects the content-changed request too.
	require.Error(t, ref.Verify([]byte(`{"type":"a.c"}`), good))
	require.ErrorIs(t, webhook.VerifyRequest([][]byte{other}, good, body, now, webhook.DefaultTolerance), webhook.ErrNoMatchingSignature)
}
