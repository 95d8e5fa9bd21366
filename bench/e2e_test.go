package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
)

// TestSectionE2EDrainsAndPacesEachQueue: section 4 against the SQS fake
// (long polling, as SQS does) with 10 notifications to drain and paced
// streams of 2: the ceiling twice, herald without and with the store's
// table; every notification sent, delivered and deleted once, the paced
// streams at a tenth of the slower drain, and the table's figures those of
// the results.
func TestSectionE2EDrainsAndPacesEachQueue(t *testing.T) {
	f := setupFakes(t)
	const n, latN = 10, 2
	var out bytes.Buffer
	r := &results{}
	o := opts{e2eN: n, out: &out, small: scale{latN: latN, storeTable: benchTable}}
	t0 := time.Now()
	require.NoError(t, sectionE2E(sectionCtx(t), o, r))
	took := time.Since(t0)

	off, on := r.e2eOff, r.e2eOn
	require.Equal(t, r.e2eRate, off.rate)
	for _, run := range []e2eRun{off, on} {
		// Each drain of n took part of the section's time.
		require.GreaterOrEqual(t, run.rate, float64(n)/took.Seconds())
		require.Equal(t, latN, run.latN)
		require.Positive(t, run.p50)
		require.LessOrEqual(t, run.p50, run.p99)
		require.InDelta(t, min(off.rate, on.rate)/10, run.pace, 1e-9, "both paced at a tenth of the slower drain")
	}

	title, header, rows := rowsOf(t, out.String())
	require.Equal(t, fmt.Sprintf("4. End to end: %d webhooks, LocalStack SQS → local runner (%d pollers, batch 10) → herald → local HTTPS receiver; "+
		"herald without the store's table and with the store on (DynamoDB table %s, LocalStack's moto): drains one after the other, "+
		"then paced streams in turns at the same pace, %.0f/s each", n, pollers, benchTable, on.pace), title)
	require.Len(t, header, 7, "the first column has no header")
	require.Len(t, rows, 4)
	share := off.rate / r.ceilingRate
	require.Equal(t, []string{"herald (no table)", fmt.Sprintf("%.0f", off.rate), ms(off.p50), ms(off.p99), strconv.Itoa(latN),
		fmt.Sprintf("%.0f %%", 100*share), "≥ 80 %", verdict(share, 0.8, true)}, rows[0])
	require.Equal(t, []string{"herald + store", fmt.Sprintf("%.0f", on.rate), ms(on.p50), ms(on.p99), strconv.Itoa(latN),
		fmt.Sprintf("%.0f %%", 100*on.rate/r.ceilingRate)}, rows[1])
	require.Equal(t, []string{"the store adds", fmt.Sprintf("%+.0f", on.rate-off.rate), signedMS(on.p50 - off.p50), signedMS(on.p99 - off.p99)}, rows[2])
	// The ceiling is the mean of its runs before and after herald's.
	var before, after float64
	_, err := fmt.Sscanf(rows[3][0], "queue ceiling (receive + delete, no delivery; mean of %f before, %f after; paced at a tenth of each)", &before, &after)
	require.NoError(t, err, rows[3][0])
	require.InDelta(t, (before+after)/2, r.ceilingRate, 1)
	require.GreaterOrEqual(t, min(before, after), float64(n)/took.Seconds()-1)
	require.Equal(t, fmt.Sprintf("%.0f", r.ceilingRate), rows[3][1])
	require.Equal(t, []string{strconv.Itoa(latN), "100 %"}, rows[3][4:])

	// Four queues (the ceiling twice, herald off and on), each drained of
	// n sent ten at a time and paced latN single sends; the queues and
	// their dead-letter queues deleted. (The pollers' last deletes race
	// their stop, as under LocalStack: not counted.)
	require.Len(t, f.sqs.Requests("CreateQueue"), 4*2)
	for name, attrs := range createdQueues(t, f) {
		if !strings.HasSuffix(name, "-dlq") {
			// As the stack's queue: 13 receives, two minutes' visibility.
			require.Equal(t, "120", attrs["VisibilityTimeout"], name)
			require.Contains(t, attrs["RedrivePolicy"], `"maxReceiveCount":"13"`, name)
		}
	}
	require.Len(t, f.sqs.Requests("DeleteQueue"), 4*2)
	require.Len(t, f.sqs.Requests("SendMessage"), 4*latN)
	require.Equal(t, 4*n, batchEntries(t, f.sqs.Requests("SendMessageBatch")))
	// Only the store-on run's notifications are in the table, each leased
	// before its POST (its delivered write may race the pollers' stop).
	require.Equal(t, n+latN, deliveryItems(t, f, ""))
}

