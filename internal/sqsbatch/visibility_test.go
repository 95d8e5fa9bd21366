package sqsbatch_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/sqsbatch"
	"github.com/heraldhq/herald/internal/sqstest"
)

const queueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/q"

// TestChangeVisibility: 23 changes take three calls SQS accepts; a refused
// entry fails its change alone, at its own index, and a failed call every
// change of the call.
func TestChangeVisibility(t *testing.T) {
	t.Parallel()
	srv := sqstest.New(t)
	srv.AddQueue(queueURL, nil)
	var changes []sqsbatch.Change
	for i := range 23 {
		changes = append(changes, sqsbatch.Change{ReceiptHandle: fmt.Sprint("h", i), Timeout: time.Duration(i) * time.Second})
	}
	changes[12].Timeout = 43201 * time.Second // over the SQS limit: refused
	srv.FailReceiptHandle("h21")
	errs := sqsbatch.ChangeVisibility(context.Background(), srv.Client(), queueURL, changes)
	require.Len(t, errs, 23)
	for i, err := range errs {
		switch i {
		case 12:
			require.ErrorContains(t, err, "InvalidParameterValue")
		case 21:
			require.ErrorContains(t, err, "ReceiptHandleIsInvalid")
		default:
			require.NoError(t, err, i)
		}
	}
	require.Len(t, srv.Requests("ChangeMessageVisibilityBatch"), 3)

	srv.FailAction("ChangeMessageVisibilityBatch")
	errs = sqsbatch.ChangeVisibility(context.Background(), srv.Client(), queueURL, changes[:3])
	for _, err := range errs {
		require.ErrorContains(t, err, "change visibility")
	}
	require.Empty(t, sqsbatch.ChangeVisibility(context.Background(), srv.Client(), queueURL, nil))
}
