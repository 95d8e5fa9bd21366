//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
)

// TestCircuitAgainstTheLocalStack: with the local stack's table (moto) and
// a probe every second, an origin answering 503 gets the threshold's 3
// requests and about one probe a second for 30 notifications, which all
// end in the dead-letter queue on their last receive (3), while a healthy
// origin in the same batches gets all 30 of its own; the health items say
// why.
func TestCircuitAgainstTheLocalStack(t *testing.T) {
	t.Parallel()
	table := storeTable(t)
	e := setup(t, options{respond: func(string, int) int { return 503 }, deliver: func(_ *env, c *config.Deliver, _ *app.DeliverOptions) {
		c.StoreTable, c.CircuitThreshold, c.CircuitProbeInterval = table, 3, time.Second
		// One record at a time: the circuit opens after exactly 3 failures.
		c.Concurrency = 1
	}})
	up := localenv.NewReceiver(func(string, int) int { return 200 })
	t.Cleanup(up.Close)

	body := func(url, id string) string {
		return `{"version":1,"id":"` + id + `","channel":"webhook","webhook":{"url":"` + url + `/c","event_type":"t","payload":{}}}`
	}
	tag := randHex(4)
	var bodies []string
	for i := range 30 {
		bodies = append(bodies, body(e.receiver.URL(), fmt.Sprintf("down-%s-%d", tag, i)), body(up.URL(), fmt.Sprintf("up-%s-%d", tag, i)))
	}
	start := time.Now()
	e.send(bodies...)
	e.pollUntil(90*time.Second, func() bool {
		return distinctOutcome(e.logs, "delivered") == 30 && distinctOutcome(e.logs, "dead_lettered") == 30
	})
	elapsed := time.Since(start)
	t.Logf("the failing origin got %d requests for 30 notifications in %s", len(e.receiver.Requests()), elapsed)
	upIDs := map[string]bool{}
	for _, r := range up.Requests() {
		upIDs[r.Header.Get("webhook-id")] = true
	}
	require.Len(t, upIDs, 30, "every notification to the healthy origin delivered")
	down := len(e.receiver.Requests())
	require.LessOrEqual(t, down, 3+int(elapsed/time.Second)+1, "the threshold's failures and one probe a second, in %s", elapsed)
	require.Less(t, down, 15, "far fewer requests than the 30 notifications")
	circuitOpen := 0
	for _, l := range e.logs.all() {
		if l["msg"] == processor.LineNotification && l["outcome"] == "dead_lettered" {
			require.True(t, strings.HasPrefix(l["id"].(string), "down-"), l)
			if l["error_class"] == string(circuit.ClassCircuitOpen) {
				circuitOpen++
			}
		}
	}
	require.Positive(t, circuitOpen)

	st, err := store.New(dynamodb.NewFromConfig(e.awsCfg), store.Config{Table: table})
	require.NoError(t, err)
	origin, err := webhook.Origin(e.receiver.URL())
	require.NoError(t, err)
	h, err := st.Health(e.ctx, origin)
	require.NoError(t, err)
	require.GreaterOrEqual(t, h.Failures, 3)
	require.Equal(t, string(webhook.ClassHTTP5xx), h.FailureClass)
	upOrigin, err := webhook.Origin(up.URL())
	require.NoError(t, err)
	h, err = st.Health(e.ctx, upOrigin)
	require.NoError(t, err)
	require.Zero(t, h.Failures)
	require.False(t, h.LastSuccess.IsZero(), "a healthy origin's last success is written")
}

// distinctOutcome counts the notification ids with a line of outcome o. A
// SendMessage whose answer LocalStack cut short and the SDK retried puts
// the notification on the queue twice (seen on a fresh clone's CI run),
// and SQS hands over both: the id then has two lines.
func distinctOutcome(logs *logLines, o string) int {
	ids := map[any]bool{}
	for _, l := range logs.all() {
		if l["msg"] == processor.LineNotification && l["outcome"] == o {
			ids[l["id"]] = true
		}
	}
	return len(ids)
}
