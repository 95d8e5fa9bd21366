package processor_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/once"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/notification"
)

// TestOnceOneWritePerNotification: a batch of ten delivered webhooks costs
// ten claims and one confirm, no read and no delete; copies of all ten in
// another environment are duplicates at once.
func TestOnceOneWritePerNotification(t *testing.T) {
	t.Parallel()
	a, b, ddb := twoEnvironments(t, nil, nil)
	var recs, copies []events.SQSMessage
	for i := range 10 {
		body := webhookBody(fmt.Sprintf("ok-b%d", i))
		recs = append(recs, rec(fmt.Sprintf("m-%d", i), body, 1))
		copies = append(copies, rec(fmt.Sprintf("c-%d", i), body, 1))
	}
	require.Empty(t, failures(handle(t, a, invocation(t), recs...)))
	require.Equal(t, 11, ddb.Calls("PutItem"), "ten claims and one confirm")
	require.Zero(t, ddb.Calls("GetItem")+ddb.Calls("DeleteItem"))

	require.Empty(t, failures(handle(t, b, invocation(t), copies...)))
	for id, line := range logLines(t, b) {
		require.Equal(t, "duplicate", line["outcome"], id)
	}
	for i := range 10 {
		id := fmt.Sprintf("ok-b%d", i)
		require.Equal(t, int32(1), a.sends(id)+b.sends(id), id)
	}
}

// TestOnceCopyAfterAnInvocationDiedIsSent: an invocation claimed the
// notification and died (no confirm, no release): once its lease has
// ended, a copy takes it over and sends it; a later copy is a duplicate.
func TestOnceCopyAfterAnInvocationDiedIsSent(t *testing.T) {
	t.Parallel()
	a, b, ddb := twoEnvironments(t, nil, nil)
	st, err := store.New(ddb.Client(), store.Config{Table: onceTable, Now: onceClock})
	require.NoError(t, err)
	body := webhookBody("ok-died")
	// The dead invocation's lease ended a second ago.
	_, err = st.Claim(context.Background(), st.NewBatch(), "webhook", "ok-died", "", onceClock().Add(-time.Second))
	require.NoError(t, err)

	require.Empty(t, failures(handle(t, a, invocation(t), rec("m-1", body, 2))))
	require.Equal(t, "delivered", logLines(t, a)["m-1"]["outcome"])
	require.Empty(t, failures(handle(t, b, invocation(t), rec("m-2", body, 1))))
	require.Equal(t, "duplicate", logLines(t, b)["m-2"]["outcome"])
	require.Equal(t, int32(1), a.sends("ok-died")+b.sends("ok-died"))
}

// TestOnceOnlyOnItsChannels: with OnceChannels email, a webhook's copy is
// sent again without a store call, an email's copy is a duplicate.
func TestOnceOnlyOnItsChannels(t *testing.T) {
	t.Parallel()
	a, b, ddb := twoEnvironments(t, nil, func(c *once.Config) {
		c.Channels = []notification.Channel{notification.ChannelEmail}
	})
	require.Empty(t, failures(handle(t, a, invocation(t), rec("m-1", webhookBody("ok-ch-hook"), 1))))
	require.Zero(t, ddb.Calls("PutItem")+ddb.Calls("GetItem"), "no store call for a webhook")
	require.Empty(t, failures(handle(t, b, invocation(t), rec("m-2", webhookBody("ok-ch-hook"), 1))))
	require.Equal(t, int32(2), a.sends("ok-ch-hook")+b.sends("ok-ch-hook"), "the webhook's copy is sent again")

	require.Empty(t, failures(handle(t, a, invocation(t), rec("m-3", mailBody("ok-ch-mail"), 1))))
	require.Empty(t, failures(handle(t, b, invocation(t), rec("m-4", mailBody("ok-ch-mail"), 1))))
	require.Equal(t, int32(1), a.sends("ok-ch-mail")+b.sends("ok-ch-mail"), "the email's copy is not")
	require.Equal(t, "duplicate", logLines(t, b)["m-4"]["outcome"])
}

// TestOnceCleanBatchWritesNoStoreMetric: a clean batch with a store
// defines neither StoreErrors nor DestinationsDisabled (each costs a
// custom metric's month); a batch whose confirm fails writes StoreErrors.
func TestOnceCleanBatchWritesNoStoreMetric(t *testing.T) {
	t.Parallel()
	a, b, ddb := twoEnvironments(t, nil, nil)
	require.Empty(t, failures(handle(t, a, invocation(t), rec("m-1", webhookBody("ok-clean"), 1))))
	line := batchLine(t, a)
	require.NotContains(t, line, "StoreErrors")
	require.NotContains(t, line, "DestinationsDisabled")
	require.NotContains(t, fmt.Sprint(line["_aws"]), "StoreErrors", "not defined either")

	ddb.FailAfter("PutItem", 1, 1) // the confirm
	require.Empty(t, failures(handle(t, b, invocation(t), rec("m-2", webhookBody("ok-clean-2"), 1))))
	require.Equal(t, float64(1), batchLine(t, b)["StoreErrors"])
}

// TestCircuitCleanBatchWritesNoStoreMetric: with the circuit on, a clean
// batch defines neither DestinationsDisabled nor StoreErrors; a failing
// health read writes StoreErrors.
func TestCircuitCleanBatchWritesNoStoreMetric(t *testing.T) {
	t.Parallel()
	cs, envs := environments(t, 1, nil)
	up := newReceiver(t, http.StatusOK)
	require.Empty(t, failures(cs.invoke(t, envs[0], rec("m-1", up.body("c-1"), 1))))
	line := batchLine(t, envs[0])
	require.NotContains(t, line, "DestinationsDisabled")
	require.NotContains(t, line, "StoreErrors")
	require.Contains(t, line, "Paused", "an environment's first batch reports Paused 0")

	cs2, envs2 := environments(t, 1, nil)
	cs2.ddb.Fail("GetItem", 1)
	cs2.invoke(t, envs2[0], rec("m-2", up.body("c-2"), 1))
	require.Equal(t, float64(1), batchLine(t, envs2[0])["StoreErrors"])
}
