package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/otlptest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/internal/tracing"
)

// emulatorBin is the aws-lambda-rie binary: HERALD_RIE_BIN, an absolute
// path (scripts/mutate.sh sets it: gremlins may run the tests in a copy of
// the module), or the repository's .tools/bin, where a test that finds none
// has scripts/install-rie.sh put the pinned version (from the Go module
// proxy, like herald's own modules), so that plain `go test ./...` on a
// fresh clone needs no step of its own. A failed install fails the test
// with the script's output and the command to run.
func emulatorBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("HERALD_RIE_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("HERALD_RIE_BIN: the Lambda Runtime Interface Emulator is not at %s: %v", bin, err)
		}
		return bin
	}
	bin, err := installRIE()
	if err != nil {
		t.Fatalf("the Lambda Runtime Interface Emulator is not installed and could not be: %v; run scripts/install-rie.sh (make test-unit runs it)", err)
	}
	return bin
}

// installRIE returns the repository's .tools/bin/aws-lambda-rie, running
// scripts/install-rie.sh first, once per test binary, when it is missing.
var installRIE = sync.OnceValues(func() (string, error) {
	bin, err := filepath.Abs(filepath.Join("..", ".tools", "bin", "aws-lambda-rie"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	out, err := exec.Command(filepath.Join("..", "scripts", "install-rie.sh")).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("scripts/install-rie.sh: %w: %s", err, bytes.TrimSpace(out))
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("scripts/install-rie.sh left no binary: %w", err)
	}
	return bin, nil
})

const (
	rieAccount = "123456789012"
	rieTable   = "herald-bench"
	// rieDelay is the slow receiver's: a few ms, so that a batch of 100
	// stays short while each request is still in flight for a while.
	rieDelay = 5 * time.Millisecond
)

// rieBundle is a unit test's sections 5 and 6: the real emulator and
// bootstraps (this machine's architecture), SQS and DynamoDB wire fakes
// and both receivers on 127.0.0.1, and what the section printed.
type rieBundle struct {
	setup       rieSetup
	o           opts
	out         *bytes.Buffer
	slow, quick *receiver
	sqs         *sqstest.Server
	ddb         *dynamotest.Server
	otlp        *otlptest.Server // the traces receiver, once the rounds start it
	closed      bool             // the setup's AWS side was cleaned up
}

// setupRIE runs, of make bench's peers, those edit returns (nil: herald
// with the store off and on, the Go floor and the empty function).
func setupRIE(t *testing.T, edit func(all []peer) []peer) *rieBundle {
	t.Helper()
	b := &rieBundle{out: &bytes.Buffer{}, sqs: sqstest.New(t), ddb: dynamotest.New(t),
		o: opts{quick: true, reps: 1, workDir: t.TempDir()}}
	bins := bootstrapDir()
	require.NoError(t, os.MkdirAll(bins, 0o755))
	if edit == nil {
		edit = keep("herald", "herald-store", "floor", "noop")
	}
	b.setup = rieSetup{out: b.out, root: "..", bins: bins, emulator: emulatorBin(t), archs: []string{runtime.GOARCH},
		receivers: func() (*receiver, *receiver) {
			b.slow, b.quick = newReceiver(rieDelay), newReceiver(0)
			return b.slow, b.quick
		},
		aws:   b.fakeAWS,
		peers: edit,
		traces: func() *otlptest.Server {
			b.otlp = otlptest.New(t)
			return b.otlp
		},
	}
	return b
}

// fakeAWS makes the queue pair as the stack would (the deliver function
// checks it at start-up) and the store's table, and points the functions'
// SDK at the fakes, with nothing else reachable.
func (b *rieBundle) fakeAWS(context.Context) (rieAWS, error) {
	base := "https://sqs.us-east-1.amazonaws.com/" + rieAccount + "/bench-rie"
	b.sqs.AddQueue(base+"-dlq", map[string]string{"MessageRetentionPeriod": "1209600"})
	b.sqs.AddQueue(base, map[string]string{"MessageRetentionPeriod": "345600", "VisibilityTimeout": "720",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:` + rieAccount + `:bench-rie-dlq","maxReceiveCount":13}`})
	b.ddb.AddTable(rieTable, store.AttrPK, store.AttrSK)
	return rieAWS{cfg: awstest.Config(awstest.Unreachable), queues: localenv.Queues{URL: base, DLQURL: base + "-dlq"}, storeTable: rieTable,
		env: []string{"AWS_ENDPOINT_URL=" + awstest.Unreachable, "AWS_ENDPOINT_URL_SQS=" + b.sqs.URL(), "AWS_ENDPOINT_URL_DYNAMODB=" + b.ddb.URL(),
			"AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=test-secret", "AWS_SESSION_TOKEN=", "AWS_PROFILE=",
			"AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull, "AWS_EC2_METADATA_DISABLED=true", "AWS_MAX_ATTEMPTS=1"},
		close: func() { b.closed = true }}, nil
}

// keep keeps the peers named, in make bench's order.
func keep(names ...string) func([]peer) []peer {
	return func(all []peer) []peer {
		return slices.DeleteFunc(all, func(p peer) bool { return !slices.Contains(names, p.name) })
	}
}

// bootstraps are the ones setupRIE's builds, built once for every test:
// a build, even one go build finds up to date, is the dearest part of a
// run.
var bootstraps = sync.OnceValues(func() (rieBootstraps, error) {
	return rieSetup{root: "..", bins: bootstrapDir(), archs: []string{runtime.GOARCH}}.build(context.Background())
})

// bootstrapDir keeps the bootstraps between runs, so that go build finds
// them up to date instead of linking them again.
func bootstrapDir() string { return filepath.Join(os.TempDir(), "herald-bench-bootstraps") }

// rounds runs the rounds with the bootstraps built once.
func (b *rieBundle) rounds(t *testing.T, r *results) error {
	t.Helper()
	bs, err := bootstraps()
	require.NoError(t, err)
	return b.setup.rounds(context.Background(), b.o, r, bs, loadAvg())
}

// printedTable is the rows of the table titled title… in out, by their
// first cell (trimmed), each the cells after it, and the header's cells
// by "".
func printedTable(t *testing.T, out, title string) map[string][]string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "== "+title)
	require.True(t, ok, "no table %q in:\n%s", title, out)
	rows := map[string][]string{}
	// The notes after a table are indented by three spaces, its rows by
	// at most two; the header (its first line) may begin with spaces.
	for i, l := range strings.Split(rest, "\n")[1:] {
		if l == "" || strings.HasPrefix(l, "== ") || (i > 0 && strings.HasPrefix(l, "   ")) {
			break
		}
		cells := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1)
		if i == 0 {
			rows[""] = cells
			continue
		}
		rows[cells[0]] = cells[1:]
	}
	return rows
}

// cellMS is a printed "12.3 ms" as a duration.
func cellMS(t *testing.T, cell string) time.Duration {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSuffix(cell, " ms"), 64)
	require.NoError(t, err, cell)
	return time.Duration(v * float64(time.Millisecond))
}

