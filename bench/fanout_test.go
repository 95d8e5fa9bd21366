package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/sqsbatch"
	"github.com/heraldhq/herald/internal/store"
)

// TestSectionFanoutPrintsEachRowsFigures: section 2 against a receiver
// answering after 3 ms and the store's table in the fake, its large batch
// 12 records, two turns: a row per run, each row's figures those of its
// turns, the store-on rows' difference turn by turn, and the medians carried
// to the cost estimate. Its work directory does not exist, so that the CPU
// profile a missed goal asks for fails at once: the section's error says
// whether it was asked for.
func TestSectionFanoutPrintsEachRowsFigures(t *testing.T) {
	f := setupFakes(t)
	const delay, large = 3 * time.Millisecond, 12
	var out bytes.Buffer
	r := &results{}
	o := opts{reps: 2, out: &out, workDir: filepath.Join(t.TempDir(), "missing"), small: scale{fanDelay: delay, large: large, storeTable: benchTable}}
	err := sectionFanout(sectionCtx(t), o, r)

	title, header, rows := rowsOf(t, out.String())
	require.True(t, strings.HasPrefix(title, "2. Fan-out: one batch of webhooks, receiver answers after 3ms (median (min–max) of 2, "), title)
	require.Contains(t, title, "(DynamoDB table "+benchTable+",")
	require.Equal(t, []string{"batch", "concurrency", "wall", "wall / 3 ms", "new connections", "vs one at a time", "store adds (turn by turn)", "goal", "verdict"}, header)
	def := fmt.Sprintf("default (%d)", sqsbatch.DefaultConcurrency)
	want := [][]string{
		{"10", def}, {"10", def + ", store on"}, {"10", "1 (one at a time)"}, {"10", "1 (one at a time), store on"},
		{"12", def}, {"12", def + ", store on"}, {"12", def + ", HTTP/2 receiver"}, {"12", "10 (the old default)"}, {"12", "1 (one at a time)"},
	}
	require.Len(t, rows, len(want))
	missed := false
	for i, row := range rows {
		require.Len(t, row, 9, "%v", row)
		require.Equal(t, want[i], row[:2])
		n, _ := strconv.Atoi(row[0])
		conc := 0
		if c, _, ok := strings.Cut(row[1], " ("); ok && !strings.HasPrefix(row[1], "default") {
			conc, _ = strconv.Atoi(c)
		}
		walls := durations(t, row[2])
		// Two turns, but the large batch one at a time once.
		turns := 2
		if n == large && conc == 1 {
			turns = 1
		}
		require.Len(t, walls, map[int]int{1: 1, 2: 3}[turns], "%v", row)
		median, least := walls[0], walls[0]
		if turns == 2 {
			least = walls[1]
		}
		ideal, err := strconv.ParseFloat(row[3], 64)
		require.NoError(t, err)
		// The cells are rounded to 0.1 ms.
		require.InDelta(t, float64(median)/float64(delay), ideal, 0.04, "%v", row)
		// No batch is done before its last wave of records is answered.
		width := conc
		if conc == 0 {
			width = sqsbatch.DefaultConcurrency
		}
		waves := (n + width - 1) / width
		require.GreaterOrEqual(t, least+100*time.Microsecond, delay*time.Duration(waves), "%v", row)
		if conc == 1 {
			require.Equal(t, "–", row[5], "%v", row)
		} else {
			speed, err := strconv.ParseFloat(strings.TrimSuffix(row[5], "× faster"), 64)
			require.NoError(t, err, row[5])
			require.InDelta(t, float64(n)*float64(delay)/float64(median), speed, speed*0.1/(float64(median)/1e6)+0.06, "%v", row)
		}
		// The warm batch opened the connections a batch needs: few, if
		// any, are new (fewer than the ten the first warm batch opened),
		// in the least of the turns. Any one turn on a loaded machine may
		// dial again: net/http closes a connection instead of pooling it
		// when its request's writer has not reported the write done within
		// 50 ms of the response (maxWriteWaitBeforeConnReuse), a goroutine
		// a busy machine did not run in time.
		fewest := -1
		for _, c := range strings.FieldsFunc(row[4], func(r rune) bool { return r == ' ' || r == '(' || r == ')' || r == '–' }) {
			conns, err := strconv.Atoi(c)
			require.NoError(t, err, row[4])
			require.GreaterOrEqual(t, conns, 0, "%v", row)
			if fewest < 0 || conns < fewest {
				fewest = conns
			}
		}
		require.Less(t, fewest, 5, "%v", row)
		if strings.HasSuffix(row[1], "store on") {
			require.Regexp(t, `^[+-]\d+\.\d ms \([+-]\d+\.\d–[+-]\d+\.\d\)$`, row[6])
		} else {
			require.Equal(t, "–", row[6])
		}
		if conc == 0 && !strings.Contains(row[1], "HTTP/2") {
			require.Equal(t, "≤ 1.2", row[7])
			require.Equal(t, verdict(ideal, 1.2, false), row[8], "%v", row)
			missed = missed || (n == large && !strings.HasSuffix(row[1], "store on") && row[8] == "MISSED")
		} else {
			require.Equal(t, []string{"–", "–"}, row[7:], "%v", row)
		}
	}
	if missed {
		require.ErrorContains(t, err, "fanout12.cpu.pprof")
	} else {
		require.NoError(t, err)
	}

	// The medians, as printed to 0.1 ms.
	for i, got := range []time.Duration{r.fan10, r.fan10Store, r.fan10Seq, r.fan10SeqStore, r.fan100, r.fan100Store} {
		require.InDelta(t, float64(durations(t, rows[i][2])[0]), float64(got), float64(100*time.Microsecond), "row %d", i)
	}
	require.Len(t, r.fanAdded10, 2)
	require.Len(t, r.fanAdded100, 2)
	require.Equal(t, addedRange(r.fanAdded10), rows[1][6])
	require.Equal(t, addedRange(r.fanAdded100), rows[5][6])

	// The store-on rows leased and marked delivered every record of theirs:
	// the warm batch and two turns, of 10 at the default concurrency, of
	// 10 one at a time, and of 12.
	require.Equal(t, 3*(10+10+large), deliveryItems(t, f, "delivered"))
}

// durations is the median, min and max of a "12.3 ms (11.0–14.2)" cell, or
// its one value.
func durations(t *testing.T, cell string) []time.Duration {
	t.Helper()
	var out []time.Duration
	for _, f := range strings.FieldsFunc(cell, func(r rune) bool { return r == ' ' || r == '(' || r == ')' || r == '–' }) {
		if f == "ms" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		require.NoError(t, err, cell)
		out = append(out, time.Duration(v*float64(time.Millisecond)))
	}
	return out
}

// deliveryItems is how many delivered-once items in the store's table are
// recorded delivered (state "delivered": confirmed by their batch, or
// delivered items), or any ("").
func deliveryItems(t *testing.T, f fakes, state string) int {
	t.Helper()
	items := f.ddb.Items(benchTable)
	confirmed := confirmedLeases(items)
	n := 0
	for _, it := range items {
		if attrS(it, store.AttrSK) != "delivery" {
			continue
		}
		if state == "" || state == store.StateDelivered && recordedDelivered(it, confirmed) {
			n++
		}
	}
	return n
}
