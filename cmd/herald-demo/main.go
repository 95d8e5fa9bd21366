// Command herald-demo runs herald's delivery function against the local
// stack (LocalStack's SQS and the SES v2 emulator) through the local event
// source mapping, sends the sample notifications in testdata/cases plus a
// webhook whose receiver fails twice and one aimed at the EC2 instance
// metadata endpoint (blocked, see docs/security.md), and prints each
// notification's fate. When the local stack has the event queue, it also
// registers three endpoints of a tenant of its own in the endpoint store
// (the local stack's DynamoDB table and KMS key), sends events for that
// tenant through the fan-out function and prints, per event, its fan-out
// and each endpoint's delivery (docs/endpoints-guide.md).
//
// It expects the local stack to be up and provisioned (make local-up) and
// the standard AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_SESV2 variables to point
// at it; `make demo` does all of that. It exits 1 when a notification's fate
// differs from testdata/cases/expected.tsv.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/localrunner"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/testkit/chattest"
	"github.com/heraldhq/herald/notification"
)

// demoSecret signs the demo's webhooks; it is not a secret anywhere else.
const demoSecret = "whsec_ZGVtby1zaWduaW5nLWtleS1mb3ItaGVyYWxkLWxvY2Fs"

// The demo's delivery settings, in process and for a deployed stack
// (demoEnv): quick retries, and webhooks and chat webhooks to its receivers
// on 127.0.0.1, which they may not reach by default (docs/security.md).
const (
	demoBackoffBase    = time.Second
	demoBackoffCap     = 30 * time.Second
	demoWebhookTimeout = 5 * time.Second
	demoAllowCIDR      = "127.0.0.1/32"
	demoChatHost       = "127.0.0.1"
)

func main() {
	cases := flag.String("cases", "testdata/cases", "folder of sample notifications with expected.tsv")
	queue := flag.String("queue", "herald", "prefix of the channels' queues: PREFIX-email, PREFIX-webhook, PREFIX-chat, each with its PREFIX-CHANNEL-dlq (provision.py)")
	dlq := flag.String("dlq", "", "unused; kept for old command lines (each channel queue has its dead-letter queue)")
	logPath := flag.String("log", ".local/demo-deliver.log", "where the delivery function's JSON log lines go")
	timeout := flag.Duration("timeout", 90*time.Second, "how long to wait for every notification's fate")
	stack := flag.String("stack", "", "run through this stack deployed into the local stack (make deploy-local) instead of the in-process runner; -queue and -dlq are then its own")
	flag.Parse()
	if err := run(os.Stdout, *cases, *queue, *dlq, *logPath, *stack, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "herald-demo:", err)
		os.Exit(1)
	}
}

// sample is one notification the demo sends.
type sample struct {
	name     string // file name, or a label for the demo's own
	body     string
	expected string // from expected.tsv
	msgID    string // SQS message id
}

