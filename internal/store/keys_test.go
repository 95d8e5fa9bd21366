package store_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/awstest"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
)

const origin = "https://hooks.example.com"

// TestKeysWithoutItemAreVersionOne: an origin never rotated is at version
// 1, with no previous version, and reading it writes nothing.
func TestKeysWithoutItemAreVersionOne(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	k, err := b.s.Keys(context.Background(), origin)
	require.NoError(t, err)
	require.Equal(t, store.OriginKeys{Version: 1}, k)
	require.Empty(t, b.srv.Items(table))
}

// TestRotateStartsTheNextVersion: each rotation moves one origin to its
// next version, the previous one signing until now+grace; other origins
// keep theirs. The item is the documented shape, with no time to live.
func TestRotateStartsTheNextVersion(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	ctx := context.Background()
	k, err := b.s.Rotate(ctx, origin, 24*time.Hour)
	require.NoError(t, err)
	require.Equal(t, 2, k.Version)
	require.True(t, k.PreviousUntil.Equal(b.clock.Now().Add(24*time.Hour)))
	got, err := b.s.Keys(ctx, origin)
	require.NoError(t, err)
	require.Equal(t, k.Version, got.Version)
	require.True(t, got.PreviousUntil.Equal(k.PreviousUntil))
	require.True(t, got.UpdatedAt.Equal(b.clock.Now()))

	items := b.srv.Items(table)
	require.Len(t, items, 1)
	require.NotEmpty(t, items[0]["rotation_id"], "the rotation's own id")
	delete(items[0], "rotation_id")
	require.Equal(t, []map[string]any{{
		"pk": map[string]any{"S": "origin#" + origin}, "sk": map[string]any{"S": "keys"},
		"type": map[string]any{"S": "keys"}, "version": map[string]any{"N": "2"},
		"previous_until": map[string]any{"N": "1796205600000"}, "updated_at": map[string]any{"N": "1796119200000"},
	}}, items)

	b.clock.Advance(time.Minute)
	k, err = b.s.Rotate(ctx, origin, 0)
	require.NoError(t, err)
	require.Equal(t, 3, k.Version)
	require.True(t, k.PreviousUntil.Equal(b.clock.Now()), "no grace: the previous version stops now")

	other, err := b.s.Keys(ctx, "https://other.example.com")
	require.NoError(t, err)
	require.Equal(t, 1, other.Version)

	_, err = b.s.Rotate(ctx, origin, -time.Second)
	require.ErrorContains(t, err, "negative")
}

// TestRotateAtOnceTakesEachVersionOnce: rotations of one origin at the
// same moment never both take a version; one that loses the race changes
// nothing and says so.
func TestRotateAtOnceTakesEachVersionOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	var (
		mu        sync.Mutex
		versions  = map[int]bool{}
		conflicts int
		wg        sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			k, err := b.s.Rotate(context.Background(), origin, time.Hour)
			mu.Lock()
			defer mu.Unlock()
			var ce *store.ConflictError
			if err != nil {
				require.ErrorAs(t, err, &ce)
				conflicts++
				return
			}
			require.False(t, versions[k.Version], "version %d taken twice", k.Version)
			versions[k.Version] = true
		})
	}
	wg.Wait()
	k, err := b.s.Keys(context.Background(), origin)
	require.NoError(t, err)
	require.Equal(t, 1+len(versions), k.Version)
	require.Equal(t, 8, len(versions)+conflicts)
}

// TestKeysReadFailure: a failed read is an *Error of its class, and
// KeyVersions returns it as transient.
func TestKeysReadFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	b.srv.Fail("GetItem", 1)
	_, err := b.s.Keys(context.Background(), origin)
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, store.ClassUnavailable, se.Class())

	b.srv.Fail("GetItem", 1)
	_, err = b.s.KeyVersions(context.Background(), origin)
	permanent, class, _ := delivery.Classify(err)
	require.False(t, permanent)
	require.Equal(t, store.ClassUnavailable, class)

	b.srv.Fail("GetItem", 1)
	_, err = b.s.Rotate(context.Background(), origin, time.Hour)
	require.ErrorAs(t, err, &se)
	require.Empty(t, b.srv.Items(table), "nothing written")
}

// TestRotateWhoseAnswerWasLost: a rotation's PutItem that reaches DynamoDB
// and loses its answer is retried by the SDK, and the retry fails its
// condition on the item the first attempt wrote; Rotate reads its own
// rotation id there and reports the rotation, not a conflict.
func TestRotateWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Hour)
	target, err := url.Parse(b.srv.URL())
	require.NoError(t, err)
	var lost atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if strings.HasSuffix(resp.Request.Header.Get("X-Amz-Target"), ".PutItem") && lost.CompareAndSwap(false, true) {
			resp.StatusCode = http.StatusInternalServerError // applied, answer lost
			resp.Body = io.NopCloser(strings.NewReader(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"lost"}`))
			resp.Header.Del("Content-Length")
			resp.Header.Del("X-Amz-Crc32")
		}
		return nil
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	client := dynamodb.NewFromConfig(awstest.Config(front.URL), func(o *dynamodb.Options) { o.Retryer = retry.NewStandard(); o.RetryMaxAttempts = 3 })
	s, err := store.New(client, store.Config{Table: table, Window: time.Hour, Now: b.clock.Now})
	require.NoError(t, err)

	k, err := s.Rotate(context.Background(), origin, time.Hour)
	require.NoError(t, err)
	require.True(t, lost.Load(), "the first PutItem's answer was lost")
	require.Equal(t, 2, k.Version)
	got, err := b.s.Keys(context.Background(), origin)
	require.NoError(t, err)
	require.Equal(t, 2, got.Version, "one rotation, not two")
}
