package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/testclock"
	"github.com/heraldhq/herald/internal/webhook"
)

// TestDeriveSecretVersionVectors: the shared vectors of
// testdata/derive_versions.json; version 1 is DeriveSecret's key, the one
// receivers installed before key versions existed.
func TestDeriveSecretVersionVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/derive_versions.json")
	require.NoError(t, err)
	var v struct {
		Secret string
		Cases  []struct {
			URL     string
			Version int
			Derived string
		}
	}
	require.NoError(t, json.Unmarshal(raw, &v))
	require.Len(t, v.Cases, 6)
	for _, c := range v.Cases {
		got, err := webhook.DeriveSecretVersion(v.Secret, c.URL, c.Version)
		require.NoError(t, err)
		require.Equal(t, c.Derived, got, "%s version %d", c.URL, c.Version)
		if c.Version == 1 {
			d, err := webhook.DeriveSecret(v.Secret, c.URL)
			require.NoError(t, err)
			require.Equal(t, c.Derived, d, "version 1 is the unversioned key")
		}
	}
	for _, bad := range []int{0, -1} {
		_, err := webhook.DeriveSecretVersion(v.Secret, "https://hooks.example.com/", bad)
		require.ErrorContains(t, err, "want at least 1")
	}
}

// TestKeyVersionsActive: the previous version signs until PreviousUntil,
// not at it; version 1 has no previous; a zero record is version 1.
func TestKeyVersionsActive(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	require.Equal(t, []int{1}, webhook.KeyVersions{}.Active(end))
	require.Equal(t, []int{1}, webhook.KeyVersions{Version: 1, PreviousUntil: end}.Active(end.Add(-time.Hour)), "version 1 has no previous")
	k := webhook.KeyVersions{Version: 3, PreviousUntil: end}
	require.Equal(t, []int{3, 2}, k.Active(end.Add(-time.Millisecond)))
	require.Equal(t, []int{3}, k.Active(end))
	require.Equal(t, []int{3}, k.Active(end.Add(time.Hour)))
}

// keysBundle is two receivers (two origins) and a Sender reading key
// versions from a store over the DynamoDB wire fake, with a clock.
type keysBundle struct {
	ddb    *dynamotest.Server
	st     *store.Store
	a, b   *bundle
	got    chan received
	sender *webhook.Sender
	clock  *testclock.Clock
}

func keysSetup(t *testing.T) *keysBundle {
	t.Helper()
	k := &keysBundle{ddb: dynamotest.New(t), clock: testclock.New(time.Now())}
	k.ddb.AddTable("herald", store.AttrPK, store.AttrSK)
	st, err := store.New(k.ddb.Client(), store.Config{Table: "herald", Now: k.clock.Now})
	require.NoError(t, err)
	k.st = st
	h, got := capture()
	k.got = got
	k.a, k.b = setup(t, h), setup(t, h)
	k.sender = newSender(t, k.a.srv, func(c *webhook.Config) {
		c.KeyVersions = st
		c.Now = k.clock.Now
	})
	return k
}

// send sends to url and returns the webhook-signature and which versions
// of url's key verify it.
func (k *keysBundle) send(t *testing.T, url string) (string, []int) {
	t.Helper()
	m := message(url)
	require.NoError(t, k.sender.Send(context.Background(), m))
	r := receivedBy(t, k.got)
	var verified []int
	for v := 1; v <= 4; v++ {
		s, err := webhook.DeriveSecretVersion(testSecret, url, v)
		require.NoError(t, err)
		key, err := webhook.DecodeSecret(s)
		require.NoError(t, err)
		ts := k.clock.Now().Truncate(time.Second)
		if webhook.Verify([][]byte{key}, m.ID, ts, r.body, r.header.Get(webhook.HeaderSignature), ts, time.Minute) == nil {
			verified = append(verified, v)
		}
	}
	return r.header.Get(webhook.HeaderSignature), verified
}

// TestRotateOneOrigin: rotating origin a signs a's requests with versions
// 2 and 1 for the grace period, then with 2 alone; origin b stays on
// version 1 throughout, and so does every origin without a keys item.
func TestRotateOneOrigin(t *testing.T) {
	t.Parallel()
	k := keysSetup(t)
	ctx := context.Background()

	_, v := k.send(t, k.a.srv.URL)
	require.Equal(t, []int{1}, v, "no keys item: version 1")

	rec, err := k.st.Rotate(ctx, mustOrigin(t, k.a.srv.URL), time.Hour)
	require.NoError(t, err)
	require.Equal(t, 2, rec.Version)
	k.clock.Advance(webhook.KeyVersionsCacheTTL) // the cached record expires

	sig, v := k.send(t, k.a.srv.URL+"/other/path")
	require.Equal(t, []int{1, 2}, v, "during the grace period both verify")
	require.Len(t, strings.Fields(sig), 2, "two signatures, space-separated")
	_, v = k.send(t, k.b.srv.URL)
	require.Equal(t, []int{1}, v, "the other origin is unchanged")

	k.clock.Advance(time.Hour - webhook.KeyVersionsCacheTTL - time.Second)
	_, v = k.send(t, k.a.srv.URL)
	require.Equal(t, []int{1, 2}, v, "a second before the grace period ends")
	k.clock.Advance(time.Second)
	sig, v = k.send(t, k.a.srv.URL)
	require.Equal(t, []int{2}, v, "after the grace period only the new version")
	require.Len(t, strings.Fields(sig), 1)
	_, v = k.send(t, k.b.srv.URL)
	require.Equal(t, []int{1}, v)

	// A rotation with no grace period replaces the key at once.
	_, err = k.st.Rotate(ctx, mustOrigin(t, k.a.srv.URL), 0)
	require.NoError(t, err)
	k.clock.Advance(webhook.KeyVersionsCacheTTL)
	_, v = k.send(t, k.a.srv.URL)
	require.Equal(t, []int{3}, v)
}