func cellFloat(t *testing.T, cell string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(cell, 64)
	require.NoError(t, err, cell)
	return v
}

// TestSectionRIERunsThePeersUnderTheEmulator runs herald with the store
// off and on, the Go floor standing in for a TypeScript peer and the
// empty function twice (once counted as a peer that posts, standing in
// for a Python peer) in one round, and checks every figure against what
// the receivers counted and the samples the results keep.
func TestSectionRIERunsThePeersUnderTheEmulator(t *testing.T) {
	t.Parallel()
	b := setupRIE(t, func(all []peer) []peer {
		ps := keep("herald", "herald-store", "floor", "noop")(all)
		floor, noop := ps[2], ps[3]
		floor.label, floor.ts = "TS stand-in: Go floor", true
		// The empty function counted as posting: it reports no failure of
		// the batch with three 503s and makes no POST, so its row is WRONG.
		posting := noop
		posting.name, posting.label, posting.posts = "noop-posting", "Py stand-in: empty function", true
		// Like the sequential Python peer, its batch of 100 only in a full
		// run's first round.
		posting.slowOnce = true
		return []peer{ps[0], ps[1], floor, noop, posting}
	})
	r := &results{costRows: []costInput{{label: "left from before"}}, parseGoals: [][]string{{"Parse ≤ plain decode", "1 µs", "2 µs", "0.50", "met"}}}
	t0 := time.Now()
	require.NoError(t, b.rounds(t, r))
	wall := time.Since(t0)
	out := b.out.String()
	t.Log(out)
	require.True(t, b.closed, "the queues are deleted")

	h, s := r.rieHerald, r.rieStore
	for _, x := range []peerSamples{h, s} {
		require.Len(t, x.cold, 1, "one round")
		require.Len(t, x.init, 1)
		require.Len(t, x.b10, 1)
		require.Len(t, x.b100, 1)
		require.Len(t, x.conns100, 1)
		require.Len(t, x.cpuUS, 1)
		require.Len(t, x.rssKB, 1)
		require.Len(t, x.logBytes, 1)
		// The emulator's Init Duration is part of the cold start.
		require.Positive(t, x.init[0])
		require.Less(t, x.init[0], x.cold[0])
		// Each batch to the slow receiver waits for it at least once.
		require.GreaterOrEqual(t, x.b10[0], rieDelay)
		require.GreaterOrEqual(t, x.b100[0], rieDelay)
		require.Equal(t, "3 of 10 reported, 10 POSTs", x.failures)
		// /proc counts CPU in 10 ms ticks over cpuRecords' 100 records, and
		// a process cannot have used more than every core for the whole run.
		require.Zero(t, math.Mod(x.cpuUS[0], float64(10*time.Millisecond/time.Microsecond)/100), "%v µs", x.cpuUS[0])
		require.LessOrEqual(t, x.cpuUS[0]*100, float64(wall.Microseconds())*float64(runtime.NumCPU()))
		// A batch line of some 400 bytes and some 40 per notification it
		// lists (the clean path has no line of its own).
		require.Greater(t, x.logBytes[0], 30.0)
		require.Less(t, x.logBytes[0], 250.0)
		require.Positive(t, len(x.series), "herald's EMF metrics")
		// A warm environment's clean batches: Notifications and
		// DeliveryDuration by channel and outcome; the cold start's first
		// batch adds Paused 0.
		require.Len(t, x.warmSeries, 2, "%v", x.warmSeries)
		require.Greater(t, len(x.series), len(x.warmSeries))
		// VmHWM of a Go process: megabytes, less than the 128 MB set.
		require.Greater(t, x.rssKB[0], 1024.0)
		require.Less(t, x.rssKB[0], 128*1024.0)
	}
	// The store's own metrics (StoreErrors, DestinationsDisabled) are
	// written only when not 0: its clean path defines herald's.
	require.Equal(t, h.series, s.series, "the store adds no metric to the clean path")

	// What the receivers saw: per peer that posts, batches of 10, 10, 100,
	// 100 and the 10 with three 503s to the slow one; the cold start's 1,
	// 10 to warm up and cpuRecords' 100 to the quick one, and 1 more for
	// herald's cold start without the queue check.
	require.EqualValues(t, 3*230, b.slow.count.Load())
	require.EqualValues(t, 1+3*111, b.quick.count.Load())
	require.Zero(t, b.slow.badSig.Load()+b.quick.badSig.Load())
	// Each notification's id (its webhook-id) begins with its function's
	// name, herald's with the store with ids new to the table, as long as
	// herald's.
	storeIDs := "h" + runTag(len("herald")-1)
	slowIDs, quickIDs := map[string]bool{}, map[string]bool{"herald-cold0-0": true}
	for _, prefix := range []string{"herald", storeIDs, "floor"} {
		quickIDs[prefix+"-cold0-0"] = true
		for batch, n := range map[string]int{"warm10": 10, "b10": 10, "warm100": 100, "b100": 100, "part": 10, "warmq": 10} {
			for i := range n {
				ids := slowIDs
				if batch == "warmq" {
					ids = quickIDs
				}
				ids[fmt.Sprintf("%s-r0-%s-%d", prefix, batch, i)] = true
			}
		}
		for b := range 10 {
			for i := range 10 {
				quickIDs[fmt.Sprintf("%s-r0-cpu%d-%d", prefix, b, i)] = true
			}
		}
	}
	arrived := func(r *receiver) map[string]bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		ids := map[string]bool{}
		for id := range r.arrived {
			ids[id] = true
		}
		return ids
	}
	require.Equal(t, slowIDs, arrived(b.slow))
	require.Equal(t, quickIDs, arrived(b.quick))

	// Section 5.
	s5 := printedTable(t, out, "5. Cold start and footprint")
	require.Equal(t, []string{"herald", "goal", "verdict"}, s5[""])
	bin := filepath.Join(b.setup.bins, "deliver-"+runtime.GOARCH)
	st, err := os.Stat(bin)
	require.NoError(t, err)
	size := float64(st.Size()) / 1e6
	wantVerdict := map[bool]string{true: "met", false: "MISSED"}
	require.Equal(t, []string{fmt.Sprintf("%.1f MB", size), "≤ 15 MB", wantVerdict[size <= 15]}, s5["bootstrap size linux/"+runtime.GOARCH+" (stripped, -trimpath)"])
	require.Equal(t, []string{ms(h.cold[0]), "≤ 100 ms", wantVerdict[h.cold[0] <= 100*time.Millisecond]}, s5["cold start: process start → first invocation answered (median)"])
	require.Equal(t, []string{ms(h.init[0])}, s5["of which the emulator's Init Duration"])
	require.Equal(t, []string{fmt.Sprintf("%.1f MB", h.rssKB[0]/1024), "≤ 64 MB", wantVerdict[h.rssKB[0] <= 64*1024]}, s5["peak RSS (VmHWM) after batches of 10 and 100 webhooks"])
	for _, name := range []string{"floor: an empty Go function, same emulator (cold start / Init Duration)", "herald with HERALD_CHECK_QUEUES=false (cold start / Init Duration)"} {
		require.Len(t, s5[name], 1, name)
		cold, init, ok := strings.Cut(s5[name][0], " / ")
		require.True(t, ok, s5[name])
		require.Positive(t, cellMS(t, init), name)
		require.Less(t, cellMS(t, init), cellMS(t, cold), name)
	}

	// Section 6.
	require.Regexp(t, `== 6\. Peers: same emulator \(128 MB set\), same TLS receivers \(HTTP/1\.1; 5 ms and at once\), 1 interleaved round\(s\); median \(min–max\); load average \d+\.\d+/\d+\.\d+/\d+\.\d+ at start, \d+\.\d+/\d+\.\d+/\d+\.\d+ at end\n`, out)
	s6 := printedTable(t, out, "6. Peers")
	require.Equal(t, []string{"herald", "herald + store", "TS stand-in: Go floor", "empty Go function", "Py stand-in: empty function"}, s6[""])
	const herald, withStore, floor, noop, posting = 0, 1, 2, 3, 4
	row := func(name string) []string {
		t.Helper()
		require.Len(t, s6[name], 5, name)
		return s6[name]
	}
	b10 := row("batch of 10 webhooks, wall (5 ms receiver)")
	require.Equal(t, []string{ms(h.b10[0]), ms(s.b10[0])}, b10[:2])
	require.Equal(t, "–", b10[noop], "the empty function posts nothing")
	b100 := row("batch of 100 webhooks, wall (5 ms receiver, warm)")
	require.Equal(t, []string{ms(h.b100[0]), ms(s.b100[0])}, b100[:2])
	require.GreaterOrEqual(t, cellMS(t, b10[floor]), rieDelay)
	require.GreaterOrEqual(t, cellMS(t, b100[floor]), rieDelay)
	require.Equal(t, "–", b100[noop])
	require.Equal(t, "–", b100[posting], "a quick run has no batch of 100 for a peer that has it once")
	conns := row("new TLS connections during that batch")
	require.Equal(t, []string{fmt.Sprint(h.conns100[0]), fmt.Sprint(s.conns100[0])}, conns[:2])
	require.Equal(t, "–", conns[posting])
	// The new connections of the batches of 100 are among all the slow
	// receiver got.
	var sum float64
	for _, c := range []int{herald, withStore, floor} {
		sum += cellFloat(t, conns[c])
	}
	require.LessOrEqual(t, sum, float64(b.slow.conns.Load()))
	cpu := row("CPU per record (utime+stime), µs")
	require.Equal(t, []string{fmt.Sprintf("%.0f", h.cpuUS[0]), fmt.Sprintf("%.0f", s.cpuUS[0])}, cpu[:2])
	logs := row("log bytes per record written by the function (those batches)")
	require.Equal(t, []string{fmt.Sprintf("%.0f", h.logBytes[0]), fmt.Sprintf("%.0f", s.logBytes[0]), "0", "0", "0"}, logs, "the floor and the empty function write nothing")
	require.Equal(t, []string{fmt.Sprint(len(h.series)), fmt.Sprint(len(s.series)), "0", "0", "0"}, row("custom metrics its EMF defines on the clean path (metric × dimension values)"))
	// A batch of 10 at 128 MB: ten records' CPU at 128/1769 of a vCPU.
	arith := row("arithmetic, not measured: CPU of a batch of 10 at 128 MB (0.072 vCPU), ms")
	for i, c := range []int{herald, withStore, floor} {
		us := []float64{h.cpuUS[0], s.cpuUS[0], cellFloat(t, cpu[floor])}[i]
		require.Equal(t, fmt.Sprintf("%.0f", us*10/1000/(128.0/1769)), arith[c])
	}
	require.Equal(t, "–", arith[noop])
	colds := row("cold start: process start → first answer")
	require.Equal(t, []string{ms(h.cold[0]), ms(s.cold[0])}, colds[:2])
	inits := row("emulator Init Duration")
	require.Equal(t, []string{ms(h.init[0]), ms(s.init[0])}, inits[:2])
	for _, c := range []int{floor, noop, posting} {
		require.Positive(t, cellMS(t, inits[c]))
		require.Less(t, cellMS(t, inits[c]), cellMS(t, colds[c]))
	}
	rss := row("peak RSS (VmHWM) after the batches")
	require.Equal(t, []string{fmt.Sprintf("%.1f MB", h.rssKB[0]/1024), fmt.Sprintf("%.1f MB", s.rssKB[0]/1024)}, rss[:2])
	require.Equal(t, []string{"3 of 10 reported, 10 POSTs", "3 of 10 reported, 10 POSTs", "3 of 10 reported, 10 POSTs", "–", "WRONG: 0 of 10 reported, 0 POSTs"},
		row("batch of 10 with 3 answered 503: partial failures"))
	require.Contains(t, out, "\n   CPU per record: 100 records per round in batches of 10 to the receiver answering at once, /proc/<pid>/stat utime+stime of the runtime process (10 ms ticks)\n")
	require.Contains(t, out, "\n   herald + store: the store on (DynamoDB table herald-bench, LocalStack's moto on these cores), right after herald in every round; it adds, round by round: "+
		fmt.Sprintf("batch of 10 %s, batch of 100 %s, CPU per record %+.0f µs, log bytes per record %+.0f\n",
			signedMS(s.b10[0]-h.b10[0]), signedMS(s.b100[0]-h.b100[0]), s.cpuUS[0]-h.cpuUS[0], s.logBytes[0]-h.logBytes[0]))

	// The cost rows: herald with the store off and on, and the stand-ins
	// for the Powertools peers, with their medians.
	require.Len(t, r.costRows, 4)
	require.Equal(t, costInput{label: "herald", batch10: h.b10[0], rssKB: int64(h.rssKB[0]), cpuUS: h.cpuUS[0],
		logBytes: h.logBytes[0], series: len(h.series), warmSeries: len(h.warmSeries), herald: true, store: noTable}, r.costRows[0])
	require.Equal(t, costInput{label: "herald + store", batch10: s.b10[0], rssKB: int64(s.rssKB[0]), cpuUS: s.cpuUS[0],
		logBytes: s.logBytes[0], series: len(s.series), warmSeries: len(s.warmSeries), herald: true, store: storeOn}, r.costRows[1])
	for i, c := range map[int]int{2: floor, 3: posting} {
		got := r.costRows[i]
		// Known from the printed table to its precision only.
		require.Equal(t, b10[c], ms(got.batch10), "cost row %d", i)
		mb := cellFloat(t, strings.TrimSuffix(rss[c], " MB"))
		require.InDelta(t, mb*1024, float64(got.rssKB), 0.05*1024+1, "cost row %d", i)
		require.Equal(t, costInput{label: s6[""][c], batch10: got.batch10, rssKB: got.rssKB, cpuUS: cellFloat(t, cpu[c]), store: noTable}, got, "cost row %d", i)
	}

	// The goals, with the Go floor as the strongest TypeScript peer.
	goals := printedTable(t, out, "Goals of issue 22")
	require.Equal(t, []string{"goal", "herald", "reference", "ratio", "verdict"}, goals[""])
	require.Equal(t, []string{fmt.Sprintf("%.0f B", h.logBytes[0]), "250 B", wantVerdict[h.logBytes[0] <= 250]}, goals["2. log bytes per delivered notification ≤ 250 (INFO, batches of 10)"])
	fcpu := cellFloat(t, cpu[floor])
	require.Equal(t, []string{fmt.Sprintf("%.0f µs", h.cpuUS[0]), fmt.Sprintf("%.0f µs", fcpu), ratio(h.cpuUS[0], fcpu), wantVerdict[h.cpuUS[0]/fcpu <= 1]},
		goals["3. CPU per record ≤ strongest TS peer (TS stand-in: Go floor)"])
	require.Equal(t, []string{fmt.Sprintf("%.0f µs", h.cpuUS[0]), fmt.Sprintf("%.0f µs", fcpu), ratio(h.cpuUS[0], fcpu), wantVerdict[h.cpuUS[0]/fcpu <= 1.1]},
		goals["3. CPU per record ≤ 1.1 × Go floor"])
	x := float64(h.b100[0]) / float64(rieDelay)
	require.Equal(t, []string{ms(h.b100[0]), "5 ms", fmt.Sprintf("%.2f", x), wantVerdict[x <= 1.1]}, goals["4. batch of 100, receiver at 5 ms: wall ≤ 1.1 × the slowest delivery (5 ms)"])
	require.Equal(t, []string{fmt.Sprint(h.conns100[0]), "0", wantVerdict[h.conns100[0] == 0]}, goals["4. warm batch of 100: no new connection"])
	fcold := cellMS(t, colds[floor])
	require.Equal(t, ms(h.cold[0]), goals["4. cold start ≤ 0.5 × TS peer (TS stand-in: Go floor)"][0])
	require.Equal(t, colds[floor], goals["4. cold start ≤ 0.5 × TS peer (TS stand-in: Go floor)"][1])
	require.Equal(t, wantVerdict[float64(h.cold[0])/float64(fcold) <= 0.5], goals["4. cold start ≤ 0.5 × TS peer (TS stand-in: Go floor)"][3])
	require.Equal(t, []string{fmt.Sprintf("%.1f MB", h.rssKB[0]/1024), rss[floor]}, goals["4. peak RSS ≤ 0.5 × TS peer (TS stand-in: Go floor)"][:2])
	require.Equal(t, []string{"1 µs", "2 µs", "0.50", "met"}, goals["(issue 12) Parse ≤ plain decode"], "section 1's goals, repeated")
}

