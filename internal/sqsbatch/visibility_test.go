package sqsbatch_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/sqsbatch"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
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

// TestChangeVisibilityCalls: ⌈n/10⌉ calls, none for no change; the first
// entry of a chunk (id "0") fails alone like any other.
func TestChangeVisibilityCalls(t *testing.T) {
	t.Parallel()
	for n, calls := range map[int]int{0: 0, 1: 1, 10: 1, 11: 2, 20: 2} {
		srv := sqstest.New(t)
		srv.AddQueue(queueURL, nil)
		changes := make([]sqsbatch.Change, n)
		for i := range changes {
			changes[i] = sqsbatch.Change{ReceiptHandle: fmt.Sprint("h", i)}
		}
		if n > 10 {
			srv.FailReceiptHandle("h10")
		}
		errs := sqsbatch.ChangeVisibility(context.Background(), srv.Client(), queueURL, changes)
		require.Len(t, srv.Requests("ChangeMessageVisibilityBatch"), calls, "%d changes", n)
		for i, err := range errs {
			if i == 10 {
				require.ErrorContains(t, err, "ReceiptHandleIsInvalid")
				continue
			}
			require.NoError(t, err, "%d of %d", i, n)
		}
	}
}

// strayFailures answers every entry as successful and names in Failed ids
// that were not sent: one past the last entry, a negative one, one that is
// not a number.
type strayFailures struct{}

func (strayFailures) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	out := &sqs.ChangeMessageVisibilityBatchOutput{}
	for _, e := range in.Entries {
		out.Successful = append(out.Successful, types.ChangeMessageVisibilityBatchResultEntry{Id: e.Id})
	}
	for _, id := range []string{strconv.Itoa(len(in.Entries)), "-1", "x"} {
		out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: aws.String(id), Code: aws.String("InternalError"), Message: aws.String("stray")})
	}
	return out, nil
}

// TestChangeVisibilityIgnoresIDsItDidNotSend: a failure named by an id
// outside the chunk is no change's (and never another chunk's).
func TestChangeVisibilityIgnoresIDsItDidNotSend(t *testing.T) {
	t.Parallel()
	changes := make([]sqsbatch.Change, 13)
	for _, err := range sqsbatch.ChangeVisibility(context.Background(), strayFailures{}, queueURL, changes) {
		require.NoError(t, err)
	}
}
