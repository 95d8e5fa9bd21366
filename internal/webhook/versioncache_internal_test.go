package webhook

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readerFunc is a KeyVersionReader of the test's own, another reader than
// the store (which imports this package, so an internal test cannot use it).
type readerFunc func(ctx context.Context, origin string) (KeyVersions, error)

func (f readerFunc) KeyVersions(ctx context.Context, origin string) (KeyVersions, error) {
	return f(ctx, origin)
}

// TestVersionCacheHoldsAtMostMaxCachedOrigins: the key-record cache holds
// maxCachedOrigins origins, and the next new origin starts it afresh.
func TestVersionCacheHoldsAtMostMaxCachedOrigins(t *testing.T) {
	t.Parallel()
	var c versionCache
	ok := readerFunc(func(context.Context, string) (KeyVersions, error) { return KeyVersions{Version: 2}, nil })
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for i := range maxCachedOrigins {
		kv, err := c.get(context.Background(), ok, fmt.Sprintf("https://h%d.example", i), at)
		require.NoError(t, err)
		require.Equal(t, 2, kv.Version)
	}
	require.Equal(t, maxCachedOrigins, len(c.entries), "full")
	_, err := c.get(context.Background(), ok, "https://one-more.example", at)
	require.NoError(t, err)
	require.Equal(t, 1, len(c.entries), "started afresh with the new origin")
}

// TestVersionCacheKeepsNoFailedRead: a failed read leaves nothing in the
// cache; the next call reads again.
func TestVersionCacheKeepsNoFailedRead(t *testing.T) {
	t.Parallel()
	var c versionCache
	reads := 0
	r := readerFunc(func(context.Context, string) (KeyVersions, error) {
		reads++
		if reads == 1 {
			return KeyVersions{}, errors.New("no keys today")
		}
		return KeyVersions{Version: 3}, nil
	})
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	_, err := c.get(context.Background(), r, "https://a.example", at)
	require.Error(t, err)
	require.Empty(t, c.entries, "the failed read is not kept")
	kv, err := c.get(context.Background(), r, "https://a.example", at)
	require.NoError(t, err)
	require.Equal(t, 3, kv.Version)
	require.Equal(t, 2, reads)
}
