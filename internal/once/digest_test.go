package once_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/once"
	"github.com/heraldhq/herald/notification"
)

func webhookBody(id string) string {
	return fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{}}}`, id)
}

// TestDigestIgnoresOnlyPerCopyFields: Digest is 43 base64url characters;
// parsed bodies that differ only in per-copy fields share one (moved from
// the processor with Digest).
func TestDigestIgnoresOnlyPerCopyFields(t *testing.T) {
	t.Parallel()
	parse := func(body string) *notification.Message {
		m, err := notification.Parse([]byte(body))
		require.NoError(t, err)
		return m
	}
	base := parse(webhookBody("d-1"))
	d := once.Digest(base)
	require.Len(t, d, 43)
	require.NotContains(t, d, "=")
	require.Equal(t, d, once.Digest(parse(strings.Replace(webhookBody("d-1"), `"channel"`, `"metadata":{"a":"b"},"channel"`, 1))))
	require.NotEqual(t, d, once.Digest(parse(webhookBody("d-2"))), "the id is content")
}
