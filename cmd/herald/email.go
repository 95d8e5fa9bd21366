package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/feedback"
)

// The template's outputs that name the log groups `email events` reads
// (template.yaml, Outputs).
const (
	outputFeedbackLogGroup = "FeedbackFunctionLogGroupName"
	outputDeliverLogGroup  = "DeliverFunctionLogGroupName"
)

// Logs Insights' result shapes (CloudWatch Logs GetQueryResults).
const (
	// insightsTimeLayout is how Logs Insights returns @timestamp: UTC,
	// milliseconds, no zone.
	insightsTimeLayout = "2006-01-02 15:04:05.000"
	// insightsArrayPrefix starts the fields Logs Insights makes of the
	// elements of the JSON array recipient_domains: recipient_domains.0, .1, …
	insightsArrayPrefix = "recipient_domains."
	// insightsLimit is the most results one query returns; a notification
	// has far fewer events. StartQuery's limit is 1–10,000 (default 1,000).
	insightsLimit = 1000
)

// msgEmailEvent is the message of the feedback function's log lines
// (internal/feedback, "The log line").
const msgEmailEvent = "email_event"

// logsQueryAPI is the part of the CloudWatch Logs API `email events` calls.
type logsQueryAPI interface {
	StartQuery(ctx context.Context, in *cloudwatchlogs.StartQueryInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.StartQueryOutput, error)
	GetQueryResults(ctx context.Context, in *cloudwatchlogs.GetQueryResultsInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.GetQueryResultsOutput, error)
	StopQuery(ctx context.Context, in *cloudwatchlogs.StopQueryInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.StopQueryOutput, error)
}

var _ logsQueryAPI = (*cloudwatchlogs.Client)(nil)

// emailEvent is one log line about a notification: an SES event the
// feedback function logged, or a delivery attempt of the deliver function.
type emailEvent struct {
	Time time.Time `json:"time"`
	// Source is "ses" for the feedback function's lines (an SES event),
	// "herald" for the deliver function's (a delivery attempt).
	Source           string   `json:"source"`
	EventType        string   `json:"event_type,omitempty"`
	Outcome          string   `json:"outcome,omitempty"`
	BounceType       string   `json:"bounce_type,omitempty"`
	BounceSubType    string   `json:"bounce_sub_type,omitempty"`
	RecipientDomains []string `json:"recipient_domains,omitempty"`
	Template         string   `json:"template,omitempty"`
	Error            string   `json:"error,omitempty"`
	Message          string   `json:"msg,omitempty"`
}

// eventsQuery is one `email events` lookup.
type eventsQuery struct {
	logGroups  []string
	id         string
	start, end time.Time
	// poll is the pause between GetQueryResults calls; wait bounds the
	// whole query, after which it is stopped (StopQuery).
	poll, wait time.Duration
	// progress is told the query's status while it runs.
	progress func(types.QueryStatus)
}

func newEmailCmd(e *env, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "email",
		Short: "Look into herald's email after SES accepted it",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newEmailEventsCmd(e, g))
	return cmd
}

