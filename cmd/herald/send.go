package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/tracecontext"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// input is one notification read from a file or a line of standard input.
type input struct {
	source string // file name, or "-:LINE"
	body   []byte
}

// readInputs reads each FILE as one JSON notification, and "-" as NDJSON
// on stdin: one notification per line, blank lines skipped.
func readInputs(args []string, stdin io.Reader) ([]input, error) {
	var out []input
	for _, a := range args {
		if a != "-" {
			b, err := os.ReadFile(a)
			if err != nil {
				return nil, err
			}
			out = append(out, input{source: a, body: bytes.TrimSpace(b)})
			continue
		}
		sc := bufio.NewScanner(stdin)
		// A notification can be close to the 1 MiB SQS message limit.
		sc.Buffer(make([]byte, 64<<10), notification.SQSMaxMessageBytes+1)
		n := 1
		for ; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			out = append(out, input{source: "-:" + strconv.Itoa(n), body: bytes.Clone(line)})
		}
		if errors.Is(sc.Err(), bufio.ErrTooLong) {
			return nil, fmt.Errorf("-:%d: line longer than %d bytes, the SQS maximum message size; nothing sent", n, notification.SQSMaxMessageBytes)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
	}
	return out, nil
}

// problems returns "SOURCE: field: message" lines for an invalid body.
func problems(source string, err error) []string {
	var inv *notification.InvalidError
	if !errors.As(err, &inv) {
		return []string{source + ": " + err.Error()}
	}
	out := make([]string, len(inv.Problems))
	for i, p := range inv.Problems {
		out[i] = source + ": " + p.String()
	}
	return out
}

// Outcomes of a notification in send's output.
const (
	outcomeSent    = "sent"
	outcomeNotSent = "not_sent"
	// outcomeUnknown: the send's answer cannot be trusted and SQS may hold
	// it (producer.ErrOutcomeUnknown); its error says how to check.
	outcomeUnknown = "unknown"
	outcomeInvalid = "invalid"
	outcomeDryRun  = "valid_dry_run"
)

// sendRow is one line of send's output.
type sendRow struct {
	Source    string `json:"source"`
	ID        string `json:"id,omitempty"`
	Outcome   string `json:"outcome"`
	MessageID string `json:"sqs_message_id,omitempty"`
	Error     string `json:"error,omitempty"`
	Invalid   bool   `json:"invalid,omitempty"`
}

