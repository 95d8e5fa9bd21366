package deadletter

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// Queue URLs of the tests: the wire fake holds them by URL.
const (
	dlqURL      = "https://sqs.us-east-1.amazonaws.com/1/dlq"
	fifoDLQURL  = "https://sqs.us-east-1.amazonaws.com/1/dlq.fifo"
	mainURL     = "https://sqs.us-east-1.amazonaws.com/1/q"
	receiveCost = 200 * time.Millisecond
)

// newSQSWire starts the shared SQS wire fake (package sqstest) with a
// dead-letter queue at dlq holding bodies (on a FIFO queue, body i in
// message group i modulo groups) and the main queue mainURL, on a
// simulated clock that moves receiveCost per receive that returns messages
// and a long poll's wait per empty one. It returns the server, a real SDK
// client for it and the dead letters' message ids in order.
func newSQSWire(t *testing.T, dlq string, groups int, bodies ...string) (*sqstest.Server, *sqs.Client, []string) {
	t.Helper()
	w := sqstest.New(t)
	w.AddQueue(dlq, nil)
	w.AddQueue(mainURL, nil)
	start := time.Unix(1_800_000_000, 0)
	w.SetReceiveClock(start, receiveCost)
	var ids []string
	for i, b := range bodies {
		if groups > 0 {
			ids = append(ids, w.PutInGroup(dlq, fmt.Sprint("g", i%groups), b, start, nil))
			continue
		}
		ids = append(ids, w.Put(dlq, b, start, nil))
	}
	return w, w.Client(), ids
}

// bodies returns the bodies of url's messages in send order.
func bodies(w *sqstest.Server, url string) []string {
	var out []string
	for _, m := range w.Messages(url) {
		out = append(out, m.Body)
	}
	return out
}
