package webhook

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeysForCachesDerivedKeys: with ScopeDestination each origin's keys
// are those DeriveSecret gives, one per active secret, the same from the
// cache as derived afresh; the cache holds origins side by side, never more than
// maxCachedOrigins origins and stays right after it starts afresh.
func TestKeysForCachesDerivedKeys(t *testing.T) {
	t.Parallel()
	s, err := NewSender(Config{
		Secrets:     []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"},
		SecretScope: ScopeDestination,
	})
	require.NoError(t, err)
	want := func(origin string) [][]byte {
		var out [][]byte
		for _, k := range s.keys {
			d, err := deriveKey(k, origin, 1)
			require.NoError(t, err)
			out = append(out, d)
		}
		return out
	}
	for round := range 2 { // derived, then cached
		got, err := s.keysFor("https://a.example", []int{1})
		require.NoError(t, err)
		require.Equal(t, want("https://a.example"), got, "round %d", round)
		require.Len(t, got, 2, "one key per active secret")
	}
	other, err := s.keysFor("https://b.example", []int{1})
	require.NoError(t, err)
	require.NotEqual(t, want("https://a.example"), other, "each origin its own keys")
	require.Len(t, s.derived.keys, 2, "a second origin is cached beside the first")

	for i := range maxCachedOrigins + 10 {
		origin := fmt.Sprintf("https://h%d.example", i)
		got, err := s.keysFor(origin, []int{1})
		require.NoError(t, err)
		require.Equal(t, want(origin), got)
		require.LessOrEqual(t, len(s.derived.keys), maxCachedOrigins)
	}
	got, err := s.keysFor("https://a.example", []int{1})
	require.NoError(t, err)
	require.Equal(t, want("https://a.example"), got, "derived again after the cache started afresh")
}
