package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/localrunner"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/producer"
)

func newRunCmd(e *env, g *globals) *cobra.Command {
	var batchSize int
	var wait, functionTimeout time.Duration
	var localReceivers bool
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the deliver function locally against the queues (a local event source mapping each)",
		Long: `Long-poll every queue (each channel's, and the queue of every channel when one
is given), each with its own local event source mapping, and hand each batch to the same handler the
deliver Lambda runs, with the same HERALD_* configuration (docs/configuration.md),
deleting what it settled and leaving retries to their visibility timeout, as the
SQS event source mapping with ReportBatchItemFailures does.

Prints one line per record: time, notification id, channel, outcome, receive
count, retry delay and reason. --json prints the function's own JSON log lines.
Ctrl-C finishes the batch in flight and exits; a second Ctrl-C stops at once
(the records in flight come back after the queue's visibility timeout).

Webhooks go to public https URLs only, unless HERALD_WEBHOOK_ALLOW_HTTP and
HERALD_WEBHOOK_ALLOW_CIDRS say otherwise (docs/security.md); --local-receivers
lets them reach receivers on this machine (plain http, loopback) in one step.
At start, herald run prints what it allows.

When the event queue (HERALD_EVENT_QUEUE_URL and HERALD_EVENT_DLQ_URL), the
webhook and chat queues and HERALD_STORE_TABLE are named, as the local stack's
env file does, it runs the fan-out function on the event queue too: each event
becomes one delivery per subscribed endpoint on those queues (one line per
event: id, fan-out, outcome, deliveries enqueued; docs/endpoints.md).

The local stack: make local-up, then ` + localenv.SourceEnvFile + `
(or make run, which does both).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkRunFlags(batchSize, wait, functionTimeout); err != nil {
				return err
			}
			ctx := cmd.Context()
			q, err := g.resolve(ctx, e, true, true)
			if err != nil {
				return err
			}
			// The queues as resolved (--stack's outputs, the flags, or the
			// environment) are the configuration's.
			resolved := map[string]string{}
			for _, p := range q.pairs {
				if p.channel == "" {
					resolved[config.EnvSharedQueueURL], resolved[config.EnvDeadLetterQueueURL] = p.url, p.dlq
					continue
				}
				resolved[producer.QueueURLEnv(p.channel)], resolved[producer.DeadLetterQueueURLEnv(p.channel)] = p.url, p.dlq
			}
			getenv := func(k string) string {
				if strings.HasSuffix(k, "_QUEUE_URL") || strings.HasSuffix(k, "_DLQ_URL") {
					return resolved[k]
				}
				return e.getenv(k)
			}
			if localReceivers {
				getenv = withLocalReceivers(getenv)
			}
			cfg, err := config.LoadDeliver(getenv)
			if err != nil {
				return fmt.Errorf("configuration: %w", err)
			}
			awsCfg, err := g.awsConfig(ctx)
			if err != nil {
				return err
			}
			var out io.Writer = &recordLines{w: e.stdout}
			if g.json {
				out = e.stdout
			}
			logger := slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: cfg.LogLevel}))
			// The deliver function's tracing (HERALD_TRACING), here a
			// usage error when it cannot start.
			tcfg, err := tracing.LoadConfig(getenv)
			if err != nil {
				return usagef("%v", err)
			}
			tcfg.ServiceName = "herald-run"
			traces, err := tracing.New(ctx, tcfg, tracing.Options{Credentials: awsCfg.Credentials, Region: awsCfg.Region})
			if err != nil {
				return err
			}
			defer func() { _ = traces.Shutdown(context.Background()) }()
			p, err := app.NewDeliverContext(ctx, cfg, awsCfg, app.DeliverOptions{Logger: logger, Tracing: traces})
			if err != nil {
				return err
			}
			handle := traces.Handler(p.Handle, logger)
			if err := app.CheckQueues(ctx, cfg, awsCfg, 0); err != nil {
				return err
			}
			client := sqs.NewFromConfig(awsCfg)
			// One local event source mapping per queue, as the stack has.
			var runners []*localrunner.Runner
			var names []string
			for _, dq := range cfg.AllQueues() {
				runners = append(runners, &localrunner.Runner{
					SQS: client, QueueURL: dq.URL, Handler: handle,
					BatchSize: batchSize, WaitTime: wait, FunctionTimeout: functionTimeout,
					Region: awsCfg.Region,
					Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
				})
				names = append(names, dq.URL)
			}
			// The fan-out function too, when the event queue, the delivery
			// queues and the table are named (the local stack's env file
			// names them): events become deliveries on the queues above.
			if fcfg, ferr := config.LoadFanout(getenv); ferr == nil {
				fp, err := app.NewFanout(fcfg, awsCfg, logger)
				if err != nil {
					return err
				}
				runners = append(runners, &localrunner.Runner{
					SQS: client, QueueURL: fcfg.EventQueue.URL, Handler: fp.Handle,
					BatchSize: batchSize, WaitTime: wait, FunctionTimeout: functionTimeout,
					Region: awsCfg.Region,
					Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
				})
				names = append(names, fcfg.EventQueue.URL+" (fan-out)")
			}
			fmt.Fprintf(e.stderr, "herald run: %s\n  queues %s (from %s)\n  SQS %s, SES v2 %s\n  webhooks: %s\n  Ctrl-C to stop\n",
				"polling", strings.Join(names, ", "), q.source, endpointOf(e.getenv, "SQS"), endpointOf(e.getenv, "SESV2"), webhookPolicy(cfg))
			errs := make([]error, len(runners))
			var wg sync.WaitGroup
			for i, r := range runners {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = runLoop(ctx, r, e.stderr)
				}()
			}
			wg.Wait()
			fmt.Fprintln(e.stderr, "herald run: stopped")
			return errors.Join(errs...)
		},
	}
	cmd.Flags().IntVar(&batchSize, "batch-size", 10, "most records per invocation (1–10)")
	cmd.Flags().DurationVar(&wait, "wait", time.Second, "long-poll wait of each receive (up to 20s)")
	cmd.Flags().DurationVar(&functionTimeout, "function-timeout", 30*time.Second, "each invocation's deadline, as the Lambda function's timeout")
	cmd.Flags().BoolVar(&localReceivers, "local-receivers", false,
		"let webhooks reach receivers on this machine: HERALD_WEBHOOK_ALLOW_HTTP=true and "+strings.Join(prefixStrings(outbound.LoopbackPrefixes), ",")+" added to HERALD_WEBHOOK_ALLOW_CIDRS; for chat webhooks "+strings.Join(loopbackHosts, ",")+" added to HERALD_CHAT_ALLOW_HOSTS")
	return cmd
}

// runLoop polls until ctx is done. A batch in flight when ctx ends is
// finished: the invocations run under a context ctx's end does not cancel.
func runLoop(ctx context.Context, r *localrunner.Runner, stderr io.Writer) error {
	invoke := context.WithoutCancel(ctx)
	failures := 0
	for ctx.Err() == nil {
		if _, err := r.Poll(invoke); err != nil {
			failures++
			fmt.Fprintf(stderr, "herald run: %v\n", err)
			if failures >= 30 {
				return fmt.Errorf("giving up after %d failed polls: %w", failures, err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		failures = 0
	}
	return nil
}

// endpointOf names where the SDK sends a service's calls: the standard
// endpoint variables, without any user information, path or query.
// withLocalReceivers is getenv with plain http allowed and the loopback
// networks added to HERALD_WEBHOOK_ALLOW_CIDRS (--local-receivers).
func withLocalReceivers(getenv func(string) string) func(string) string {
	return func(k string) string {
		switch k {
		case "HERALD_WEBHOOK_ALLOW_HTTP":
			return "true"
		case "HERALD_WEBHOOK_ALLOW_CIDRS":
			return strings.Join(append(prefixStrings(outbound.LoopbackPrefixes), getenv(k)), ",")
		case "HERALD_CHAT_ALLOW_HOSTS": // chat webhooks: local stand-ins for the services' hosts
			return strings.Join(append(slices.Clone(loopbackHosts), getenv(k)), ",")
		}
		return getenv(k)
	}
}

// loopbackHosts are the loopback addresses as chat hosts
// (HERALD_CHAT_ALLOW_HOSTS): the URLs of receivers on this machine name them.
var loopbackHosts = []string{"127.0.0.1", "::1"}

// webhookPolicy says which webhook URLs the configuration lets through,
// in one line for herald run's start.
func webhookPolicy(cfg config.Deliver) string {
	var b strings.Builder
	if cfg.WebhookAllowHTTP {
		b.WriteString("https and plain http")
	} else {
		b.WriteString("https only")
	}
	b.WriteString("; private, loopback and other special-purpose addresses blocked (docs/security.md)")
	if len(cfg.WebhookAllowCIDRs) > 0 {
		fmt.Fprintf(&b, " but for %s (HERALD_WEBHOOK_ALLOW_CIDRS)", strings.Join(prefixStrings(cfg.WebhookAllowCIDRs), ", "))
	}
	if cfg.WebhookAllowHTTP && allowsAll(cfg.WebhookAllowCIDRs, outbound.LoopbackPrefixes) {
		b.WriteString("; receivers on this machine allowed (http://127.0.0.1:PORT/...)")
	} else {
		b.WriteString("; --local-receivers allows receivers on this machine")
	}
	return b.String()
}

// allowsAll reports whether every prefix of want lies inside one of allow.
func allowsAll(allow, want []netip.Prefix) bool {
	for _, w := range want {
		if !slices.ContainsFunc(allow, func(a netip.Prefix) bool { return a.Bits() <= w.Bits() && a.Contains(w.Addr()) }) {
			return false
		}
	}
	return true
}

func prefixStrings(ps []netip.Prefix) []string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return s
}

func endpointOf(getenv func(string) string, service string) string {
	for _, k := range []string{"AWS_ENDPOINT_URL_" + service, "AWS_ENDPOINT_URL"} {
		if v := getenv(k); v != "" {
			if u, err := url.Parse(v); err == nil && u.Host != "" {
				return u.Scheme + "://" + u.Host
			}
			return "(" + k + " is not a URL)"
		}
	}
	return "AWS"
}

// recordLines turns the processor's JSON log lines into one readable line
// per record.
type recordLines struct {
	mu sync.Mutex
	w  io.Writer
}

func (r *recordLines) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for line := range bytes.Lines(p) {
		if s := formatRecord(line); s != "" {
			fmt.Fprintln(r.w, s)
		}
	}
	return len(p), nil
}

// formatRecord formats one JSON log line: a record's line
// (processor.LineNotification) as
// "15:04:05  ID  CHANNEL  OUTCOME  receive N  [in Ds]  [CLASS: ERROR]", a
// batch's line (processor.LineBatch) as one such line for each
// notification it lists as delivered on its first receive
// (processor.Listed), "" (not printed) when it lists none, any other line
// as its level and message.
func formatRecord(line []byte) string {
	var m struct {
		Delivered    []processor.Listed `json:"delivered"`
		Time         time.Time          `json:"time"`
		Level        string             `json:"level"`
		Msg          string             `json:"msg"`
		ID           string             `json:"id"`
		Channel      string             `json:"channel"`
		Outcome      string             `json:"outcome"`
		ReceiveCount int                `json:"receive_count"`
		Delay        *int               `json:"delay_seconds"`
		Class        string             `json:"error_class"`
		Error        string             `json:"error"`
		SQSError     string             `json:"sqs_error"`
		Fanout       string             `json:"fanout"`
		Total        int                `json:"total"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return strings.TrimSpace(string(line))
	}
	if m.Msg == processor.LineBatch {
		// The batch's metrics (EMF) are for CloudWatch, not a record
		// (--json shows them); the clean path's deliveries are records.
		rows := make([]string, len(m.Delivered))
		for i, d := range m.Delivered {
			rows[i] = fmt.Sprintf("%s  %-24s %-8s %-14s receive 1", m.Time.Local().Format(time.TimeOnly), d.ID, cell(m.Channel), m.Outcome)
		}
		return strings.Join(rows, "\n")
	}
	if m.Msg == fanout.LineFanout {
		return fmt.Sprintf("%s  %-24s %-8s %-14s %d deliveries enqueued", m.Time.Local().Format(time.TimeOnly), m.ID, "fan-out", m.Fanout, m.Total)
	}
	if m.Msg != processor.LineNotification {
		return fmt.Sprintf("%s  %s  %s", m.Time.Local().Format(time.TimeOnly), m.Level, m.Msg)
	}
	id := m.ID
	if id == "" {
		id = "(no id)"
	}
	s := fmt.Sprintf("%s  %-24s %-8s %-14s receive %d", m.Time.Local().Format(time.TimeOnly), id, cell(m.Channel), m.Outcome, m.ReceiveCount)
	if m.Delay != nil {
		s += fmt.Sprintf("  in %ds", *m.Delay)
	}
	if m.Class != "" {
		s += "  " + m.Class + ": " + m.Error
	}
	if m.SQSError != "" {
		s += "  (SQS: " + m.SQSError + ")"
	}
	return s
}

// checkRunFlags checks herald run's flags against the ranges of the SQS
// event source mapping and of Lambda: a usage error names the flag.
func checkRunFlags(batchSize int, wait, functionTimeout time.Duration) error {
	switch {
	case batchSize < 1 || batchSize > 10:
		return usagef("--batch-size %d: want 1 to 10 (a ReceiveMessage's most messages)", batchSize)
	case wait < 0 || wait > 20*time.Second:
		return usagef("--wait %s: want 0s to 20s (the SQS long-poll range)", wait)
	case functionTimeout <= 0 || functionTimeout > 15*time.Minute:
		return usagef("--function-timeout %s: want more than 0s and at most 15m (the Lambda range)", functionTimeout)
	}
	return nil
}
