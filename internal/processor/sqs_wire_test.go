package processor_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// newSQSWire starts the shared SQS wire fake (package sqstest): the real SDK
// client serializes each request and parses each answer, and the fake
// rejects what SQS rejects (a visibility timeout over 43,200 s, more than 10
// entries, duplicate entry ids, an empty receipt handle, an oversized dead
// letter). Tests add the queues they use with AddQueue.
func newSQSWire(t *testing.T) (*sqstest.Server, *sqs.Client) {
	t.Helper()
	w := sqstest.New(t)
	return w, w.Client()
}