// run sends the samples of casesDir and the demo's own through the
// channels' queues PREFIX-CHANNEL (queueName is the prefix), or through the
// deployed stack stackName, and writes each one's fate, the dead letters
// and the mail sent to stdout. It fails when a queue, its redrive policy or
// the samples cannot be read, and when a fate is not the expected one.
func run(stdout io.Writer, casesDir, queueName, dlqName, logPath, stackName string, timeout time.Duration) error {
	if err := localOnly(os.Getenv); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	started := time.Now()

	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	sqsClient := sqs.NewFromConfig(awsCfg)
	// In process: each channel's queue and dead-letter queue, as the
	// stack has them. Through a deployed stack: its queue of every channel.
	var queues []redrive.Queue
	var stack *deployedStack
	var eventQueue *redrive.Queue
	if stackName != "" {
		if stack, err = openStack(ctx, awsCfg, stackName); err != nil {
			return err
		}
		queues = []redrive.Queue{{URL: stack.queueURL, DeadLetterURL: stack.dlqURL}}
		dlqName = path.Base(stack.dlqURL)
	} else {
		prefix := queueName
		for _, c := range demoChannels() {
			q := redrive.Queue{Channel: c}
			if q.URL, err = lookupQueue(ctx, sqsClient, prefix+"-"+string(c)); err != nil {
				return err
			}
			if q.DeadLetterURL, err = lookupQueue(ctx, sqsClient, prefix+"-"+string(c)+"-dlq"); err != nil {
				return err
			}
			queues = append(queues, q)
		}
		// The registered endpoints part needs the event queue (the local
		// stack has it; the demo's wire-fake tests may leave it out).
		if u, err := lookupQueue(ctx, sqsClient, prefix+"-"+string(notification.ChannelEvent)); err == nil {
			eventQueue = &redrive.Queue{Channel: notification.ChannelEvent, URL: u}
			if eventQueue.DeadLetterURL, err = lookupQueue(ctx, sqsClient, prefix+"-"+string(notification.ChannelEvent)+"-dlq"); err != nil {
				return err
			}
		}
	}
	maxReceive, err := localenv.MaxReceiveCount(ctx, sqsClient, queues[0].URL)
	if err != nil {
		return err
	}
	// A clean slate, so the fates printed are this run's.
	purge := queues
	if eventQueue != nil {
		purge = append(slices.Clip(queues), *eventQueue)
	}
	for _, q := range purge {
		for _, u := range []string{q.URL, q.DeadLetterURL} {
			if _, err := sqsClient.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(u)}); err != nil {
				return fmt.Errorf("purge %s: %w", u, err)
			}
		}
	}

	// The flaky receiver answers 503 twice, then 200; every other path 200.
	receiver := localenv.NewReceiver(func(path string, attempt int) int {
		if path == "/demo/flaky" && attempt <= 2 {
			return 503
		}
		return 200
	})
	defer receiver.Close()

	// Local Slack, Discord and Teams receivers stand in for the services;
	// the chat samples' URLs are pointed at them.
	chatReceivers := chattest.NewReceivers()
	defer chatReceivers.Close()
	samples, err := loadSamples(casesDir, receiver.URL(), chatReceivers.Route)
	if err != nil {
		return err
	}
	samples = append(samples, &sample{
		name:     "webhook, fails twice",
		body:     fmt.Sprintf(`{"version":1,"id":"demo-flaky-1","channel":"webhook","webhook":{"url":"%s/demo/flaky","event_type":"demo.flaky","payload":{"n":1}}}`, receiver.URL()),
		expected: "delivered on receive 3",
	}, &sample{
		// The demo allows its receiver's 127.0.0.1; every other private or
		// special-purpose address stays blocked.
		name:     "webhook to 169.254.169.254",
		body:     `{"version":1,"id":"demo-imds-1","channel":"webhook","webhook":{"url":"https://169.254.169.254/latest/meta-data/iam/security-credentials/","event_type":"demo.ssrf","payload":{"n":1}}}`,
		expected: "dead-lettered, reason: 169.254.169.254 is a link-local address",
	})

	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	fates := newFates()
	// DEBUG: every record's line then names its SQS message id, which
	// the fates are keyed on (at INFO a delivered record's line is compact).
	logger := slog.New(slog.NewJSONHandler(io.MultiWriter(logFile, fates), &slog.HandlerOptions{Level: slog.LevelDebug}))

	cfg := config.Deliver{
		Queues: queues, MaxReceiveCount: maxReceive,
		BackoffBase: demoBackoffBase, BackoffCap: demoBackoffCap, Concurrency: 10,
		WebhookSecret: demoSecret, WebhookTimeout: demoWebhookTimeout,
		WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix(demoAllowCIDR)},
		ChatAllowHosts:    []string{demoChatHost},
	}
	var ed *endpointsDemo
	if eventQueue != nil {
		// Deliveries to registered endpoints are read from the store.
		ed, cfg.StoreTable = newEndpointsDemo(started), demoStoreTable
	}
	p, err := app.NewDeliver(cfg, awsCfg, app.DeliverOptions{WebhookTLS: receiver.TLSConfig(), Logger: logger})
	if err != nil {
		return err
	}

	if stack != nil {
		return runDeployed(ctx, stdout, stack, samples, receiver, sqsClient, dlqName, maxReceive, logPath, started, timeout)
	}
	fmt.Fprintf(stdout, "herald demo: %d notifications → %s-{%s} (maxReceiveCount %d, backoff 1 s doubling)\n", len(samples), queueName, channelList(), maxReceive)
	if ed != nil {
		fmt.Fprintf(stdout, "             %d events for %d registered endpoints → %s-%s, fanned out to their queues\n", len(ed.events), len(ed.endpoints), queueName, notification.ChannelEvent)
	}
	fmt.Fprintln(stdout)
	for _, s := range samples {
		// Each to its channel's queue, as producers send; a body naming
		// no known channel (a poison sample) to the first channel's.
		out, err := sqsClient.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueFor(queues, s.body)), MessageBody: aws.String(s.body)})
		if err != nil {
			return fmt.Errorf("send %s: %w", s.name, err)
		}
		s.msgID = aws.ToString(out.MessageId)
	}
	var handlers []func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	runQueues := slices.Clip(queues)
	if ed != nil {
		if _, err := ed.register(ctx, awsCfg, demoStoreTable, demoEndpointKey, receiver.URL(), chatReceivers.Slack.URL()); err != nil {
			return err
		}
		fp, err := app.NewFanout(config.Fanout{
			EventQueue: *eventQueue, WebhookQueueURL: queueOf(queues, notification.ChannelWebhook), ChatQueueURL: queueOf(queues, notification.ChannelChat),
			StoreTable: demoStoreTable, MaxReceiveCount: maxReceive, BackoffBase: demoBackoffBase, BackoffCap: demoBackoffCap,
			Concurrency: 10, Window: time.Hour,
		}, awsCfg, logger)
		if err != nil {
			return err
		}
		if err := ed.send(ctx, sqsClient, eventQueue.URL); err != nil {
			return err
		}
		runQueues = append(runQueues, *eventQueue)
		handlers = append(handlers, fp.Handle)
	}

	// One local event source mapping per queue, as the stack has.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, len(runQueues))
	for i, q := range runQueues {
		handle := p.Handle
		if i >= len(queues) {
			handle = handlers[i-len(queues)]
		}
		runner := &localrunner.Runner{
			SQS: sqsClient, QueueURL: q.URL, Handler: handle,
			BatchSize: 10, WaitTime: time.Second, FunctionTimeout: 20 * time.Second,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		}
		go func() { done <- runner.Run(runCtx) }()
	}
	deadline := time.After(timeout)