// TestSectionRIEFailsClearly: what keeps the rounds from running is an
// error naming it, before any table, and the queues made are deleted.
func TestSectionRIEFailsClearly(t *testing.T) {
	t.Parallel()
	other := map[string]string{"amd64": "arm64"}[runtime.GOARCH]
	if other == "" {
		other = "amd64"
	}
	wrongKey := "whsec_" + strings.Repeat("A", 43) + "="
	for _, tc := range []struct {
		name string
		edit func(*rieBundle)
		want string
		// built: the error comes after the builds, so the test runs the
		// rounds with the bootstraps built once.
		built bool
	}{{
		name: "no bootstrap for this machine",
		edit: func(b *rieBundle) { b.setup.archs = []string{other} },
		want: "no bootstrap for this machine's " + runtime.GOARCH,
	}, {
		name: "a build that fails",
		edit: func(b *rieBundle) { b.setup.root = b.o.workDir },
		want: "build " + runtime.GOARCH + ": exit status 1\n",
	}, {
		name:  "no emulator",
		edit:  func(b *rieBundle) { b.setup.emulator = filepath.Join(b.o.workDir, "aws-lambda-rie") },
		built: true,
		want:  "start " + "%s/aws-lambda-rie: fork/exec %[1]s/aws-lambda-rie: no such file or directory (scripts/install-rie.sh installs the emulator)",
	}, {
		name: "a bootstrap that does not start",
		edit: func(b *rieBundle) {
			script := filepath.Join(b.o.workDir, "bootstrap")
			require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho 'floor: PEER_WEBHOOK_SECRET is not set' >&2\nexit 3\n"), 0o755))
			b.setup.peers = func(all []peer) []peer {
				ps := keep("floor", "noop")(all)
				ps[0].bootstrap = []string{script}
				return ps
			}
		},
		built: true,
		// The emulator answers 502 when the runtime exits, or closes the
		// connection (EOF) when the exit races the invoke; the function's
		// log tail follows, though its last lines may not be in it yet.
		want: "floor, round 1: floor cold start: invoke: ",
	}, {
		name: "a clean batch with failures",
		edit: func(b *rieBundle) {
			b.setup.peers = func(all []peer) []peer {
				ps := keep("floor", "noop")(all)
				ps[0].env = append(slices.Clone(ps[0].env), "PEER_WEBHOOK_SECRET="+wrongKey)
				return ps
			}
		},
		built: true,
		// The receiver answers 401 to each: the first batch of 10 to it.
		want: "floor, round 1: 10 failures in a clean batch of 10",
	}, {
		name: "traces that do not arrive",
		edit: func(b *rieBundle) {
			b.setup.peers = func(all []peer) []peer {
				ps := keep("herald-trace1", "floor", "noop")(all)
				// The function traces nothing, its peer says every invocation.
				ps[0].env = append(slices.Clone(ps[0].env), "HERALD_TRACING_SAMPLE_RATIO=0")
				return ps
			}
		},
		built: true,
		// The cold start, warm10, b10, warm100, b100, warmq, ten cpu and part.
		want: "herald, tracing on (ratio 1): 17 invocations, 0 invocation spans at the OTLP receiver",
	}, {
		name: "webhooks that do not verify",
		edit: func(b *rieBundle) {
			b.setup.peers = func(all []peer) []peer {
				ps := keep("floor", "noop")(all)
				ps[0].env = append(slices.Clone(ps[0].env), "PEER_WEBHOOK_SECRET="+wrongKey)
				// Its failures are not counted as a peer's that posts.
				ps[0].posts = false
				return ps
			}
		},
		// The cold start's one, the warm-up's 10 and cpuRecords' 100.
		built: true,
		want:  "111 requests with a signature that does not verify",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupRIE(t, nil)
			tc.edit(b)
			var err error
			if tc.built {
				err = b.rounds(t, &results{})
			} else {
				err = runRIE(context.Background(), b.o, &results{}, b.setup)
			}
			require.Error(t, err)
			t.Log(err)
			want := tc.want
			if strings.Contains(want, "%") {
				want = fmt.Sprintf(want, b.o.workDir)
			}
			require.Contains(t, err.Error(), want)
			require.Empty(t, b.out.String(), "no table")
		})
	}
}