func newEmailEventsCmd(e *env, g *globals) *cobra.Command {
	var logGroups []string
	var since string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "events ID",
		Short: "List what SES did with a notification's email (sends, deliveries, bounces, complaints)",
		Long: `Run a CloudWatch Logs Insights query for notification ID on the feedback
function's log group (one line per SES event: send, delivery, bounce,
complaint, reject, rendering_failure, delivery_delay) and the deliver
function's (its delivery attempts), and print them oldest first: time,
source (ses or herald), event type or attempt outcome, bounce type, the
recipients' domains (never their addresses) and any error.

The log groups come from --log-group (repeatable), else from the stack's
FeedbackFunctionLogGroupName and DeliverFunctionLogGroupName outputs
(--stack). --since bounds how far back (default 24h; 90m, 36h, 7d). The
query waits at most --wait for Logs Insights, then is stopped.

IAM: logs:StartQuery on the log groups, logs:GetQueryResults, logs:StopQuery
(and cloudformation:DescribeStacks for --stack). Logs Insights bills by the
data scanned: a shorter --since costs less.`,
		Example: `  herald email events --stack herald evt_2KWPBgLlAfxdpx2AI54pPJ85f4W
  herald email events --since 7d --log-group /aws/lambda/herald-feedback evt_1 --json`,
		Args: exactArgs(1, "one notification ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if strings.TrimSpace(args[0]) == "" {
				return usagef("the notification ID is empty")
			}
			back, err := parseAge(since)
			if err != nil || back <= 0 {
				return usagef("--since %q: want a duration above zero such as 90m, 36h or 7d", since)
			}
			if wait <= 0 {
				return usagef("--wait %s: want a duration above zero", wait)
			}
			groups, err := resolveLogGroups(ctx, g, logGroups, g.stackOutputs)
			if err != nil {
				return err
			}
			cfg, err := g.awsConfig(ctx)
			if err != nil {
				return err
			}
			end := e.now()
			q := eventsQuery{
				logGroups: groups, id: args[0], start: end.Add(-back), end: end, poll: time.Second, wait: wait,
				progress: progressOnce(e),
			}
			events, err := q.run(ctx, cloudwatchlogs.NewFromConfig(cfg))
			if err != nil {
				return err
			}
			if len(events) == 0 {
				fmt.Fprintf(e.stderr, "herald: no log lines for %s in the last %s in %s\n", strconv.Quote(args[0]), since, strings.Join(groups, ", "))
			}
			return writeEvents(e, g, events)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&logGroups, "log-group", nil, "a log group to query (repeatable; default: the stack's feedback and deliver log groups)")
	f.StringVar(&since, "since", "24h", "how far back to look (90m, 36h, 7d)")
	f.DurationVar(&wait, "wait", 2*time.Minute, "how long to wait for the query to complete")
	return cmd
}

// progressOnce tells the user once that the query is still running.
func progressOnce(e *env) func(types.QueryStatus) {
	told := false
	return func(s types.QueryStatus) {
		if !told {
			told = true
			fmt.Fprintf(e.stderr, "herald: Logs Insights query %s…\n", strings.ToLower(string(s)))
		}
	}
}

// resolveLogGroups returns --log-group, else --stack's feedback and
// deliver log group outputs (those it has); neither is a usage error.
func resolveLogGroups(ctx context.Context, g *globals, flags []string, outputs func(context.Context) (map[string]string, error)) ([]string, error) {
	if len(flags) > 0 {
		return flags, nil
	}
	if g.stack == "" {
		return nil, usagef("no log group: give --log-group NAME or --stack NAME")
	}
	out, err := outputs(ctx)
	if err != nil {
		return nil, err
	}
	var groups []string
	for _, k := range []string{outputFeedbackLogGroup, outputDeliverLogGroup} {
		if v := out[k]; v != "" {
			groups = append(groups, v)
		}
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("stack %s has no %s / %s outputs: is it a herald stack with email feedback?", g.stack, outputFeedbackLogGroup, outputDeliverLogGroup)
	}
	return groups, nil
}

