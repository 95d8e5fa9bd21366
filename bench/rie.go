package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/testkit/otlptest"
	"github.com/heraldhq/herald/internal/tracing"
)

// function is one Lambda under the Runtime Interface Emulator.
type function struct {
	name string
	// emulator is the aws-lambda-rie binary that runs it.
	emulator  string
	bootstrap []string
	env       []string
	// ids begins the notification ids it is sent; "" is name. The store's
	// table remembers delivered ids across runs, so a function with the
	// store gets ids new to it (runTag).
	ids string
}

// idPrefix is what the notification ids sent to f begin with.
func (f function) idPrefix() string {
	if f.ids != "" {
		return f.ids
	}
	return f.name
}

// rieInstance is a running emulator with its function.
type rieInstance struct{ *localenv.RIE }

// start runs the emulator on two free loopback ports.
func (f function) start() (*rieInstance, error) {
	r, err := localenv.StartRIE(f.emulator, f.bootstrap, f.env)
	if err != nil {
		return nil, fmt.Errorf("%w (scripts/install-rie.sh installs the emulator)", err)
	}
	return &rieInstance{r}, nil
}

func (in *rieInstance) stop() { in.Stop() }

// invoke posts ev and decodes the partial batch response.
func (in *rieInstance) invoke(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, time.Duration, error) {
	t0 := time.Now()
	resp, err := in.Invoke(ctx, ev)
	return resp, time.Since(t0), err
}

// coldStart starts f and returns the time from process start to the first
// invocation (ev) answered, and the emulator's own Init Duration.
func (f function) coldStart(ctx context.Context, ev events.SQSEvent) (*rieInstance, time.Duration, time.Duration, error) {
	for try := 1; ; try++ {
		in, err := f.start()
		if err != nil {
			return nil, 0, 0, err
		}
		_, d, err := in.InvokeWhenUp(ctx, ev, 20*time.Second)
		if err != nil {
			logs := in.Logs()
			in.stop()
			if try < maxPortTries && runtimePortLost(logs) {
				continue // the emulator's free port was taken before it bound it: new ports
			}
			return nil, 0, 0, fmt.Errorf("%s cold start: %w", f.name, err)
		}
		return in, d, in.initReport(), nil
	}
}

// maxPortTries is how many emulators a cold start starts at most when the
// runtime API's port was lost (runtimePortLost).
const maxPortTries = 3

// runtimePortLost reports an emulator whose function could not reach its
// runtime API: the port localenv.FreePort chose was taken by another
// process (an outgoing connection's ephemeral port, on a busy machine)
// before the emulator bound it, so nothing listened there. Not the
// function's failure, and not herald's: the cold start is measured again
// on new ports.
func runtimePortLost(logs string) bool {
	return strings.Contains(logs, "failed to get the next invoke") && strings.Contains(logs, "connection refused")
}