// TestKeyVersionsCachedPerOrigin: sends to one origin read its keys item
// once per KeyVersionsCacheTTL, also when they run at once; each origin
// is read for itself.
func TestKeyVersionsCachedPerOrigin(t *testing.T) {
	t.Parallel()
	k := keysSetup(t)
	for range 3 {
		k.send(t, k.a.srv.URL)
	}
	require.Equal(t, 1, k.ddb.Calls("GetItem"))
	k.send(t, k.b.srv.URL)
	require.Equal(t, 2, k.ddb.Calls("GetItem"), "another origin, another read")

	k.clock.Advance(webhook.KeyVersionsCacheTTL - time.Millisecond)
	k.send(t, k.a.srv.URL)
	require.Equal(t, 2, k.ddb.Calls("GetItem"), "still cached")
	k.clock.Advance(time.Millisecond)
	k.send(t, k.a.srv.URL)
	require.Equal(t, 3, k.ddb.Calls("GetItem"), "read again once the cache time has passed")

	// A batch of ten at once to a third origin: one read.
	c, _ := newServer(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { require.NoError(t, k.sender.Send(context.Background(), message(c.URL))) })
	}
	wg.Wait()
	require.Equal(t, 4, k.ddb.Calls("GetItem"))
}

// TestKeyVersionsReadFailureSendsNothing: when the keys item cannot be
// read the request is not sent (neither unsigned nor with a key that may
// be stale) and the error is transient, of the store's class; the failed
// read is not cached, so the next attempt reads again and sends.
func TestKeyVersionsReadFailureSendsNothing(t *testing.T) {
	t.Parallel()
	k := keysSetup(t)
	_, err := k.st.Rotate(context.Background(), mustOrigin(t, k.a.srv.URL), time.Hour)
	require.NoError(t, err)

	for _, c := range []struct {
		fail  func()
		class delivery.Class
	}{
		{func() { k.ddb.Fail("GetItem", 1) }, store.ClassUnavailable},
		{func() { k.ddb.Throttle("GetItem", 1) }, store.ClassThrottled},
	} {
		c.fail()
		err := k.sender.Send(context.Background(), message(k.a.srv.URL))
		requireOutcome(t, err, false, c.class)
		require.Zero(t, k.a.hits.Load(), "nothing sent")
	}
	_, v := k.send(t, k.a.srv.URL)
	require.Equal(t, []int{1, 2}, v, "the next attempt reads the keys again")
}

// TestKeyVersionsIgnoredWhenShared: with ScopeShared the deployment
// secrets sign and the store is not read.
func TestKeyVersionsIgnoredWhenShared(t *testing.T) {
	t.Parallel()
	k := keysSetup(t)
	k.sender = newSender(t, k.a.srv, shared, func(c *webhook.Config) { c.KeyVersions = k.st; c.Now = k.clock.Now })
	require.NoError(t, k.sender.Send(context.Background(), message(k.a.srv.URL)))
	r := receivedBy(t, k.got)
	key, err := webhook.DecodeSecret(testSecret)
	require.NoError(t, err)
	ts := k.clock.Now().Truncate(time.Second)
	require.NoError(t, webhook.Verify([][]byte{key}, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", ts, r.body, r.header.Get(webhook.HeaderSignature), ts, time.Minute))
	require.Zero(t, k.ddb.Calls("GetItem"))
}

func mustOrigin(t *testing.T, url string) string {
	t.Helper()
	o, err := webhook.Origin(url)
	require.NoError(t, err)
	return o
}

// failingReader is a KeyVersionReader whose every read fails with an
// error that names no delivery class: another reader than the store.
type failingReader struct{}

func (failingReader) KeyVersions(context.Context, string) (webhook.KeyVersions, error) {
	return webhook.KeyVersions{}, errors.New("no keys today")
}

// TestKeyVersionsOtherReadFailure: a reader's failure without a class of
// its own is transient, webhook_keys_unavailable, and nothing is sent.
func TestKeyVersionsOtherReadFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, status(http.StatusNoContent), func(c *webhook.Config) { c.KeyVersions = failingReader{} })
	err := b.sender.Send(context.Background(), message(b.srv.URL))
	requireOutcome(t, err, false, webhook.ClassKeysUnavailable)
	require.ErrorContains(t, err, "no keys today")
	require.Zero(t, b.hits.Load())
}