func newSendCmd(e *env, g *globals) *cobra.Command {
	var group, traceParent string
	var skipInvalid, dryRun bool
	cmd := &cobra.Command{
		Use:   "send FILE... | -",
		Short: "Validate notifications and send them to their channels' queues",
		Long: `Send notifications to their channels' queues (each notification to the queue
of its channel: email, webhook, chat or event, an event for a tenant's
registered endpoints; a stack with one queue of every channel gets them all
there, but only the event queue fans events out). Each FILE holds one JSON notification; "-" reads NDJSON
(one notification per line) from standard input.

Every notification is first checked by the deliver function's own validator;
an invalid one is reported with its field path and, unless --skip-invalid,
nothing at all is sent. An id that an earlier notification of the same
send has is invalid too (SQS drops the repeat on a FIFO queue, receivers on
any queue). Valid ones go out with SendMessageBatch, 10 per call;
entries SQS fails on its side are retried, then reported. On a FIFO queue the
message group is --group and the deduplication id is the notification id.
Prints each notification id with its SQS message id, NOT SENT and why, or
UNKNOWN when the answer cannot be trusted (a wrong MD5, no answer before the
deadline, a cut connection): SQS may hold it, and the row names the queue and
how to check before sending it again. --json gives each an outcome: sent,
not_sent, unknown, invalid or valid_dry_run.

With --traceparent (or the TRACEPARENT variable a traced process hands its
children), each message carries that trace context (a traceparent message
attribute and SQS's AWSTraceHeader) for the deliver function's spans to link
to (docs/operations.md, "Follow one notification").`,
		Example: `  herald send testdata/cases/email-multi.json
  jq -c '.[]' batch.json | herald send -
  herald send --dry-run my-notification.json     # validate only`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("send needs FILE arguments, or - for NDJSON on standard input")
			}
			if traceParent == "" && e.getenv != nil {
				traceParent = e.getenv(tracecontext.EnvTraceParent)
			}
			if traceParent != "" {
				if _, err := tracecontext.FromTraceParent(cmd.Context(), traceParent); err != nil {
					return usagef("--traceparent: %v", err)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			inputs, err := readInputs(args, e.stdin)
			if err != nil {
				return err
			}
			var rows []sendRow
			var valid []input
			all := make([][]byte, len(inputs))
			for i, in := range inputs {
				all[i] = in.body
			}
			bad := map[int]producer.Invalid{}
			var inv *producer.InvalidError
			if errors.As(producer.Validate(all), &inv) {
				for _, it := range inv.Items {
					bad[it.Index] = it
				}
			}
			invalid := len(bad)
			for i, in := range inputs {
				if it, ok := bad[i]; ok {
					for _, p := range problems(in.source, it.Err) {
						fmt.Fprintln(e.stderr, "invalid:", p)
					}
					rows = append(rows, sendRow{Source: in.source, ID: it.ID, Outcome: outcomeInvalid, Error: it.Err.Error(), Invalid: true})
					continue
				}
				valid = append(valid, in)
			}
			if invalid > 0 && !skipInvalid {
				if dryRun {
					fmt.Fprintf(e.stderr, "%d of %d notifications invalid: nothing sent (a dry run)\n", invalid, len(inputs))
				} else {
					fmt.Fprintf(e.stderr, "%d of %d notifications invalid: nothing sent (--skip-invalid sends the valid ones)\n", invalid, len(inputs))
				}
				if g.json {
					_ = writeJSON(e.stdout, rows)
				}
				return errReported
			}
			if dryRun {
				for _, in := range valid {
					rows = append(rows, sendRow{Source: in.source, ID: notification.IDOf(in.body), Outcome: outcomeDryRun})
				}
				fmt.Fprintf(e.stderr, "dry run: %d valid, %d invalid, nothing sent\n", len(valid), invalid)
				return finishSend(e, g, rows, invalid > 0)
			}
			q, err := g.resolve(cmd.Context(), e, true, false)
			if err != nil {
				return err
			}
			byChannel, shared := q.producer()
			for _, p := range q.pairs {
				if producer.IsFIFO(p.url) && group == "" {
					return usagef("%s is a FIFO queue: give --group", p.url)
				}
			}
			cfg, err := g.awsConfig(cmd.Context())
			if err != nil {
				return err
			}
			bodies := make([][]byte, len(valid))
			for i, in := range valid {
				bodies[i] = in.body
			}
			// Each notification to its channel's queue (else the queue of
			// every channel).
			client := &producer.Client{SQS: sqs.NewFromConfig(cfg), Queues: byChannel, QueueURL: shared, GroupID: group}
			ctx := cmd.Context()
			if traceParent != "" {
				ctx, _ = tracecontext.FromTraceParent(ctx, traceParent) // checked in Args
			}
			results, sendErr := client.SendBodies(ctx, bodies)
			if results == nil && sendErr != nil {
				return sendErr
			}
			failed := invalid > 0
			for i, r := range results {
				row := sendRow{Source: valid[i].source, ID: r.ID, Outcome: outcomeSent, MessageID: r.MessageID}
				switch {
				case errors.Is(r.Err, producer.ErrOutcomeUnknown):
					row.Outcome, row.Error, failed = outcomeUnknown, r.Err.Error(), true
				case r.Err != nil:
					row.Outcome, row.Error, failed = outcomeNotSent, r.Err.Error(), true
				}
				rows = append(rows, row)
			}
			return finishSend(e, g, rows, failed)
		},
	}
	cmd.Flags().StringVar(&group, "group", "", "message group id (FIFO queues only; required there)")
	cmd.Flags().BoolVar(&skipInvalid, "skip-invalid", false, "send the valid notifications even when some are invalid (exit status 1 still)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate only; send nothing")
	cmd.Flags().StringVar(&traceParent, "traceparent", "", "W3C trace context the messages carry (default $"+tracecontext.EnvTraceParent+")")
	return cmd
}

func finishSend(e *env, g *globals, rows []sendRow, failed bool) error {
	if g.json {
		if err := writeJSON(e.stdout, rows); err != nil {
			return err
		}
	} else {
		cells := make([][]string, 0, len(rows))
		for _, r := range rows {
			status := r.MessageID
			switch r.Outcome {
			case outcomeInvalid:
				status = "invalid, not sent"
			case outcomeNotSent:
				status = "NOT SENT: " + r.Error
			case outcomeUnknown:
				status = "UNKNOWN, maybe sent: " + r.Error
			case outcomeDryRun:
				status = "valid (dry run)"
			}
			cells = append(cells, []string{r.Source, r.ID, status})
		}
		if err := table(e.stdout, []string{"SOURCE", "ID", "SQS MESSAGE ID"}, cells); err != nil {
			return err
		}
	}
	if failed {
		return errReported
	}
	return nil
}