wait:
	for !fates.allFinal(samples) || ed != nil && !ed.allFinal(fates) {
		select {
		case <-deadline:
			break wait
		case <-time.After(200 * time.Millisecond):
		}
	}
	stop()
	for range runQueues {
		if err := <-done; err != nil {
			return err
		}
	}

	return finish(ctx, stdout, samples, fates, ed, receiver, sqsClient, queues, logPath, started)
}

// queueOf is the URL of channel c's queue.
func queueOf(queues []redrive.Queue, c notification.Channel) string {
	for _, q := range queues {
		if q.Channel == c {
			return q.URL
		}
	}
	return ""
}

// channelList is "email,webhook,chat": demoChannels.
func channelList() string {
	chans := demoChannels()
	names := make([]string, len(chans))
	for i, c := range chans {
		names[i] = string(c)
	}
	return strings.Join(names, ",")
}

// demoChannels are the channels the demo sends: notification.Channels but
// the event channel, whose fan-out the demo does not run (an event becomes
// deliveries to registered endpoints: docs/endpoints.md).
func demoChannels() []notification.Channel {
	var out []notification.Channel
	for _, c := range notification.Channels {
		if c != notification.ChannelEvent {
			out = append(out, c)
		}
	}
	return out
}

// queueFor returns the URL of the queue of body's channel, else the first
// queue's.
func queueFor(queues []redrive.Queue, body string) string {
	var head struct {
		Channel notification.Channel `json:"channel"`
	}
	_ = json.Unmarshal([]byte(body), &head)
	for _, q := range queues {
		if q.Channel == head.Channel {
			return q.URL
		}
	}
	return queues[0].URL
}