// TestCPUGoalsMet: goal 3 holds when herald's CPU per record is at most
// the strongest TypeScript peer's and at most 1.1 × the Go floor's; a
// full run profiles herald when it does not.
func TestCPUGoalsMet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		herald, ts, floor float64
		want              bool
	}{
		{100, 100, 100, true},
		{110, 200, 100, true},
		{111, 200, 100, false},
		{101, 100, 1000, false},
		{99, 100, 90, true},
		{100, math.Inf(1), 100, true}, // no TypeScript peer
		{0, 0, 0, true},               // less than a tick each
	} {
		require.Equal(t, tc.want, cpuGoalsMet(tc.herald, tc.ts, tc.floor), "%+v", tc)
	}
}

// TestProcCPUReadsTheProcessTicks: /proc/<pid>/stat's utime+stime of this
// process, once it has spent a while in both, is what getrusage says to
// within the ticks' truncation; a process that is not there is an error.
func TestProcCPUReadsTheProcessTicks(t *testing.T) {
	t.Parallel()
	var ru syscall.Rusage
	cpu := func() (user, sys time.Duration) {
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
	}
	// Each getrusage is a system call: system time; the loop, user time.
	for u, s := cpu(); u < 30*time.Millisecond || s < 40*time.Millisecond; u, s = cpu() {
		for i := 0; i < 1000; i++ {
			_ = i * i
		}
	}
	u0, s0 := cpu()
	got, err := procCPU(os.Getpid())
	require.NoError(t, err)
	u1, s1 := cpu()
	require.GreaterOrEqual(t, got, u0+s0-20*time.Millisecond, "at most a tick of each truncated")
	require.LessOrEqual(t, got, u1+s1+10*time.Millisecond)

	_, err = procCPU(1 << 30)
	require.ErrorContains(t, err, fmt.Sprintf("/proc/%d/stat", 1<<30))
}