// run starts feedback.EventsQuery(q.id) on q's log groups and time range
// (StartQuery takes Unix seconds), polls GetQueryResults every q.poll until
// the status is Complete, and returns the events oldest first. A query
// that fails, is cancelled or times out is an error; one still running
// after q.wait is stopped (StopQuery) and is an error.
func (q eventsQuery) run(ctx context.Context, api logsQueryAPI) ([]emailEvent, error) {
	started, err := api.StartQuery(ctx, &cloudwatchlogs.StartQueryInput{
		LogGroupNames: q.logGroups,
		QueryString:   aws.String(feedback.EventsQuery(q.id)),
		StartTime:     aws.Int64(q.start.Unix()),
		EndTime:       aws.Int64(q.end.Unix()),
		Limit:         aws.Int32(insightsLimit),
	})
	if err != nil {
		return nil, fmt.Errorf("start Logs Insights query on %s: %w", strings.Join(q.logGroups, ", "), err)
	}
	id := aws.ToString(started.QueryId)
	waitCtx, cancel := context.WithTimeout(ctx, q.wait)
	defer cancel()
	for {
		out, err := api.GetQueryResults(waitCtx, &cloudwatchlogs.GetQueryResultsInput{QueryId: aws.String(id)})
		if err != nil {
			if waitCtx.Err() != nil && ctx.Err() == nil {
				return nil, q.stop(ctx, api, id)
			}
			return nil, fmt.Errorf("Logs Insights query %s: %w", id, err)
		}
		switch out.Status {
		case types.QueryStatusComplete:
			return eventsOf(out.Results)
		case types.QueryStatusScheduled, types.QueryStatusRunning:
			if q.progress != nil {
				q.progress(out.Status)
			}
		default: // Failed, Cancelled, Timeout, Unknown
			return nil, fmt.Errorf("Logs Insights query %s ended %s", id, out.Status)
		}
		t := time.NewTimer(q.poll)
		select {
		case <-waitCtx.Done():
			t.Stop()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, q.stop(ctx, api, id)
		case <-t.C:
		}
	}
}

// stop stops query id after q.wait and returns the error that says so.
func (q eventsQuery) stop(ctx context.Context, api logsQueryAPI, id string) error {
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := fmt.Errorf("Logs Insights query %s did not complete within %s (--wait); stopped it", id, q.wait)
	if _, serr := api.StopQuery(stopCtx, &cloudwatchlogs.StopQueryInput{QueryId: aws.String(id)}); serr != nil {
		err = errors.Join(err, fmt.Errorf("stop query %s: %w", id, serr))
	}
	return err
}

// eventsOf reads GetQueryResults' rows (the fields of EventsQuery).
func eventsOf(rows [][]types.ResultField) ([]emailEvent, error) {
	events := make([]emailEvent, 0, len(rows))
	for _, row := range rows {
		var ev emailEvent
		domains := map[int]string{}
		for _, f := range row {
			v := aws.ToString(f.Value)
			switch name := aws.ToString(f.Field); name {
			case "@timestamp":
				t, err := time.ParseInLocation(insightsTimeLayout, v, time.UTC)
				if err != nil {
					return nil, fmt.Errorf("Logs Insights result: @timestamp %q: %w", v, err)
				}
				ev.Time = t
			case "msg":
				ev.Message = v
			case "outcome":
				ev.Outcome = v
			case "event_type":
				ev.EventType = v
			case "bounce_type":
				ev.BounceType = v
			case "bounce_sub_type":
				ev.BounceSubType = v
			case "template":
				ev.Template = v
			case "error":
				ev.Error = v
			default:
				if i, ok := strings.CutPrefix(name, insightsArrayPrefix); ok {
					if n, err := strconv.Atoi(i); err == nil && v != "" {
						domains[n] = v
					}
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(domains)) {
			ev.RecipientDomains = append(ev.RecipientDomains, domains[k])
		}
		ev.Source = "herald"
		if ev.Message == msgEmailEvent {
			ev.Source = "ses"
		}
		events = append(events, ev)
	}
	return events, nil
}

func writeEvents(e *env, g *globals, events []emailEvent) error {
	if g.json {
		return writeJSON(e.stdout, events)
	}
	rows := make([][]string, len(events))
	for i, ev := range events {
		what := ev.EventType
		if ev.Source != "ses" {
			what = ev.Outcome
		}
		bounce := ev.BounceType
		if ev.BounceSubType != "" {
			bounce += "/" + ev.BounceSubType
		}
		detail := ev.Error
		if detail == "" && ev.Template != "" {
			detail = "template " + ev.Template
		}
		rows[i] = []string{ev.Time.UTC().Format("2006-01-02T15:04:05.000Z"), ev.Source, what, bounce, strings.Join(ev.RecipientDomains, ","), detail}
	}
	return table(e.stdout, []string{"TIME", "SOURCE", "EVENT", "BOUNCE", "RECIPIENT DOMAINS", "DETAIL"}, rows)
}
