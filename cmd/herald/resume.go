package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/pause"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// outputDeliverFunction is the template's output that names the deliver
// function (template.yaml, Outputs).
const outputDeliverFunction = "DeliverFunctionName"

// resumeRow is one event source mapping in resume's output.
type resumeRow struct {
	UUID           string `json:"uuid"`
	EventSourceARN string `json:"event_source_arn"`
	// State is the mapping's state after the update (before it, with
	// --dry-run).
	State string `json:"state"`
	// Action is "enabled", "already enabled", or with --dry-run "would
	// enable".
	Action string `json:"action"`
}

// The actions of resumeRow.
const (
	actionEnabled        = "enabled"
	actionAlreadyEnabled = "already enabled"
	actionWouldEnable    = "would enable"
)

func newResumeCmd(e *env, g *globals) *cobra.Command {
	var function, channel string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Turn delivery back on: enable the deliver function's paused event source mapping",
		Long: `Enable the event source mappings of the deliver function that are disabled,
as the deliver function leaves them when it pauses itself instead of draining
the queue (a setup error such as an unreadable signing secret;
docs/reliability.md, "When herald cannot deliver anything"). Fix the cause
first, or the function pauses again at its next cold start. A mapping
already enabled (or enabling) is left as it is. This is what the paused
function's log line suggests (aws lambda update-event-source-mapping --uuid
UUID --enabled), found by function name.

Each channel has its own queue and mapping, and a channel that cannot deliver
(its setting or secret, its queue's settings, SES sending paused) pauses
alone: --channel email|webhook|chat resumes that channel's mapping only (its
queue from the stack's outputs, else HERALD_<CHANNEL>_QUEUE_URL); without
it every paused mapping is resumed.

The function comes from --function (name or ARN), else from the stack's
DeliverFunctionName output (--stack). --dry-run lists the mappings and what
would be done, and changes nothing.

Prints one row per mapping: UUID, source queue ARN, state, action. IAM:
lambda:ListEventSourceMappings, lambda:UpdateEventSourceMapping.`,
		Example: `  herald resume --stack herald --dry-run
  herald resume --stack herald --channel webhook
  herald resume --function herald-DeliverFunction-AbC123`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			fn, err := resolveFunction(ctx, g, function, g.stackOutputs)
			if err != nil {
				return err
			}
			queueURL := ""
			if channel != "" {
				if !notification.Channel(channel).Known() {
					return usagef("--channel %q: want email, webhook or chat", channel)
				}
				q, err := g.resolve(ctx, e, false, false)
				if err != nil {
					return err
				}
				byChannel, _ := q.producer()
				if queueURL = byChannel[notification.Channel(channel)]; queueURL == "" {
					return usagef("no %s queue: give --stack NAME or %s", channel, producer.QueueURLEnv(notification.Channel(channel)))
				}
			}
			cfg, err := g.awsConfig(ctx)
			if err != nil {
				return err
			}
			rows, err := resume(ctx, lambda.NewFromConfig(cfg), fn, queueURL, dryRun)
			if len(rows) > 0 {
				if werr := writeResume(e, g, rows); werr != nil && err == nil {
					err = werr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&function, "function", "", "the deliver function's name or ARN (default: the stack's DeliverFunctionName output)")
	f.StringVar(&channel, "channel", "", "resume only this channel's mapping: email, webhook or chat (default: every paused mapping)")
	f.BoolVar(&dryRun, "dry-run", false, "show the mappings and what would be done; change nothing")
	return cmd
}

// resolveFunction returns --function, else --stack's DeliverFunctionName
// output; neither is a usage error.
func resolveFunction(ctx context.Context, g *globals, function string, outputs func(context.Context) (map[string]string, error)) (string, error) {
	if function != "" {
		return function, nil
	}
	if g.stack == "" {
		return "", usagef("no deliver function: give --function NAME or --stack NAME")
	}
	out, err := outputs(ctx)
	if err != nil {
		return "", err
	}
	if fn := out[outputDeliverFunction]; fn != "" {
		return fn, nil
	}
	return "", fmt.Errorf("stack %s has no %s output: is it a herald stack?", g.stack, outputDeliverFunction)
}

// resume enables function's disabled event source mappings
// (pause.Resume), only the one from queueURL's queue when it is set, or
// with dryRun only lists them (pause.List).
func resume(ctx context.Context, api pause.MappingAPI, function, queueURL string, dryRun bool) ([]resumeRow, error) {
	before, err := pause.List(ctx, api, function, "")
	if err != nil {
		return nil, err
	}
	var sources []string // the queue ARNs to resume; "" for every one
	if queueURL != "" {
		kept := before[:0]
		for _, m := range before {
			if redrive.QueueKey(m.EventSourceARN) == redrive.QueueKey(queueURL) {
				kept = append(kept, m)
				if !slices.Contains(sources, m.EventSourceARN) {
					sources = append(sources, m.EventSourceARN)
				}
			}
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("%w for function %s from queue %s", pause.ErrNoMapping, function, queueURL)
		}
		before = kept
	} else {
		sources = []string{""}
	}
	if dryRun {
		rows := make([]resumeRow, len(before))
		for i, m := range before {
			rows[i] = resumeRow{UUID: m.UUID, EventSourceARN: m.EventSourceARN, State: m.State, Action: actionWouldEnable}
			if m.Enabled() {
				rows[i].Action = actionAlreadyEnabled
			}
		}
		return rows, nil
	}
	// Which were enabled before, so that the output can tell them apart.
	wasEnabled := make(map[string]bool, len(before))
	for _, m := range before {
		wasEnabled[m.UUID] = m.Enabled()
	}
	var rows []resumeRow
	for _, src := range sources {
		mappings, err := pause.Resume(ctx, api, function, src)
		for _, m := range mappings {
			row := resumeRow{UUID: m.UUID, EventSourceARN: m.EventSourceARN, State: m.State, Action: actionEnabled}
			if wasEnabled[m.UUID] {
				row.Action = actionAlreadyEnabled
			}
			rows = append(rows, row)
		}
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

func writeResume(e *env, g *globals, rows []resumeRow) error {
	if g.json {
		return writeJSON(e.stdout, rows)
	}
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = []string{r.UUID, r.EventSourceARN, r.State, r.Action}
	}
	return table(e.stdout, []string{"UUID", "SOURCE", "STATE", "ACTION"}, cells)
}