// TestPerRecordUS: the CPU between two readings over the records, in µs.
func TestPerRecordUS(t *testing.T) {
	t.Parallel()
	require.Equal(t, 500.0, perRecordUS(30*time.Millisecond, 80*time.Millisecond, 100))
	require.Equal(t, 5.0, perRecordUS(0, 10*time.Millisecond, 2000))
}

// TestSettleWaitsForTheOutputToStopGrowing: settle reads until two reads
// in a row are as long, and gives up after 20 pauses.
func TestSettleWaitsForTheOutputToStopGrowing(t *testing.T) {
	t.Parallel()
	reads := 0
	growing := func(until int) func() string {
		reads = 0
		return func() string {
			reads++
			return strings.Repeat("x", min(reads, until))
		}
	}
	require.Equal(t, "xxx", settle(growing(3), 0))
	require.Equal(t, 4, reads, "the third read's length again")
	require.Equal(t, "x", settle(growing(1), 0))
	require.Equal(t, 2, reads)
	require.Equal(t, strings.Repeat("x", 21), settle(growing(100), 0), "the first read and 20 more")
	require.Equal(t, 21, reads)
}

// TestStatCPUAddsUserAndSystemTicks: utime and stime are the 12th and 13th
// fields after the command name, whose parentheses may nest.
func TestStatCPUAddsUserAndSystemTicks(t *testing.T) {
	t.Parallel()
	after := " S 1 2 3 4 5 6 7 8 9 10 250 17"
	for _, tc := range []struct {
		line string
		want time.Duration
		ok   bool
	}{
		{"42 (deliver)" + after + " 20 0 0 0 1", 2670 * time.Millisecond, true},
		{"42 (a) b)" + after, 2670 * time.Millisecond, true}, // exactly 13 fields
		{")" + after, 2670 * time.Millisecond, true},
		{"42 (deliver)" + after[:len(after)-3], 0, false}, // 12
		{"42 deliver" + after, 0, false},
	} {
		got, ok := statCPU([]byte(tc.line))
		require.Equal(t, tc.ok, ok, tc.line)
		require.Equal(t, tc.want, got, tc.line)
	}
}