// initReport is the emulator's Init Duration, once its INIT REPORT line
// has come through: the emulator copies its output on its own time, so
// the line may follow the first answer by a moment (at most a second is
// waited; 0 without it).
func (in *rieInstance) initReport() time.Duration {
	for range 100 {
		if d := initDuration(in.Logs()); d > 0 {
			return d
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// The emulator logs "INIT REPORT(durationMs: 29.386000)" after the init phase.
var initRE = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

func initDuration(logs string) time.Duration {
	m := initRE.FindStringSubmatch(logs)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return time.Duration(v * float64(time.Millisecond))
}

// peakRSS is the VmHWM of the emulator's child (the bootstrap), in KiB.
func (in *rieInstance) peakRSS() (int64, error) {
	pid, err := in.child()
	if err != nil {
		return 0, err
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM for pid %d", pid)
}

// buildBootstrap builds functions/deliver as `make build` does.
func buildBootstrap(ctx context.Context, root, dir, arch string) (string, int64, error) {
	return buildLambda(ctx, root, dir, "deliver", "./functions/deliver", arch)
}

// buildLambda builds pkg, a path from the repository root root ("" is the
// current directory), with `make build`'s flags into dir/name-arch, and
// returns its path and size in bytes. go build leaves a binary that is up
// to date as it is.
func buildLambda(ctx context.Context, root, dir, name, pkg, arch string) (string, int64, error) {
	return buildLambdaWith(ctx, root, dir, name, pkg, arch, "-s -w")
}

// buildLambdaWith is buildLambda with these linker flags: "" keeps the
// symbol table and DWARF that make build's "-s -w" strips, for perf.
func buildLambdaWith(ctx context.Context, root, dir, name, pkg, arch, ldflags string) (string, int64, error) {
	out := filepath.Join(dir, name+"-"+arch)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", "lambda.norpc", "-ldflags="+ldflags, "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("build %s: %w\n%s", arch, err, b)
	}
	st, err := os.Stat(out)
	if err != nil {
		return "", 0, err
	}
	return out, st.Size(), nil
}

// peer is one function of the interleaved rounds: herald, a peer, the Go
// floor or the empty function.
type peer struct {
	function
	label string
	// posts is false for the empty function, which only answers.
	posts bool
	// slowOnce limits the batch of 100 to the 100 ms receiver to the first
	// round (the sequential peer takes 10 s for it).
	slowOnce bool
	// ts marks the TypeScript peers, whose strongest is a goal's reference.
	ts bool
	// store marks herald with the store on (storeOn).
	store bool
	// traceRatio marks herald with tracing on (HERALD_TRACING=otlp to the
	// rounds' OTLP receiver) at this sample ratio; 0 is tracing off.
	traceRatio float64
	// calls are a peer's own AWS calls per clean batch of batchSize, by
	// itemOp, for the cost estimate (herald's are counted in section 3).
	calls map[string]int
	// perf marks the rows BENCH_PERF records (herald, herald + store).
	perf bool
}

// idempotencyCalls are the Powertools idempotency utility's DynamoDB calls
// for a clean batch of batchSize new records with its DynamoDB persistence
// layer: per record a conditional PutItem of the INPROGRESS record, then an
// UpdateItem to COMPLETED with the result (Powertools for AWS Lambda
// (TypeScript) docs, "Idempotency": "DynamoDB persistence layer").
var idempotencyCalls = map[string]int{"PutItem idempotency": batchSize, "UpdateItem idempotency": batchSize}

// peerSamples is what the rounds measured of one peer.
type peerSamples struct {
	cold, init, b10, b100 []time.Duration
	conns100              []float64 // new connections during a warm batch of 100
	cpuUS                 []float64 // CPU (utime+stime) per record, µs
	rssKB                 []float64
	logBytes              []float64       // bytes the function wrote per record (the CPU phase's clean batches)
	series                map[string]bool // custom metrics its EMF defined on the clean path
	warmSeries            map[string]bool // those of the CPU phase's clean batches: a warm environment's
	failures              string
	// invocations counts the function's invocations, cold starts
	// included: with tracing on at ratio 1, one exported trace each.
	invocations int
}

// cpuRecords is how many records (in batches of 10, receiver answering at
// once) one round's CPU-per-record figure spans.
func cpuRecords(o opts) int {
	if o.quick {
		return 100
	}
	return 2000
}

// rieSetup is what sections 5 and 6 run against: make bench's (benchRIE)
// or a unit test's, with fewer peers, one architecture and fakes of the AWS
// services on 127.0.0.1.
type rieSetup struct {
	out io.Writer // the tables
	// root is the repository, where the builds run ("" is the current
	// directory); bins the directory the bootstraps are built into.
	root, bins string
	emulator   string // the aws-lambda-rie binary
	// archs are the GOARCH values the deliver bootstrap is built for, one
	// size row each; this machine's must be among them.
	archs []string
	// receivers starts the slow receiver, which answers after its delay,
	// and the quick one, which answers at once; the rounds close them.
	receivers func() (slow, quick *receiver)
	// aws makes the queues the deliver function checks at start-up and
	// names the store's table.
	aws func(context.Context) (rieAWS, error)
	// peers picks, in order, the functions to run from make bench's list
	// (nil: all of it); the Go floor and the empty function must stay.
	peers func([]peer) []peer
	// traces starts the OTLP/HTTP traces receiver herald with tracing on
	// exports to; the rounds close it.
	traces func() *otlptest.Server
	// symbols runs the rounds' deliver bootstrap unstripped, for perf
	// (BENCH_PERF); the size rows stay the stripped one's.
	symbols bool
}

// rieAWS is the AWS side of the rounds.
type rieAWS struct {
	cfg        aws.Config // the bench's own calls (the in-process profile)
	queues     localenv.Queues
	storeTable string
	// env is added to every function's environment: where its SDK finds
	// the services (none: the bench's own environment, passed on by the
	// emulator).
	env   []string
	close func() // deletes what aws made
}

// benchRIE is make bench's setup: the local stack, both Lambda
// architectures, every peer and the fan-out's 100 ms receiver.
func benchRIE(o opts) rieSetup {
	return rieSetup{out: o.out, bins: o.workDir, emulator: filepath.Join(".tools", "bin", "aws-lambda-rie"),
		archs: []string{"arm64", "amd64"}, aws: localStackAWS, traces: otlptest.Start, symbols: o.perf,
		receivers: func() (*receiver, *receiver) { return newReceiver(fanDelay), newReceiver(0) }}
}

// localStackAWS makes the queues on the local stack (AWS_ENDPOINT_URL) and
// reads the store's table from its env file.
func localStackAWS(ctx context.Context) (rieAWS, error) {
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return rieAWS{}, err
	}
	sqsc := sqs.NewFromConfig(awsCfg)
	qs, err := localenv.CreateQueues(ctx, sqsc, fmt.Sprintf("bench-rie-%d", time.Now().UnixNano()), 13, 60*time.Second)
	if err != nil {
		return rieAWS{}, err
	}
	drop := func() { qs.Delete(context.Background(), sqsc) }
	storeName, err := needStoreTable()
	if err != nil {
		drop()
		return rieAWS{}, err
	}
	return rieAWS{cfg: awsCfg, queues: qs, storeTable: storeName, close: drop}, nil
}

// sectionRIE covers sections 5 and 6 with make bench's setup (benchRIE).
func sectionRIE(ctx context.Context, o opts, r *results) error {
	return runRIE(ctx, o, r, benchRIE(o))
}

// runRIE covers sections 5 and 6: bootstrap sizes, then herald's
// bootstrap, the peers, the Go floor and the empty Go function under the
// same emulator and receivers, in interleaved rounds (A B C … A B C …):
// cold start, batches of 10 and 100 webhooks to the slow receiver, new
// TLS connections during a warm batch of 100, CPU per record, peak RSS and
// a batch with failures.
func runRIE(ctx context.Context, o opts, r *results, su rieSetup) error {
	load0 := loadAvg()
	bs, err := su.build(ctx)
	if err != nil {
		return err
	}
	return su.rounds(ctx, o, r, bs, load0)
}

// rieBootstraps are the binaries the rounds run (paths), and section 5's
// size rows.
type rieBootstraps struct {
	host, noop, floor string
	sizes             [][]string
}

// build builds the deliver bootstrap for each of su.archs, and the empty
// function and the Go floor for this machine.
func (su rieSetup) build(ctx context.Context) (rieBootstraps, error) {
	var bs rieBootstraps
	for _, arch := range su.archs {
		bin, size, err := buildBootstrap(ctx, su.root, su.bins, arch)
		if err != nil {
			return bs, err
		}
		if arch == runtime.GOARCH {
			bs.host = bin
		}
		mb := float64(size) / 1e6
		bs.sizes = append(bs.sizes, []string{"bootstrap size linux/" + arch + " (stripped, -trimpath)", fmt.Sprintf("%.1f MB", mb), "≤ 15 MB", verdict(mb, 15, false)})
	}
	if bs.host == "" {
		return bs, fmt.Errorf("no bootstrap for this machine's %s", runtime.GOARCH)
	}
	var err error
	if su.symbols {
		// The rounds run it with its symbols, for perf (BENCH_PERF).
		if bs.host, _, err = buildLambdaWith(ctx, su.root, su.bins, "deliver-symbols", "./functions/deliver", runtime.GOARCH, ""); err != nil {
			return bs, err
		}
	}
	if bs.noop, _, err = buildLambda(ctx, su.root, su.bins, "noop", "./bench/noop", runtime.GOARCH); err != nil {
		return bs, err
	}
	bs.floor, _, err = buildLambda(ctx, su.root, su.bins, "floor", "./bench/floor", runtime.GOARCH)
	return bs, err
}

// rounds runs the functions of bs and prints sections 5 and 6; load0 is
// the load average when the section began.
func (su rieSetup) rounds(ctx context.Context, o opts, r *results, bs rieBootstraps, load0 string) error {
	rcv, quick := su.receivers()
	defer rcv.Close()
	defer quick.Close()
	otlp := su.traces()
	defer otlp.Close()
	certFile := filepath.Join(o.workDir, "receivers.pem")
	pems := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rcv.srv.Certificate().Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: quick.srv.Certificate().Raw})...)
	if err := os.WriteFile(certFile, pems, 0o600); err != nil {
		return err
	}
	// The deliver function checks its queues at start-up: give it real ones.
	env, err := su.aws(ctx)
	if err != nil {
		return err
	}
	defer env.close()
	abs := func(p ...string) string {
		a, _ := filepath.Abs(filepath.Join(append([]string{su.root}, p...)...))
		return a
	}
	common := append([]string{"AWS_LAMBDA_FUNCTION_TIMEOUT=120", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128", "AWS_REGION=us-east-1"}, env.env...)
	with := func(extra ...string) []string { return append(append([]string{}, common...), extra...) }
	fn := func(name, bootstrap string, vars []string) function {
		return function{name: name, emulator: su.emulator, bootstrap: []string{bootstrap}, env: vars}
	}
	herald := fn("herald", bs.host, with(
		"AWS_LAMBDA_FUNCTION_NAME=deliver", "SSL_CERT_FILE="+certFile,
		"HERALD_QUEUE_URL="+env.queues.URL, "HERALD_DLQ_URL="+env.queues.DLQURL,
		"HERALD_WEBHOOK_SECRET="+benchSecret, "HERALD_WEBHOOK_ALLOW_CIDRS=127.0.0.1/32", "HERALD_BACKOFF_BASE_SECONDS=1"))
	// herald with the store on, its ids as long as herald's ("herald-r0-…")
	// so that its log lines are too.
	withStore := herald
	withStore.name, withStore.ids = "herald-store", "h"+runTag(len(herald.name)-1)
	withStore.env = append(append([]string{}, herald.env...), storeOn.envList(env.storeTable)...)
	var ddbEnv []string
	if ep := os.Getenv("AWS_ENDPOINT_URL"); ep != "" {
		// Connections kept alive, as DynamoDB's are (keepAliveProxy).
		proxy, stop, err := keepAliveProxy(ep)
		if err != nil {
			return err
		}
		defer stop()
		ddbEnv = []string{"AWS_ENDPOINT_URL_DYNAMODB=" + proxy}
	}
	withStore.env = append(withStore.env, ddbEnv...)
	// herald with tracing on, exporting to a local OTLP/HTTP receiver at
	// the default sample ratio and at 1 (every invocation): each span's
	// service.name is the function's name, the peer's. Its notification
	// ids are as long as herald's, so that its log lines are too.
	traced := func(name, ids string, ratio float64) peer {
		f := herald
		f.name, f.ids = name, ids
		f.env = append(append([]string{}, herald.env...), "AWS_LAMBDA_FUNCTION_NAME="+name,
			tracing.EnvTracing+"="+string(tracing.OTLP), tracing.EnvEndpoint+"="+otlp.Endpoint(),
			fmt.Sprintf("%s=%g", tracing.EnvSampleRatio, ratio))
		return peer{function: f, label: fmt.Sprintf("herald, tracing on (ratio %g)", ratio), posts: true, traceRatio: ratio}
	}
	// The TypeScript peer with the Powertools idempotency utility on the
	// same table, its ids new to it as herald + store's are.
	idem := fn("peer-ts-idem", abs("bench", "peer-ts", "bootstrap"), append(with(
		"AWS_LAMBDA_FUNCTION_NAME=peer-ts-idem", "PEER_WEBHOOK_SECRET="+benchSecret, "NODE_EXTRA_CA_CERTS="+certFile,
		"POWERTOOLS_SERVICE_NAME=peer", "PEER_HTTP_CLIENT=https", "PEER_IDEMPOTENCY_TABLE="+env.storeTable), ddbEnv...))
	idem.ids = "t" + runTag(len(idem.name)-1)
	peers := []peer{
		{function: herald, label: "herald", posts: true, perf: true},
		{function: withStore, label: "herald + store", posts: true, store: true, perf: true},
		traced("herald-trace", "trace0", tracing.DefaultSampleRatio),
		traced("herald-trace1", "trace1", 1),
		{function: fn("peer-ts", abs("bench", "peer-ts", "bootstrap"), with(
			"AWS_LAMBDA_FUNCTION_NAME=peer-ts", "PEER_WEBHOOK_SECRET="+benchSecret, "NODE_EXTRA_CA_CERTS="+certFile,
			"POWERTOOLS_SERVICE_NAME=peer", "PEER_HTTP_CLIENT=fetch")), label: "TS BatchProcessor, fetch", posts: true, ts: true},
		{function: fn("peer-ts-https", abs("bench", "peer-ts", "bootstrap"), with(
			"AWS_LAMBDA_FUNCTION_NAME=peer-ts-https", "PEER_WEBHOOK_SECRET="+benchSecret, "NODE_EXTRA_CA_CERTS="+certFile,
			"POWERTOOLS_SERVICE_NAME=peer", "PEER_HTTP_CLIENT=https")), label: "TS BatchProcessor, node:https keep-alive", posts: true, ts: true},
		{function: idem, label: "TS BatchProcessor + idempotency (DynamoDB), node:https", posts: true, calls: idempotencyCalls},
		{function: fn("peer-async", abs("bench", "peer-async", "bootstrap"), with(
			"AWS_LAMBDA_FUNCTION_NAME=peer-async", "PEER_PYTHON="+abs(".venv", "bench-async", "bin", "python"),
			"PEER_WEBHOOK_SECRET="+benchSecret, "SSL_CERT_FILE="+certFile, "POWERTOOLS_SERVICE_NAME=peer", "PYTHONDONTWRITEBYTECODE=1")),
			label: "Py AsyncBatchProcessor", posts: true},
		{function: fn("peer", abs("bench", "peer", "bootstrap"), with(
			"AWS_LAMBDA_FUNCTION_NAME=peer", "PEER_PYTHON="+abs(".venv", "bench", "bin", "python"), "PEER_WEBHOOK_SECRET="+benchSecret,
			"REQUESTS_CA_BUNDLE="+certFile, "POWERTOOLS_SERVICE_NAME=peer", "PYTHONDONTWRITEBYTECODE=1")),
			label: "Py BatchProcessor (sequential)", posts: true, slowOnce: true},
		{function: fn("floor", bs.floor, with(
			"AWS_LAMBDA_FUNCTION_NAME=floor", "PEER_WEBHOOK_SECRET="+benchSecret, "SSL_CERT_FILE="+certFile)),
			label: "Go floor", posts: true},
		{function: fn("noop", bs.noop, with("AWS_LAMBDA_FUNCTION_NAME=noop")), label: "empty Go function"},
	}
	if !o.quick {
		// What herald's GOMAXPROCS from the memory size (1 at 128 MB) changes:
		// the same bootstrap at Go's own default, this machine's CPU count.
		procs := herald
		procs.name = "herald-procs"
		procs.env = append(append([]string{}, herald.env...), fmt.Sprintf("GOMAXPROCS=%d", runtime.NumCPU()))
		peers = append(peers, peer{function: procs, label: fmt.Sprintf("herald, GOMAXPROCS=%d", runtime.NumCPU()), posts: true})
	}
	if su.peers != nil {
		peers = su.peers(peers)
	}
	idx := func(name string) int { return slices.IndexFunc(peers, func(p peer) bool { return p.name == name }) }
	floor, noop := idx("floor"), idx("noop")

	// Herald without its start-up queue check (two GetQueueAttributes).
	nocheck := herald
	nocheck.env = append(append([]string{}, herald.env...), "HERALD_CHECK_QUEUES=false")
	nocheckCold, nocheckInit, err := nocheck.coldStarts(ctx, o, quick.URL())
	if err != nil {
		return err
	}

	rounds := max(o.reps, 1)
	got := make([]peerSamples, len(peers))
	for round := range rounds {
		for i, p := range peers {
			if err := measureRound(ctx, o, p, round, rcv, quick, &got[i]); err != nil {
				return fmt.Errorf("%s, round %d: %w", p.name, round+1, err)
			}
		}
	}
	if n := rcv.badSig.Load() + quick.badSig.Load(); n > 0 {
		return fmt.Errorf("%d requests with a signature that does not verify", n)
	}
	spans := tracesBy(otlp)
	for i, p := range peers {
		// Honesty: at ratio 1 every invocation's trace reached the receiver.
		if p.traceRatio == 1 && spans[p.name].invocations != got[i].invocations {
			return fmt.Errorf("%s: %d invocations, %d invocation spans at the OTLP receiver", p.label, got[i].invocations, spans[p.name].invocations)
		}
	}
	load1 := loadAvg()
	h := got[0]
	r.costRows = nil
	for i, p := range peers {
		heraldRow := i == 0 || p.store || p.traceRatio > 0
		if heraldRow || strings.HasPrefix(p.label, "TS ") || strings.HasPrefix(p.label, "Py ") { // herald, with and without the store and tracing, and the Powertools peers
			c := costInput{label: p.label, batch10: median(got[i].b10), rssKB: int64(medianF(got[i].rssKB)),
				cpuUS: medianF(got[i].cpuUS), logBytes: medianF(got[i].logBytes), series: len(got[i].series), warmSeries: len(got[i].warmSeries),
				herald: heraldRow, store: noTable, calls: p.calls, traceRatio: p.traceRatio}
			if p.store {
				c.store = storeOn
			}
			r.costRows = append(r.costRows, c)
		}
	}
	// The slow receiver's delay as the tables name it: "100 ms".
	slow := fmt.Sprintf("%d ms", rcv.delay.Milliseconds())
	rss := func(kb float64) string { return fmt.Sprintf("%.1f MB", kb/1024) }
	rows := append(slices.Clone(bs.sizes),
		[]string{"cold start: process start → first invocation answered (median)", ms(median(h.cold)), "≤ 100 ms", verdict(float64(median(h.cold)), float64(100*time.Millisecond), false)},
		[]string{"  of which the emulator's Init Duration", ms(median(h.init)), "", ""},
		[]string{"  floor: an empty Go function, same emulator (cold start / Init Duration)", ms(median(got[noop].cold)) + " / " + ms(median(got[noop].init)), "", ""},
		[]string{"  herald with HERALD_CHECK_QUEUES=false (cold start / Init Duration)", ms(nocheckCold) + " / " + ms(nocheckInit), "", ""},
	)
	for i, p := range peers {
		if p.traceRatio > 0 {
			rows = append(rows, []string{"  " + p.label + ", same bootstrap (cold start / Init Duration)", ms(median(got[i].cold)) + " / " + ms(median(got[i].init)), "", ""})
		}
	}
	rows = append(rows,
		[]string{"peak RSS (VmHWM) after batches of 10 and 100 webhooks", rss(medianF(h.rssKB)), "≤ 64 MB", verdict(medianF(h.rssKB)/1024, 64, false)},
	)
	printTable(su.out, "5. Cold start and footprint (deliver bootstrap under the Lambda Runtime Interface Emulator)",
		[]string{"", "herald", "goal", "verdict"}, rows)

	header := []string{""}
	for _, p := range peers {
		header = append(header, p.label)
	}
	row := func(name string, f func(peerSamples) string) []string {
		out := []string{name}
		for i, p := range peers {
			v := "–"
			if p.posts || strings.HasPrefix(name, "CPU per record") || strings.HasPrefix(name, "log bytes") || strings.HasPrefix(name, "custom metrics") || strings.HasPrefix(name, "cold") || strings.HasPrefix(name, "  emulator") || strings.HasPrefix(name, "peak") {
				v = f(got[i])
			}
			out = append(out, v)
		}
		return out
	}
	printTable(su.out, fmt.Sprintf("6. Peers: same emulator (128 MB set), same TLS receivers (HTTP/1.1; %s and at once), %d interleaved round(s); median (min–max); load average %s at start, %s at end",
		slow, rounds, load0, load1), header, [][]string{
		row("batch of 10 webhooks, wall ("+slow+" receiver)", func(s peerSamples) string { return durRange(s.b10) }),
		row("batch of 100 webhooks, wall ("+slow+" receiver, warm)", func(s peerSamples) string { return durRange(s.b100) }),
		row("  new TLS connections during that batch", func(s peerSamples) string { return numRange(s.conns100, "%.0f") }),
		row("CPU per record (utime+stime), µs", func(s peerSamples) string { return numRange(s.cpuUS, "%.0f") }),
		row("log bytes per record written by the function (those batches)", func(s peerSamples) string { return numRange(s.logBytes, "%.0f") }),
		row("custom metrics its EMF defines on the clean path (metric × dimension values)", func(s peerSamples) string { return fmt.Sprint(len(s.series)) }),
		row("  of them on a warm environment's batches (the CPU rounds)", func(s peerSamples) string { return fmt.Sprint(len(s.warmSeries)) }),
		row(fmt.Sprintf("  arithmetic, not measured: CPU of a batch of 10 at 128 MB (%.3f vCPU), ms", vcpu128), func(s peerSamples) string {
			return fmt.Sprintf("%.0f", medianF(s.cpuUS)*10/1000/vcpu128)
		}),
		row("cold start: process start → first answer", func(s peerSamples) string { return durRange(s.cold) }),
		row("  emulator Init Duration", func(s peerSamples) string { return durRange(s.init) }),
		row("peak RSS (VmHWM) after the batches", func(s peerSamples) string { return rss(medianF(s.rssKB)) }),
		row("batch of 10 with 3 answered 503: partial failures", func(s peerSamples) string { return s.failures }),
	})
	fmt.Fprintf(su.out, "   CPU per record: %d records per round in batches of 10 to the receiver answering at once, /proc/<pid>/stat utime+stime of the runtime process (10 ms ticks)\n", cpuRecords(o))
	if si := slices.IndexFunc(peers, func(p peer) bool { return p.store }); si >= 0 {
		s := got[si]
		r.rieHerald, r.rieStore = h, s
		fmt.Fprintf(su.out, "   herald + store: the store on (DynamoDB table %s, LocalStack's moto on these cores), right after herald in every round; it adds, round by round: "+
			"batch of 10 %s, batch of 100 %s, CPU per record %s µs, log bytes per record %s\n",
			env.storeTable, addedRange(pairedDiffs(h.b10, s.b10)), addedRange(pairedDiffs(h.b100, s.b100)),
			numRange(floatDiffs(h.cpuUS, s.cpuUS), "%+.0f"), numRange(floatDiffs(h.logBytes, s.logBytes), "%+.0f"))
	}
	for i, p := range peers {
		if p.traceRatio > 0 {
			printTracingAdds(su.out, p, h, got[i], spans[p.name])
		}
	}

	goals := rieGoals(h, got[floor], peers, got, rcv.delay)
	for _, g := range r.parseGoals { // section 1's, issue 12's goal 3; its columns: Parse, plain decode, time ratio
		goals = append(goals, append([]string{"(issue 12) " + g[0]}, g[1:]...))
	}
	printTable(su.out, "Goals of issue 22 (ratios within this run; goal 1, the all-in cost, is the cost table)", []string{"goal", "herald", "reference", "ratio", "verdict"}, goals)
	tsCPU, _ := strongestTS(peers, got, cpuPerRecord)
	if o.quick || cpuGoalsMet(cpuPerRecord(h), tsCPU, cpuPerRecord(got[floor])) {
		return nil
	}
	// Name the limit: where herald's CPU per record goes, the same work in
	// this process (the emulator's process cannot be profiled from here).
	p, err := deliverer(env.cfg, quick, nil)
	if err != nil {
		return err
	}
	n := cpuRecords(o) / 2 // five times the records of a round: more samples
	return profileHandle(ctx, o, "cpu-per-record", fmt.Sprintf("CPU of %d batches of 10 to the receiver answering at once, in process", n), p, n,
		func(i int) events.SQSEvent { return webhookEvent(fmt.Sprintf("profcpu-%d", i), 10, 0, quick.URL(), 1) })
}

// strongestTS is the TypeScript peer (ts) with the least of f over its
// samples (got, in peers' order), the first of equals, and its label: each
// goal against a TypeScript peer is held against its best setup. Without
// one it is +Inf and "".
func strongestTS(peers []peer, got []peerSamples, f func(peerSamples) float64) (float64, string) {
	best, label := math.Inf(1), ""
	for i, p := range peers {
		if v := f(got[i]); p.ts && v < best {
			best, label = v, p.label
		}
	}
	return best, label
}

func cpuPerRecord(s peerSamples) float64 { return medianF(s.cpuUS) }

// rieGoals is the rows of the goals table for herald's samples h against
// the strongest TypeScript peer's (of peers, their samples got), the Go
// floor's and the slow receiver's delay.
func rieGoals(h, floor peerSamples, peers []peer, got []peerSamples, delay time.Duration) [][]string {
	slow := fmt.Sprintf("%d ms", delay.Milliseconds())
	rss := func(kb float64) string { return fmt.Sprintf("%.1f MB", kb/1024) }
	hb100 := median(h.b100)
	b100Ratio := float64(hb100) / float64(delay)
	cpu := cpuPerRecord
	tsCPU, tsCPULabel := strongestTS(peers, got, cpu)
	tsCold, tsColdLabel := strongestTS(peers, got, func(s peerSamples) float64 { return float64(median(s.cold)) })
	tsRSS, tsRSSLabel := strongestTS(peers, got, func(s peerSamples) float64 { return medianF(s.rssKB) })
	floorCPU := cpu(floor)
	hLog := medianF(h.logBytes)
	return [][]string{
		{"2. log bytes per delivered notification ≤ 250 (INFO, batches of 10)", fmt.Sprintf("%.0f B", hLog), "250 B", "", verdict(hLog, maxLogBytes, false)},
		{"3. CPU per record ≤ strongest TS peer (" + tsCPULabel + ")", fmt.Sprintf("%.0f µs", cpu(h)), fmt.Sprintf("%.0f µs", tsCPU), ratio(cpu(h), tsCPU), verdict(cpu(h)/tsCPU, 1, false)},
		{"3. CPU per record ≤ 1.1 × Go floor", fmt.Sprintf("%.0f µs", cpu(h)), fmt.Sprintf("%.0f µs", floorCPU), ratio(cpu(h), floorCPU), verdict(cpu(h)/floorCPU, 1.1, false)},
		{"4. batch of 100, receiver at " + slow + ": wall ≤ 1.1 × the slowest delivery (" + slow + ")", ms(hb100), slow, fmt.Sprintf("%.2f", b100Ratio), verdict(b100Ratio, 1.1, false)},
		{"4. warm batch of 100: no new connection", numRange(h.conns100, "%.0f"), "0", "", verdict(medianF(h.conns100), 0, false)},
		{"4. cold start ≤ 0.5 × TS peer (" + tsColdLabel + ")", ms(median(h.cold)), ms(time.Duration(tsCold)), ratio(float64(median(h.cold)), tsCold), verdict(float64(median(h.cold))/tsCold, 0.5, false)},
		{"4. peak RSS ≤ 0.5 × TS peer (" + tsRSSLabel + ")", rss(medianF(h.rssKB)), rss(tsRSS), ratio(medianF(h.rssKB), tsRSS), verdict(medianF(h.rssKB)/tsRSS, 0.5, false)},
	}
}

// perRecordUS is the CPU from before to after spread over n records, in
// µs.
func perRecordUS(before, after time.Duration, n int) float64 {
	return float64((after - before).Microseconds()) / float64(n)
}

// cpuGoalsMet reports whether herald's CPU per record meets goal 3: at
// most the strongest TypeScript peer's and at most 1.1 × the Go floor's
// (all in µs).
func cpuGoalsMet(herald, ts, floor float64) bool {
	return herald <= ts && herald <= 1.1*floor
}

// measureRound starts p cold and measures one round of it into s.
func measureRound(ctx context.Context, o opts, p peer, round int, slow, quick *receiver, s *peerSamples) error {
	in, cold, init, err := p.coldStart(ctx, webhookEvent(fmt.Sprintf("%s-cold%d", p.idPrefix(), round), 1, 0, quick.URL(), 1))
	if err != nil {
		return err
	}
	defer in.stop()
	s.cold, s.init = append(s.cold, cold), append(s.init, init)
	s.invocations++
	clean := func(ev events.SQSEvent) (time.Duration, error) {
		s.invocations++
		resp, d, err := in.invoke(ctx, ev)
		if err != nil {
			return d, err
		}
		if p.posts && len(resp.BatchItemFailures) > 0 {
			return d, fmt.Errorf("%d failures in a clean batch of %d", len(resp.BatchItemFailures), len(ev.Records))
		}
		return d, nil
	}
	id := func(what string) string { return fmt.Sprintf("%s-r%d-%s", p.idPrefix(), round, what) }
	if p.posts {
		// Connections to the slow receiver first, as a warm function has.
		if _, err := clean(webhookEvent(id("warm10"), 10, 0, slow.URL(), 1)); err != nil {
			return err
		}
		d, err := clean(webhookEvent(id("b10"), 10, 0, slow.URL(), 1))
		if err != nil {
			return err
		}
		s.b10 = append(s.b10, d)
		if !p.slowOnce || (round == 0 && !o.quick) {
			if !p.slowOnce {
				if _, err := clean(webhookEvent(id("warm100"), 100, 0, slow.URL(), 1)); err != nil {
					return err
				}
			}
			before := slow.conns.Load()
			d, err := clean(webhookEvent(id("b100"), 100, 0, slow.URL(), 1))
			if err != nil {
				return err
			}
			s.b100, s.conns100 = append(s.b100, d), append(s.conns100, float64(slow.conns.Load()-before))
		}
	}
	// CPU per record: batches of 10 to the receiver answering at once.
	if _, err := clean(webhookEvent(id("warmq"), 10, 0, quick.URL(), 1)); err != nil {
		return err
	}
	pid, err := in.child()
	if err != nil {
		return err
	}
	before := in.settledLogs()
	logs0 := functionLogBytes(before)
	cpu0, err := procCPU(pid)
	if err != nil {
		return err
	}
	n := cpuRecords(o)
	var rec *perfRecording
	if o.perf && p.perf && round == 0 {
		if rec, err = startPerf(filepath.Join(o.workDir, p.name+".perf.data"), pid); err != nil {
			return err
		}
		defer func() {
			if rec != nil {
				rec.stop()
			}
		}()
	}
	for b := range n / 10 {
		if _, err := clean(webhookEvent(id(fmt.Sprintf("cpu%d", b)), 10, 0, quick.URL(), 1)); err != nil {
			return err
		}
	}
	cpu1, err := procCPU(pid)
	if err != nil {
		return err
	}
	if rec != nil {
		stopped := rec
		rec = nil
		if err := stopped.stop(); err != nil {
			return err
		}
		if err := stopped.report(ctx, o.out, p.label, n); err != nil {
			return err
		}
	}
	s.cpuUS = append(s.cpuUS, perRecordUS(cpu0, cpu1, n))
	settled := in.settledLogs()
	s.logBytes = append(s.logBytes, float64(functionLogBytes(settled)-logs0)/float64(n))
	// The custom metrics of the clean path so far (cold start, the batches
	// to both receivers); failures add their classes' (docs/benchmarks.md).
	if s.series == nil {
		s.series = map[string]bool{}
	}
	metricSeries(settled, s.series)
	// Those of a warm environment's clean batches alone (the CPU phase):
	// a metric written only on an environment's first batch (Paused 0)
	// costs only the hours environments start in.
	if s.warmSeries == nil {
		s.warmSeries = map[string]bool{}
	}
	metricSeries(settled[min(len(before), len(settled)):], s.warmSeries)
	rss, err := in.peakRSS()
	if err != nil {
		return err
	}
	s.rssKB = append(s.rssKB, float64(rss))

	// Honesty: three records fail; each must be POSTed and reported.
	if p.posts && round == 0 {
		before := slow.count.Load()
		ev := webhookEvent(id("part"), 10, 3, slow.URL(), 1)
		s.invocations++
		resp, _, err := in.invoke(ctx, ev)
		if err != nil {
			return err
		}
		sent := int(slow.count.Load() - before)
		want := map[string]bool{ev.Records[0].MessageId: true, ev.Records[1].MessageId: true, ev.Records[2].MessageId: true}
		ok := sent == 10 && len(resp.BatchItemFailures) == 3
		for _, it := range resp.BatchItemFailures {
			ok = ok && want[it.ItemIdentifier]
		}
		s.failures = fmt.Sprintf("%d of 10 reported, %d POSTs", len(resp.BatchItemFailures), sent)
		if !ok {
			s.failures = "WRONG: " + s.failures
		}
	}
	return nil
}

// coldStarts starts f o.reps times, each answering one webhook to base,
// and returns the median cold start and Init Duration.
func (f function) coldStarts(ctx context.Context, o opts, base string) (time.Duration, time.Duration, error) {
	var colds, inits []time.Duration
	for i := range max(o.reps, 1) {
		in, cold, init, err := f.coldStart(ctx, webhookEvent(fmt.Sprintf("%s-cold%d", f.idPrefix(), i), 1, 0, base, 1))
		if err != nil {
			return 0, 0, err
		}
		in.stop()
		colds, inits = append(colds, cold), append(inits, init)
	}
	return median(colds), median(inits), nil
}

// child returns the pid of the emulator's child: the function's runtime
// process (the bootstrap, or what its shell script execs).
func (in *rieInstance) child() (int, error) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", in.Pid()))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no bootstrap process under the emulator (pid %d)", in.Pid())
}

