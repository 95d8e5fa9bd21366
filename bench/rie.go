package main

import (
	"context"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/localenv"
)

// function is one Lambda under the Runtime Interface Emulator.
type function struct {
	name      string
	bootstrap []string
	env       []string
}

// rieInstance is a running emulator with its function.
type rieInstance struct{ *localenv.RIE }

// start runs the emulator on two free loopback ports.
func (f function) start() (*rieInstance, error) {
	r, err := localenv.StartRIE(filepath.Join(".tools", "bin", "aws-lambda-rie"), f.bootstrap, f.env)
	if err != nil {
		return nil, err
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
	in, err := f.start()
	if err != nil {
		return nil, 0, 0, err
	}
	_, d, err := in.InvokeWhenUp(ctx, ev, 20*time.Second)
	if err != nil {
		in.stop()
		return nil, 0, 0, fmt.Errorf("%s cold start: %w", f.name, err)
	}
	return in, d, initDuration(in.Logs()), nil
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
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", in.Pid()))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, pid := range strings.Fields(string(b)) {
			st, err := os.ReadFile("/proc/" + pid + "/status")
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(st), "\n") {
				if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
					return kb, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("no bootstrap process under the emulator (pid %d)", in.Pid())
}

// buildBootstrap builds functions/deliver as `make build` does.
func buildBootstrap(ctx context.Context, dir, arch string) (string, int64, error) {
	return buildLambda(ctx, dir, "deliver", "./functions/deliver", arch)
}

// buildLambda builds pkg with `make build`'s flags into dir/name-arch.
func buildLambda(ctx context.Context, dir, name, pkg, arch string) (string, int64, error) {
	out := filepath.Join(dir, name+"-"+arch)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", "lambda.norpc", "-ldflags=-s -w", "-o", out, pkg)
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

// rieFigures is what one function measured under the emulator.
type rieFigures struct {
	cold, init        time.Duration
	batch10, batch100 time.Duration
	rssKB             int64
	failuresOK        bool
	failuresGot, sent int
}

// sectionRIE covers sections 5 and 6: bootstrap sizes, then herald's
// bootstrap and the Powertools peer under the same emulator, cold start,
// batches of 10 and 100 webhooks to the 100 ms receiver, a batch with
// failures, and the peak RSS after the batches.
func sectionRIE(ctx context.Context, o opts, r *results) error {
	var sizes [][]string
	var hostBin string
	for _, arch := range []string{"arm64", "amd64"} {
		bin, size, err := buildBootstrap(ctx, o.workDir, arch)
		if err != nil {
			return err
		}
		if arch == runtime.GOARCH {
			hostBin = bin
		}
		mb := float64(size) / 1e6
		sizes = append(sizes, []string{"bootstrap size linux/" + arch + " (stripped, -trimpath)", fmt.Sprintf("%.1f MB", mb), "≤ 15 MB", verdict(mb, 15, false)})
	}
	if hostBin == "" {
		return fmt.Errorf("no bootstrap for this machine's %s", runtime.GOARCH)
	}

	// The floor: the emulator starting an empty Go function.
	noopBin, _, err := buildLambda(ctx, o.workDir, "noop", "./bench/noop", runtime.GOARCH)
	if err != nil {
		return err
	}
	noop := function{name: "noop", bootstrap: []string{noopBin}, env: []string{"AWS_LAMBDA_FUNCTION_TIMEOUT=10", "AWS_LAMBDA_FUNCTION_NAME=noop"}}
	noopCold, noopInit, err := noop.coldStarts(ctx, o, "https://127.0.0.1:1")
	if err != nil {
		return err
	}

	rcv := newReceiver(fanDelay)
	defer rcv.Close()
	quick := newReceiver(0)
	defer quick.Close()
	certFile := filepath.Join(o.workDir, "receivers.pem")
	pems := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rcv.srv.Certificate().Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: quick.srv.Certificate().Raw})...)
	if err := os.WriteFile(certFile, pems, 0o600); err != nil {
		return err
	}
	py, _ := filepath.Abs(filepath.Join(".venv", "bench", "bin", "python"))
	peerBoot, _ := filepath.Abs(filepath.Join("bench", "peer", "bootstrap"))
	common := []string{"AWS_LAMBDA_FUNCTION_TIMEOUT=120", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128", "AWS_REGION=us-east-1"}
	// The deliver function checks its queues at start-up: give it real ones.
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	sqsc := sqs.NewFromConfig(awsCfg)
	qs, err := localenv.CreateQueues(ctx, sqsc, fmt.Sprintf("bench-rie-%d", time.Now().UnixNano()), 13, 60*time.Second)
	if err != nil {
		return err
	}
	defer qs.Delete(context.Background(), sqsc)
	herald := function{name: "herald", bootstrap: []string{hostBin}, env: append(append([]string{}, common...),
		"AWS_LAMBDA_FUNCTION_NAME=deliver", "SSL_CERT_FILE="+certFile,
		"HERALD_QUEUE_URL="+qs.URL, "HERALD_DLQ_URL="+qs.DLQURL,
		"HERALD_WEBHOOK_SECRET="+benchSecret, "HERALD_WEBHOOK_ALLOW_CIDRS=127.0.0.1/32", "HERALD_BACKOFF_BASE_SECONDS=1")}
	peer := function{name: "peer", bootstrap: []string{peerBoot}, env: append(append([]string{}, common...),
		"AWS_LAMBDA_FUNCTION_NAME=peer", "PEER_PYTHON="+py, "PEER_WEBHOOK_SECRET="+benchSecret,
		"REQUESTS_CA_BUNDLE="+certFile, "POWERTOOLS_SERVICE_NAME=peer", "PYTHONDONTWRITEBYTECODE=1")}

	// Herald without its start-up queue check (two GetQueueAttributes).
	nocheck := herald
	nocheck.env = append(append([]string{}, herald.env...), "HERALD_CHECK_QUEUES=false")
	nocheckCold, nocheckInit, err := nocheck.coldStarts(ctx, o, quick.URL())
	if err != nil {
		return err
	}

	figs := map[string]*rieFigures{}
	for _, f := range []function{herald, peer} {
		fg, err := measureFunction(ctx, o, f, rcv, quick)
		if err != nil {
			return err
		}
		figs[f.name] = fg
	}
	h, p := figs["herald"], figs["peer"]
	r.heraldBatch10, r.peerBatch10, r.heraldRSSKB, r.peerRSSKB = h.batch10, p.batch10, h.rssKB, p.rssKB

	rss := func(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }
	rows := append(sizes,
		[]string{"cold start: process start → first invocation answered (median)", ms(h.cold), "≤ 100 ms", verdict(float64(h.cold), float64(100*time.Millisecond), false)},
		[]string{"  of which the emulator's Init Duration", ms(h.init), "", ""},
		[]string{"  floor: an empty Go function, same emulator (cold start / Init Duration)", ms(noopCold) + " / " + ms(noopInit), "", ""},
		[]string{"  herald with HERALD_CHECK_QUEUES=false (cold start / Init Duration)", ms(nocheckCold) + " / " + ms(nocheckInit), "", ""},
		[]string{"peak RSS (VmHWM) after batches of 10 and 100 webhooks", rss(h.rssKB), "≤ 64 MB", verdict(float64(h.rssKB)/1024, 64, false)},
	)
	table("5. Cold start and footprint (deliver bootstrap under the Lambda Runtime Interface Emulator)",
		[]string{"", "herald", "goal", "verdict"}, rows)

	fail := func(f *rieFigures) string {
		if f.failuresOK {
			return fmt.Sprintf("%d of %d reported, %d POSTs", f.failuresGot, 10, f.sent)
		}
		return fmt.Sprintf("WRONG: %d reported, %d POSTs", f.failuresGot, f.sent)
	}
	table("6. Peer: Powertools for AWS Lambda (Python) BatchProcessor, sequential requests.Session POSTs, same emulator and receiver (100 ms)",
		[]string{"", "herald", "peer", "peer / herald"},
		[][]string{
			{"batch of 10 webhooks, wall (warm, median)", ms(h.batch10), ms(p.batch10), ratio(float64(p.batch10), float64(h.batch10))},
			{"batch of 100 webhooks, wall (warm)", ms(h.batch100), ms(p.batch100), ratio(float64(p.batch100), float64(h.batch100))},
			{"cold start: process start → first answer (median)", ms(h.cold), ms(p.cold), ratio(float64(p.cold), float64(h.cold))},
			{"  emulator Init Duration", ms(h.init), ms(p.init), ratio(float64(p.init), float64(h.init))},
			{"peak RSS (VmHWM)", rss(h.rssKB), rss(p.rssKB), ratio(float64(p.rssKB), float64(h.rssKB))},
			{"batch of 10 with 3 failing (503): partial failures", fail(h), fail(p), ""},
		})
	return nil
}