// TestLoadAvgOfTakesTheThreeAverages: /proc/loadavg's first three fields;
// fewer is "?".
func TestLoadAvgOfTakesTheThreeAverages(t *testing.T) {
	t.Parallel()
	require.Equal(t, "1.20/0.95/0.80", loadAvgOf("1.20 0.95 0.80 2/345 6789\n"))
	require.Equal(t, "1.20/0.95/0.80", loadAvgOf("1.20 0.95 0.80"))
	require.Equal(t, "?", loadAvgOf("1.20 0.95"))
	require.Regexp(t, `^\d+\.\d+/\d+\.\d+/\d+\.\d+$`, loadAvg())
}

// TestRIEGoals: each goal's figures, ratio and verdict from known samples;
// the strongest TypeScript peer is the least of each figure, the first of
// equals.
func TestRIEGoals(t *testing.T) {
	t.Parallel()
	msec := time.Millisecond
	h := peerSamples{cold: []time.Duration{40 * msec}, b100: []time.Duration{105 * msec}, conns100: []float64{0},
		cpuUS: []float64{100}, rssKB: []float64{20 * 1024}, logBytes: []float64{200}}
	ts1 := peerSamples{cold: []time.Duration{100 * msec}, cpuUS: []float64{150}, rssKB: []float64{50 * 1024}}
	ts2 := peerSamples{cold: []time.Duration{90 * msec}, cpuUS: []float64{150}, rssKB: []float64{60 * 1024}}
	floor := peerSamples{cold: []time.Duration{5 * msec}, cpuUS: []float64{100}, rssKB: []float64{10 * 1024}}
	peers := []peer{{label: "herald"}, {label: "TS one", ts: true}, {label: "TS two", ts: true}, {label: "Go floor"}}
	got := []peerSamples{h, ts1, ts2, floor}
	require.Equal(t, [][]string{
		{"2. log bytes per delivered notification ≤ 250 (INFO, batches of 10)", "200 B", "250 B", "", "met"},
		{"3. CPU per record ≤ strongest TS peer (TS one)", "100 µs", "150 µs", "0.67×", "met"},
		{"3. CPU per record ≤ 1.1 × Go floor", "100 µs", "100 µs", "1.00×", "met"},
		{"4. batch of 100, receiver at 100 ms: wall ≤ 1.1 × the slowest delivery (100 ms)", "105.0 ms", "100 ms", "1.05", "met"},
		{"4. warm batch of 100: no new connection", "0", "0", "", "met"},
		{"4. cold start ≤ 0.5 × TS peer (TS two)", "40.0 ms", "90.0 ms", "0.44×", "met"},
		{"4. peak RSS ≤ 0.5 × TS peer (TS one)", "20.0 MB", "50.0 MB", "0.40×", "met"},
	}, rieGoals(h, floor, peers, got, 100*msec))

	// Over each goal, and no TypeScript peer.
	h = peerSamples{cold: []time.Duration{60 * msec}, b100: []time.Duration{111 * msec}, conns100: []float64{3},
		cpuUS: []float64{111}, rssKB: []float64{30 * 1024}, logBytes: []float64{251}}
	require.Equal(t, [][]string{
		{"2. log bytes per delivered notification ≤ 250 (INFO, batches of 10)", "251 B", "250 B", "", "MISSED"},
		{"3. CPU per record ≤ strongest TS peer ()", "111 µs", "+Inf µs", "0.00×", "met"},
		{"3. CPU per record ≤ 1.1 × Go floor", "111 µs", "100 µs", "1.11×", "MISSED"},
		{"4. batch of 100, receiver at 100 ms: wall ≤ 1.1 × the slowest delivery (100 ms)", "111.0 ms", "100 ms", "1.11", "MISSED"},
		{"4. warm batch of 100: no new connection", "3", "0", "", "MISSED"},
		{"4. cold start ≤ 0.5 × TS peer ()", "60.0 ms", ms(time.Duration(math.Inf(1))), "0.00×", "met"},
		{"4. peak RSS ≤ 0.5 × TS peer ()", "30.0 MB", "+Inf MB", "0.00×", "met"},
	}, rieGoals(h, floor, peers[:1], got[:1], 100*msec))
}

