package processor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// TestOnceCopyAfterDeliveryFromAStoreWithoutTheItem: a store that refuses
// the copy's claim without naming the item (emulators, older compatible
// stores) still makes the copy a duplicate, with the delivery's time, on
// every receive: never a lease "held until 1970" retried into the
// dead-letter queue.
func TestOnceCopyAfterDeliveryFromAStoreWithoutTheItem(t *testing.T) {
	t.Parallel()
	for _, body := range []string{mailBody("rb-mail-1"), webhookBody("rb-hook-1")} {
		a, b, ddb := twoEnvironments(t, nil, nil)
		ddb.OmitConditionItem(true)
		id := notification.IDOf([]byte(body))
		require.Empty(t, failures(handle(t, a, invocation(t), rec("m-1", body, 1))))
		for receive := 1; receive <= 3; receive++ {
			msg := fmt.Sprintf("m-1-copy-%d", receive)
			require.Empty(t, failures(handle(t, b, invocation(t), rec(msg, body, receive))), "receive %d", receive)
			line := logLines(t, b)[msg]
			require.Equal(t, "duplicate", line["outcome"], "receive %d", receive)
			require.Equal(t, onceClock().UTC().Format(time.RFC3339), line["delivered_at"])
		}
		require.Equal(t, int32(1), a.sends(id)+b.sends(id), "%s sent once", id)
		require.Equal(t, 6, ddb.Calls("GetItem"), "per refused claim, one read back and one read of the batch's confirm item")
	}
}
