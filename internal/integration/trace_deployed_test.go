//go:build integration

package integration

import (
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// traced runs herald trace --stack on the mixed batch's webhook and one of
// its emails (mixedBatch): it reads the deployed function's lines back from
// LocalStack's CloudWatch Logs (/aws/lambda/<function>, FilterLogEvents)
// and the stack's dead-letter queues: the webhook retried after 1 s and
// 2 s, dead-lettered on receive 3 and in the dead-letter queue now; the
// email delivered on receive 1 and in none.
func (r *deployedRun) traced(t *testing.T, hook, mail string) {
	type report struct {
		Final       string `json:"final"`
		RetryDelays []int  `json:"retry_delays_seconds"`
		Steps       []struct {
			ReceiveCount int    `json:"receive_count"`
			Outcome      string `json:"outcome"`
			ErrorClass   string `json:"error_class"`
			Queue        string `json:"queue"`
		} `json:"steps"`
		DeadLetters []struct {
			Queue      string `json:"queue"`
			ErrorClass string `json:"error_class"`
			Attempts   int    `json:"attempts"`
		} `json:"dead_letters"`
		Sources []string `json:"sources"`
	}
	trace := func(id string) report {
		out, err := exec.CommandContext(r.ctx, heraldBinary(t), "trace", "--json", "--since", "1h", "--stack", r.d.stack, id).Output()
		require.NoError(t, err, "herald trace %s: %s", id, out)
		var rep report
		require.NoError(t, json.Unmarshal(out, &rep), "%s", out)
		return rep
	}
	var rep report
	// The dead letter may still be in flight from the receive that found it.
	require.Eventually(t, func() bool { rep = trace(hook); return len(rep.DeadLetters) == 1 }, 20*time.Second, time.Second, "the webhook's dead letter: %+v", rep)
	require.Equal(t, "dead_lettered", rep.Final)
	require.Equal(t, []int{1, 2}, rep.RetryDelays)
	require.Len(t, rep.Steps, 3)
	for i, s := range rep.Steps {
		require.Equal(t, i+1, s.ReceiveCount)
		require.Equal(t, "webhook_connection", s.ErrorClass)
		require.Equal(t, "webhook", s.Queue)
	}
	require.Equal(t, r.dlqURL, rep.DeadLetters[0].Queue)
	require.Equal(t, "webhook_connection", rep.DeadLetters[0].ErrorClass)
	require.Equal(t, 3, rep.DeadLetters[0].Attempts)
	require.Equal(t, "/aws/lambda/"+r.d.outputs["DeliverFunctionName"], rep.Sources[0], "LocalStack writes the function's own group")

	rep = trace(mail)
	require.Equal(t, "delivered", rep.Final)
	require.Empty(t, rep.RetryDelays)
	require.Empty(t, rep.DeadLetters)
}
