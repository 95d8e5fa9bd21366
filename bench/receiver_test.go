package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
)

// TestScaleDefaultsToMakeBenchsRun: a zero scale is `make bench`'s run:
// the fan-out receiver at 100 ms, large batches of 100, tables on standard
// output; a test's figures replace them.
func TestScaleDefaultsToMakeBenchsRun(t *testing.T) {
	t.Parallel()
	var o opts
	require.Equal(t, 100*time.Millisecond, o.receiverDelay())
	require.Equal(t, 100, o.largeBatch())
	require.Equal(t, os.Stdout, o.stdout())
	o.small = scale{fanDelay: time.Millisecond, large: 7}
	o.out = os.Stderr
	require.Equal(t, time.Millisecond, o.receiverDelay())
	require.Equal(t, 7, o.largeBatch())
	require.Equal(t, os.Stderr, o.stdout())
}

// TestTimeHandleFailsABatchWithFailures: a timed batch counts only when
// every record was delivered; the first fail records of webhookEvent go to
// /fail/, which answers 503.
func TestTimeHandleFailsABatchWithFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := sqstest.New(t)
	s.AddQueue("https://sqs.us-east-1.amazonaws.com/000000000000/bench", nil)
	rcv := newReceiver(0)
	defer rcv.Close()
	p, err := deliverer(awstest.Config(s.URL()), rcv, nil)
	require.NoError(t, err)
	_, err = timeHandle(ctx, p, webhookEvent("th-fail", 3, 1, rcv.URL(), 1))
	require.EqualError(t, err, "1 of 3 records failed")
	d, err := timeHandle(ctx, p, webhookEvent("th-ok", 2, 0, rcv.URL(), 1))
	require.NoError(t, err)
	require.Positive(t, d)
	require.Equal(t, int64(5), rcv.count.Load())
	require.Zero(t, rcv.badSig.Load())
	require.Len(t, s.Requests("ChangeMessageVisibilityBatch"), 1, "the failed record retried")
}