// finish prints each notification's fate, the dead letters and the mail the
// run sent, and fails when a fate is not the expected one.
func finish(ctx context.Context, stdout io.Writer, samples []*sample, fates *fates, ed *endpointsDemo, receiver *localenv.Receiver, sqsClient *sqs.Client, queues []redrive.Queue, logPath string, started time.Time) error {
	ok := report(stdout, samples, fates)
	if ed != nil {
		ok = ed.report(stdout, fates, receiver.Requests()) && ok
	}
	var letters []localenv.DeadLetter
	var names []string
	for _, q := range queues {
		dl, err := localenv.ReceiveAll(ctx, sqsClient, q.DeadLetterURL, 5*time.Second)
		if err != nil {
			return err
		}
		letters = append(letters, dl...)
		names = append(names, fmt.Sprintf("%s (%d)", path.Base(q.DeadLetterURL), len(dl)))
	}
	fmt.Fprintf(stdout, "\nDead-letter queues %s hold %d messages; their %s attribute says why:\n", strings.Join(names, ", "), len(letters), redrive.AttrReason)
	deadLetterReport(stdout, samples, letters)
	sesEndpoint := os.Getenv("AWS_ENDPOINT_URL_SESV2")
	if emails, err := localenv.SentEmails(ctx, sesEndpoint); err == nil {
		mine := 0
		for _, m := range emails {
			if m.At >= started.Unix() { // the emulator's "at" is Unix seconds
				mine++
			}
		}
		fmt.Fprintf(stdout, "\nThis run sent %d emails to the SES v2 emulator (it holds %d): open %s/ to read them (JSON at %s/store).\n", mine, len(emails), sesEndpoint, sesEndpoint)
		if os.Getenv("HERALD_LOCAL_STACK_STOPS") == "1" {
			fmt.Fprintln(stdout, "(make demo stops the local stack when it ends: run `make local-up` first to keep it, and the mail, up.)")
		}
	}
	fmt.Fprintf(stdout, "Webhook receiver got %d requests. The function's log lines: %s\n", len(receiver.Requests()), logPath)
	if !ok {
		return fmt.Errorf("some notifications did not meet their expected fate")
	}
	fmt.Fprintln(stdout, "\nEvery notification met its expected fate.")
	return nil
}

func lookupQueue(ctx context.Context, c *sqs.Client, name string) (string, error) {
	out, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return "", fmt.Errorf("queue %s (is the local stack provisioned? run make local-up): %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// loadSamples reads expected.tsv and the samples it lists, pointing their
// webhooks at the local receiver and their chat webhooks, through route,
// at the local chat receivers.
func loadSamples(dir, receiverURL string, route func(string) string) ([]*sample, error) {
	f, err := os.Open(filepath.Join(dir, "expected.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*sample
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		file, expected, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		out = append(out, &sample{
			name:     file,
			body:     route(strings.ReplaceAll(string(body), "https://hooks.example.test", receiverURL)),
			expected: expected,
		})
	}
	return out, sc.Err()
}

// fates collects the functions' log lines by SQS message id, and by
// notification or event id (a delivery the fan-out made is known by its
// id, not by an SQS message id).
type fates struct {
	mu    sync.Mutex
	lines map[string][]map[string]any
	ids   map[string][]map[string]any
}

func newFates() *fates {
	return &fates{lines: map[string][]map[string]any{}, ids: map[string][]map[string]any{}}
}

// Write takes JSON log lines as slog writes them, one per call.
func (f *fates) Write(p []byte) (int, error) {
	var m map[string]any
	if err := json.Unmarshal(p, &m); err == nil {
		f.mu.Lock()
		if id, ok := m["sqs_message_id"].(string); ok {
			f.lines[id] = append(f.lines[id], m)
		}
		if id, ok := m["id"].(string); ok {
			f.ids[id] = append(f.ids[id], m)
		}
		f.mu.Unlock()
	}
	return len(p), nil
}

func (f *fates) history(msgID string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.lines[msgID]...)
}

// byID returns the lines of the notification or event id.
func (f *fates) byID(id string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.ids[id]...)
}

func (f *fates) allFinal(samples []*sample) bool {
	for _, s := range samples {
		h := f.history(s.msgID)
		if len(h) == 0 || !final(h[len(h)-1]) {
			return false
		}
	}
	return true
}

func final(line map[string]any) bool {
	switch line["outcome"] {
	case string(processor.Delivered), string(processor.Dropped), string(processor.DeadLettered):
		return true
	}
	return false
}

// report prints each notification's fate and whether it is the expected one.
func report(w io.Writer, samples []*sample, f *fates) bool {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NOTIFICATION\tFATE\tAS EXPECTED")
	allOK := true
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].name < samples[j].name })
	for _, s := range samples {
		fate, ok := describe(f.history(s.msgID), s.expected)
		mark := "yes"
		if !ok {
			mark, allOK = "NO, expected: "+s.expected, false
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.name, fate, mark)
	}
	tw.Flush()
	return allOK
}

