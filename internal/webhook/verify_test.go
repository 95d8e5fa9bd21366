package webhook_test

import (
	"strings"
	"testing"
	"time"

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
