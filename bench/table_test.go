package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestVerdict: a goal of at most is met at the goal and below, one of at
// least at the goal and above.
func TestVerdict(t *testing.T) {
	t.Parallel()
	require.Equal(t, "met", verdict(250, 250, false))
	require.Equal(t, "met", verdict(249, 250, false))
	require.Equal(t, "MISSED", verdict(251, 250, false))
	require.Equal(t, "met", verdict(10, 10, true))
	require.Equal(t, "met", verdict(11, 10, true))
	require.Equal(t, "MISSED", verdict(9, 10, true))
}

// TestRatioAndMilliseconds: a ratio to two places, "–" when the divisor is
// 0; milliseconds to one place from microseconds.
func TestRatioAndMilliseconds(t *testing.T) {
	t.Parallel()
	require.Equal(t, "2.50×", ratio(5, 2))
	require.Equal(t, "–", ratio(5, 0))
	require.Equal(t, "1.2 ms", ms(1234567*time.Nanosecond))
	require.Equal(t, "0.0 ms", ms(999*time.Nanosecond))
}

// TestMedianAndPercentile: the middle of the sorted values (the upper one
// of an even count), a percentile by index p×(n−1) rounded down, 0 of
// none; the input is left unsorted.
func TestMedianAndPercentile(t *testing.T) {
	t.Parallel()
	ds := []time.Duration{5, 1, 4, 2}
	require.Equal(t, time.Duration(4), median(ds))
	require.Equal(t, time.Duration(4), median([]time.Duration{4, 9, 1}))
	require.Equal(t, time.Duration(0), median(nil))
	require.Equal(t, []time.Duration{5, 1, 4, 2}, ds, "not sorted in place")
	require.Equal(t, time.Duration(1), percentile(ds, 0))
	require.Equal(t, time.Duration(4), percentile(ds, 0.9))
	require.Equal(t, time.Duration(5), percentile(ds, 1))
	require.Equal(t, time.Duration(0), percentile(nil, 0.5))
	require.Equal(t, []time.Duration{5, 1, 4, 2}, ds)
	xs := []float64{3, 1, 2, 8}
	require.Equal(t, 3.0, medianF(xs))
	require.Equal(t, 0.0, medianF(nil))
	require.Equal(t, []float64{3, 1, 2, 8}, xs)
}

// TestRanges: "median (min–max)", the one value alone, "–" for none.
func TestRanges(t *testing.T) {
	t.Parallel()
	require.Equal(t, "–", durRange(nil))
	require.Equal(t, "1.5 ms", durRange([]time.Duration{1500 * time.Microsecond}))
	require.Equal(t, "2.0 ms (1.0–3.5)", durRange([]time.Duration{3500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond}))
	require.Equal(t, "–", numRange(nil, "%.0f"))
	require.Equal(t, "7", numRange([]float64{7}, "%.0f"))
	require.Equal(t, "5 (1–9)", numRange([]float64{9, 1, 5}, "%.0f"))
}

// TestLambdaMemoryMB: a quarter of headroom over the peak RSS, in 64 MB
// steps, at least 128 MB.
func TestLambdaMemoryMB(t *testing.T) {
	t.Parallel()
	require.Equal(t, 128.0, lambdaMemoryMB(0))
	require.Equal(t, 128.0, lambdaMemoryMB(100*1024)) // 125 MB
	require.Equal(t, 192.0, lambdaMemoryMB(103*1024)) // 128.75 MB
	require.Equal(t, 192.0, lambdaMemoryMB(157286))   // 191.99 MB
	require.Equal(t, 256.0, lambdaMemoryMB(154*1024)) // 192.5 MB
}

// TestOpPrice: SQS actions per request, DynamoDB writes and reads per
// request unit, KMS per request; an unknown operation is not priced.
func TestOpPrice(t *testing.T) {
	t.Parallel()
	for op, want := range map[string]struct {
		price   float64
		service string
	}{
		"SendMessage": {0.40 / 1e6, "sqs"}, "SendMessageBatch": {0.40 / 1e6, "sqs"}, "ReceiveMessage": {0.40 / 1e6, "sqs"},
		"DeleteMessage": {0.40 / 1e6, "sqs"}, "DeleteMessageBatch": {0.40 / 1e6, "sqs"},
		"ChangeMessageVisibility": {0.40 / 1e6, "sqs"}, "ChangeMessageVisibilityBatch": {0.40 / 1e6, "sqs"},
		"PutItem": {0.625 / 1e6, "dynamodb"}, "UpdateItem": {0.625 / 1e6, "dynamodb"}, "DeleteItem": {0.625 / 1e6, "dynamodb"},
		"GetItem": {0.125 / 1e6, "dynamodb"}, "Query": {0.125 / 1e6, "dynamodb"},
		"Decrypt": {0.03 / 1e4, "kms"}, "Encrypt": {0.03 / 1e4, "kms"}, "GenerateDataKey": {0.03 / 1e4, "kms"},
	} {
		price, service, ok := opPrice(op)
		require.True(t, ok, op)
		require.InEpsilon(t, want.price, price, 1e-9, op)
		require.Equal(t, want.service, service, op)
	}
	_, _, ok := opPrice("GetSecretValue")
	require.False(t, ok)
}