// describe turns a record's log lines into a fate, and checks it against
// the expected outcome's first words.
func describe(h []map[string]any, expected string) (string, bool) {
	if len(h) == 0 {
		return "no outcome yet", false
	}
	var retries, classes []string
	for _, l := range h[:len(h)-1] {
		if l["outcome"] == string(processor.Retry) {
			retries = append(retries, fmt.Sprintf("%vs", l["delay_seconds"]))
			if c := fmt.Sprint(l["error_class"]); !slices.Contains(classes, c) {
				classes = append(classes, c)
			}
		}
	}
	last := h[len(h)-1]
	fate := fmt.Sprint(last["outcome"])
	switch last["outcome"] {
	case string(processor.Delivered):
		fate = fmt.Sprintf("delivered on receive %v", last["receive_count"])
	case string(processor.DeadLettered):
		fate = fmt.Sprintf("dead-lettered (%v)", last["error_class"])
	case string(processor.Dropped):
		fate = "dropped (expired)"
	}
	if len(retries) > 0 {
		fate = "retried " + strings.Join(retries, ", ") + " (" + strings.Join(classes, ", ") + "); " + fate
	}
	want := strings.Trim(strings.Fields(expected)[0], ",.")
	got := map[string]string{
		string(processor.Delivered): "delivered", string(processor.Dropped): "dropped",
		string(processor.DeadLettered): "dead-lettered",
	}[fmt.Sprint(last["outcome"])]
	ok := got == want
	switch words := strings.Fields(expected); {
	case strings.HasPrefix(expected, "delivered on receive"):
		ok = ok && fmt.Sprint(last["receive_count"]) == words[3]
	case strings.Contains(expected, "reason names "):
		ok = ok && strings.Contains(fmt.Sprint(last["error"]), words[len(words)-1])
	case strings.Contains(expected, "reason: "):
		_, named, _ := strings.Cut(expected, "reason: ")
		ok = ok && strings.Contains(fmt.Sprint(last["error"]), named)
	}
	return fate, ok
}

// localOnly refuses endpoints that are not on this machine: the demo purges
// its queues, so it must never run against an AWS account.
func localOnly(getenv func(string) string) error {
	const how = "the demo runs against the local stack only: start it with `make local-up` and\n" +
		"  " + localenv.SourceEnvFile + "\nor run `make demo`, which does both"
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SESV2"} {
		v := getenv(k)
		if v == "" {
			return fmt.Errorf("%s is not set; %s", k, how)
		}
		if !isLoopback(v) {
			return fmt.Errorf("%s points at %s, not this machine (loopback); %s", k, redactURL(v), how)
		}
	}
	if v := getenv("AWS_ENDPOINT_URL_SQS"); v != "" && !isLoopback(v) {
		return fmt.Errorf("AWS_ENDPOINT_URL_SQS points at %s, not this machine (loopback); %s", redactURL(v), how)
	}
	return nil
}

// isLoopback reports whether rawURL's host is localhost or a loopback address.
func isLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// redactURL keeps a URL's scheme and host only.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "(not a URL)"
	}
	return u.Scheme + "://" + u.Host
}

// deadLetterReport prints one line per dead letter, named as the fate table
// names the sample (its file name or label), sorted by that name, with
// herald's whole reason on the line below.
func deadLetterReport(w io.Writer, samples []*sample, letters []localenv.DeadLetter) {
	byMsgID := map[string]string{}
	for _, s := range samples {
		byMsgID[s.msgID] = s.name
	}
	type row struct{ name, class, reason string }
	var rows []row
	for _, l := range letters {
		var r redrive.Reason
		if err := json.Unmarshal([]byte(l.Attributes[redrive.AttrReason]), &r); err != nil {
			rows = append(rows, row{name: "(message " + l.MessageID + ")", class: "no reason", reason: "moved by the redrive policy"})
			continue
		}
		name, ok := byMsgID[r.SourceMessageID]
		if !ok {
			name = "(not this run's) " + r.NotificationID
		}
		rows = append(rows, row{name: name, class: string(r.ErrorClass), reason: r.Error})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	for _, r := range rows {
		fmt.Fprintf(w, "  %-28s %s\n      %s\n", r.name, r.class, r.reason)
	}
}