// TestLatSampleIsAShareOfN: a paced stream times a twentieth of the
// drain's notifications, at least 20 and at most 250, unless a test says.
func TestLatSampleIsAShareOfN(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]int{10: 20, 400: 20, 420: 21, 5000: 250, 5020: 250, 4980: 249} {
		require.Equal(t, want, latSample(opts{e2eN: n}), n)
	}
	require.Equal(t, 3, latSample(opts{e2eN: 5000, small: scale{latN: 3}}))
}

// TestIdOfReadsTheNotificationID: the id of a bench body, "" without one.
func TestIdOfReadsTheNotificationID(t *testing.T) {
	t.Parallel()
	require.Equal(t, "herald-abc-lat-3", idOf(webhookBody("herald-abc-lat-3", "https://127.0.0.1:1/ok/x")))
	require.Equal(t, "", idOf(`{"version":1}`))
}

// TestWaitForStopsAtTheFirstReason: done, a refused signature, the limit
// or the context, whichever comes first.
func TestWaitForStopsAtTheFirstReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	calls := 0
	require.NoError(t, waitFor(ctx, func() bool { calls++; return calls == 3 }, time.Minute, nil))
	require.Equal(t, 3, calls)

	rcv := newReceiver(0)
	defer rcv.Close()
	require.NoError(t, waitFor(ctx, func() bool { return true }, time.Minute, rcv))
	rcv.badSig.Add(2)
	require.EqualError(t, waitFor(ctx, func() bool { return false }, time.Minute, rcv), "the receiver refused 2 webhook signature(s)")

	require.EqualError(t, waitFor(ctx, func() bool { return false }, 0, nil), "not done within 0s")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, waitFor(cancelled, func() bool { return false }, time.Minute, nil), context.Canceled)
}

// TestNoteKeepsTheFirstArrival: a notification delivered twice counts
// once, at its first arrival.
func TestNoteKeepsTheFirstArrival(t *testing.T) {
	t.Parallel()
	q := &e2eQueue{arrived: map[string]time.Time{}}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	q.note("a", t0)
	q.note("a", t0.Add(time.Second))
	q.note("b", t0)
	require.Equal(t, int64(2), q.delivered.Load())
	require.Equal(t, t0, q.arrived["a"])
	require.True(t, strings.HasPrefix(q.body("lat")(7), `{"version":1,"id":"-lat-7"`))
}

// TestDrainAndPacedStopAtARefusedSignature: a receiver that refused a
// signature will never see its notifications delivered; the drain and the
// paced stream say so at once, with how far they got.
func TestDrainAndPacedStopAtARefusedSignature(t *testing.T) {
	setupFakes(t)
	ctx := sectionCtx(t)
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	rcv := newReceiver(0)
	defer rcv.Close()
	rcv.keys = [][]byte{[]byte("not the key herald signs with")}
	q, err := newE2E(ctx, sqs.NewFromConfig(awsCfg), "refused", rcv, &awsCfg, nil)
	require.NoError(t, err)
	defer q.close()
	err = q.drain(ctx, 3)
	require.ErrorContains(t, err, "drain: 0 of 3 delivered: the receiver refused ")
	require.ErrorContains(t, paced(ctx, []*e2eQueue{q}, 1000, 1), "refused, paced: the receiver refused ")
	require.Zero(t, q.delivered.Load())
	require.Positive(t, rcv.badSig.Load())
}

// TestE2EAloneIsTheQueuesCeiling: the ceiling alone drains n through
// handlers that only note each record, then paces its sample at a tenth of
// that drain rate.
func TestE2EAloneIsTheQueuesCeiling(t *testing.T) {
	f := setupFakes(t)
	ctx := sectionCtx(t)
	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	run, err := e2eAlone(ctx, opts{e2eN: 10, small: scale{latN: 2}}, sqs.NewFromConfig(awsCfg), "alone")
	require.NoError(t, err)
	require.Positive(t, run.rate)
	require.InDelta(t, run.rate/10, run.pace, 1e-9)
	require.Equal(t, 2, run.latN)
	require.LessOrEqual(t, run.p50, run.p99)
	require.Len(t, f.sqs.Requests("SendMessage"), 2)
	require.Len(t, f.sqs.Requests("DeleteQueue"), 2)
}