// TestSectionRIETracesToTheOTLPReceiver runs herald with tracing off and
// on (HERALD_TRACING=otlp at the default ratio and at 1) beside the Go
// floor and the empty function, in one round: at ratio 1 every invocation
// and every record arrives at the receiver as a span, at the default
// ratio at most that, tracing off sends nothing; sections 5 and 6 and the
// cost rows carry the traced functions' figures.
func TestSectionRIETracesToTheOTLPReceiver(t *testing.T) {
	t.Parallel()
	b := setupRIE(t, keep("herald", "herald-trace", "herald-trace1", "floor", "noop"))
	r := &results{}
	require.NoError(t, b.rounds(t, r))
	out := b.out.String()
	t.Log(out)

	// Per function: the cold start's 1 record, warm10, b10, warm100, b100,
	// warmq, ten batches of 10 for the CPU and the 10 with three 503s.
	const invocations, records = 17, 1 + 10 + 10 + 100 + 100 + 10 + 100 + 10
	got := tracesBy(b.otlp)
	one := got["herald-trace1"]
	require.Equal(t, invocations, one.invocations)
	require.Equal(t, records, one.records)
	require.Positive(t, one.bytes)
	require.LessOrEqual(t, got["herald-trace"].invocations, invocations, "the default ratio traces some invocations at most")
	for name := range got {
		require.Contains(t, []string{"herald-trace", "herald-trace1"}, name, "herald with tracing off (deliver) exports nothing")
	}

	// Each record span of the ratio-1 function is one of its notifications,
	// in the trace of an invocation it exported, sampled.
	invTraces := map[string]bool{}
	ids := map[string]bool{}
	for _, sp := range b.otlp.Spans() {
		if sp.Resource[string(tracing.KeyServiceName)] != "herald-trace1" {
			continue
		}
		require.True(t, sp.Sampled, sp.Name)
		if sp.Name == tracing.SpanInvocation {
			invTraces[sp.TraceID] = true
		}
	}
	require.Len(t, invTraces, invocations, "a trace per invocation")
	for _, sp := range b.otlp.Spans() {
		if sp.Resource[string(tracing.KeyServiceName)] != "herald-trace1" || sp.Name != tracing.SpanRecord {
			continue
		}
		require.True(t, invTraces[sp.TraceID], "record span in an invocation's trace")
		id, _ := sp.Attributes[string(tracing.KeyNotificationID)].(string)
		// As long as herald's ids ("herald-r0-…"), so that the log bytes
		// per record compare (a line's timings still vary by a few bytes).
		require.True(t, strings.HasPrefix(id, "trace1-r0-") || id == "trace1-cold0-0", id)
		ids[id] = true
	}
	require.Len(t, ids, records, "one span per notification")

	// Every posting function's webhooks arrived and verified.
	require.EqualValues(t, 4*230, b.slow.count.Load())
	require.EqualValues(t, 1+4*111, b.quick.count.Load())
	require.Zero(t, b.slow.badSig.Load()+b.quick.badSig.Load())

	// Section 5: the traced functions' cold start and Init Duration, the
	// same bootstrap.
	s5 := printedTable(t, out, "5. Cold start and footprint")
	s6 := printedTable(t, out, "6. Peers")
	require.Equal(t, []string{"herald", "herald, tracing on (ratio 0.01)", "herald, tracing on (ratio 1)", "Go floor", "empty Go function"}, s6[""])
	colds, inits, cpu := s6["cold start: process start → first answer"], s6["emulator Init Duration"], s6["CPU per record (utime+stime), µs"]
	for i, label := range []string{"herald, tracing on (ratio 0.01)", "herald, tracing on (ratio 1)"} {
		row := s5[label+", same bootstrap (cold start / Init Duration)"]
		require.Equal(t, []string{colds[i+1] + " / " + inits[i+1]}, row, label)
		require.Positive(t, cellMS(t, inits[i+1]))
		require.Less(t, cellMS(t, inits[i+1]), cellMS(t, colds[i+1]))
	}
	require.Equal(t, "3 of 10 reported, 10 POSTs", s6["batch of 10 with 3 answered 503: partial failures"][2])

	// What tracing adds, and what the receiver got, printed.
	require.Regexp(t, `\n   herald, tracing on \(ratio 1\): the same bootstrap as herald's \(section 5's size\), in the same rounds; it adds, round by round: `+
		`cold start [+-]\d+\.\d ms, Init Duration [+-]\d+\.\d ms, batch of 10 [+-]\d+\.\d ms, CPU per record [+-]\d+ µs, peak RSS [+-]\d+ KB; `+
		fmt.Sprintf(`the OTLP receiver got 17 invocation spans for 17 invocations, 341 record spans, %d spans in all, %.0f bytes of OTLP protobuf per traced invocation\n`,
			one.spans, one.bytesPerTrace()), out)
	require.Contains(t, out, "\n   herald, tracing on (ratio 0.01): the same bootstrap")

	// The cost rows: herald off, then on at both ratios, with their CPU.
	require.Len(t, r.costRows, 3)
	for i, ratio := range []float64{0, 0.01, 1} {
		c := r.costRows[i]
		require.True(t, c.herald)
		require.Equal(t, noTable, c.store)
		require.Equal(t, ratio, c.traceRatio)
		require.Equal(t, cpu[i], fmt.Sprintf("%.0f", c.cpuUS))
	}
}

// TestRuntimePortLost: only a function that could not reach its runtime
// API (connection refused) counts as a lost port; a function that exits
// on its own, or an answer refused, does not.
func TestRuntimePortLost(t *testing.T) {
	t.Parallel()
	lost := `2026/12/05 01:32:37 failed to get the next invoke: Get "http://127.0.0.1:45363/2018-06-01/runtime/invocation/next": dial tcp 127.0.0.1:45363: connect: connection refused
[WARNING] (rapid) Process runtime-1 exited: exit status 1`
	require.True(t, runtimePortLost(lost))
	require.False(t, runtimePortLost("[WARNING] (rapid) Process runtime-1 exited: exit status 2\npanic: boom"))
	require.False(t, runtimePortLost("failed to get the next invoke: unexpected EOF"))
	require.False(t, runtimePortLost("dial tcp 127.0.0.1:8443: connect: connection refused"), "a receiver refusing is the function's business")
}