// procCPU is the utime+stime of process pid, all its threads, from
// /proc/<pid>/stat (fields 14 and 15, in USER_HZ ticks of 10 ms on Linux).
func procCPU(pid int) (time.Duration, error) {
	file := fmt.Sprintf("/proc/%d/stat", pid)
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	d, ok := statCPU(b)
	if !ok {
		return 0, fmt.Errorf("unexpected %s", file)
	}
	return d, nil
}

// statCPU is fields 14 and 15 of a /proc/<pid>/stat line, utime+stime, in
// ticks of 10 ms; false when the line has no such fields. The command
// name (field 2, in parentheses) may itself hold ")".
func statCPU(b []byte) (time.Duration, bool) {
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:])) // from field 3 (state) on
	if i < 0 || len(f) < 13 {
		return 0, false
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// settledLogs returns the emulator's output once the function's lines of
// the invocations so far have come through: the emulator copies them from
// the function's pipe on its own time, so the output is read again until
// it stops growing for a moment (at most a second).
func (in *rieInstance) settledLogs() string { return settle(in.Logs, 50*time.Millisecond) }

// settle reads read again after each pause until two reads in a row are
// as long, at most 20 times, and returns the last.
func settle(read func() string, pause time.Duration) string {
	logs := read()
	for range 20 {
		time.Sleep(pause)
		again := read()
		if len(again) == len(logs) {
			return again
		}
		logs = again
	}
	return logs
}

// loadAvg is the 1, 5 and 15 minute load averages, "1.20/0.95/0.80".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return loadAvgOf(string(b))
}

// loadAvgOf is loadAvg of /proc/loadavg's text, or "?" when it is not.
func loadAvgOf(text string) string {
	f := strings.Fields(text)
	if len(f) < 3 {
		return "?"
	}
	return f[0] + "/" + f[1] + "/" + f[2]
}