// coldStarts starts f o.reps times, each answering one webhook to base,
// and returns the median cold start and Init Duration.
func (f function) coldStarts(ctx context.Context, o opts, base string) (time.Duration, time.Duration, error) {
	var colds, inits []time.Duration
	for i := range max(o.reps, 1) {
		in, cold, init, err := f.coldStart(ctx, webhookEvent(fmt.Sprintf("%s-cold%d", f.name, i), 1, 0, base, 1))
		if err != nil {
			return 0, 0, err
		}
		in.stop()
		colds, inits = append(colds, cold), append(inits, init)
	}
	return median(colds), median(inits), nil
}

func measureFunction(ctx context.Context, o opts, f function, slow, quick *receiver) (*rieFigures, error) {
	fg := &rieFigures{}
	var colds, inits []time.Duration
	var warm *rieInstance
	for i := range max(o.reps, 1) {
		in, cold, init, err := f.coldStart(ctx, webhookEvent(fmt.Sprintf("%s-cold%d", f.name, i), 1, 0, quick.URL(), 1))
		if err != nil {
			return nil, err
		}
		colds, inits = append(colds, cold), append(inits, init)
		if warm == nil {
			warm = in
		} else {
			in.stop()
		}
	}
	defer warm.stop()
	fg.cold, fg.init = median(colds), median(inits)

	// Warm the connections to the slow receiver, then time the batches.
	if _, _, err := warm.invoke(ctx, webhookEvent(f.name+"-warm", 10, 0, slow.URL(), 1)); err != nil {
		return nil, err
	}
	var ds []time.Duration
	for i := range o.reps {
		resp, d, err := warm.invoke(ctx, webhookEvent(fmt.Sprintf("%s-b10-%d", f.name, i), 10, 0, slow.URL(), 1))
		if err != nil {
			return nil, err
		}
		if len(resp.BatchItemFailures) > 0 {
			return nil, fmt.Errorf("%s: %d failures in a clean batch", f.name, len(resp.BatchItemFailures))
		}
		ds = append(ds, d)
	}
	fg.batch10 = median(ds)
	resp, d, err := warm.invoke(ctx, webhookEvent(f.name+"-b100", 100, 0, slow.URL(), 1))
	if err != nil {
		return nil, err
	}
	if len(resp.BatchItemFailures) > 0 {
		return nil, fmt.Errorf("%s: %d failures in a clean batch of 100", f.name, len(resp.BatchItemFailures))
	}
	fg.batch100 = d
	if fg.rssKB, err = warm.peakRSS(); err != nil {
		return nil, err
	}

	// Honesty: three records fail; each must be POSTed and reported.
	before := slow.count.Load()
	ev := webhookEvent(f.name+"-part", 10, 3, slow.URL(), 1)
	resp, _, err = warm.invoke(ctx, ev)
	if err != nil {
		return nil, err
	}
	fg.sent = int(slow.count.Load() - before)
	fg.failuresGot = len(resp.BatchItemFailures)
	want := map[string]bool{ev.Records[0].MessageId: true, ev.Records[1].MessageId: true, ev.Records[2].MessageId: true}
	fg.failuresOK = fg.sent == 10 && fg.failuresGot == 3
	for _, it := range resp.BatchItemFailures {
		fg.failuresOK = fg.failuresOK && want[it.ItemIdentifier]
	}
	return fg, nil
}
