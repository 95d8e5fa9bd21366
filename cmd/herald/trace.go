package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/deadletter"
	"github.com/heraldhq/herald/internal/processor"
)

// lambdaLogGroupPrefix starts the log group Lambda writes a function's
// output to when its LoggingConfig names none: /aws/lambda/<function>.
const lambdaLogGroupPrefix = "/aws/lambda/"

// traceLogsAPI is the part of the CloudWatch Logs API `herald trace` calls.
type traceLogsAPI interface {
	FilterLogEvents(ctx context.Context, in *cloudwatchlogs.FilterLogEventsInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.FilterLogEventsOutput, error)
}

var _ traceLogsAPI = (*cloudwatchlogs.Client)(nil)

// traceStep is one log line about the notification: a record's outcome
// (source "herald", the deliver function's "notification" line) or an SES
// event (source "ses", the feedback function's "email_event" line).
type traceStep struct {
	Time   time.Time `json:"time"`
	Source string    `json:"source"`
	// Queue is the channel of the queue the record was received from.
	Queue        string  `json:"queue,omitempty"`
	Channel      string  `json:"channel,omitempty"`
	ReceiveCount int     `json:"receive_count,omitempty"`
	Outcome      string  `json:"outcome,omitempty"`
	ErrorClass   string  `json:"error_class,omitempty"`
	Error        string  `json:"error,omitempty"`
	DelaySeconds *int    `json:"delay_seconds,omitempty"`
	DurationMS   float64 `json:"duration_ms,omitempty"`
	MovedTo      string  `json:"moved_to,omitempty"`
	DuplicateOf  string  `json:"duplicate_of,omitempty"`
	EventType    string  `json:"event_type,omitempty"`
	BounceType   string  `json:"bounce_type,omitempty"`
	// TraceID is the line's trace id, when the function writes one
	// (OpenTelemetry tracing): the seam to the trace of this step.
	TraceID string `json:"trace_id,omitempty"`
}

// traceDeadLetter is a dead letter of the notification found in a
// dead-letter queue now.
type traceDeadLetter struct {
	Queue      string    `json:"queue"`
	ErrorClass string    `json:"error_class,omitempty"`
	Error      string    `json:"error,omitempty"`
	Attempts   int       `json:"attempts,omitempty"`
	FailedAt   time.Time `json:"failed_at,omitzero"`
	MovedBy    string    `json:"moved_by"`
}

// traceReport is what `herald trace` prints.
type traceReport struct {
	ID    string      `json:"id"`
	Steps []traceStep `json:"steps"`
	// RetryDelays are the delays of the retries, in seconds, in order.
	RetryDelays []int `json:"retry_delays_seconds"`
	// Final is the notification's fate as far as the lines tell:
	// delivered, dead_lettered, dropped, duplicate, moved, retrying,
	// failed (back after the visibility timeout), or unknown (no line).
	Final string `json:"final"`
	// Summary says Final in words.
	Summary string `json:"summary"`
	// DeadLetters are the notification's letters in the dead-letter queues
	// now; nil when the queues were not read (DeadLettersNote says why).
	DeadLetters     []traceDeadLetter `json:"dead_letters"`
	DeadLettersNote string            `json:"dead_letters_note,omitempty"`
	// Sources says where the lines came from.
	Sources []string `json:"sources"`
}

// traceLine is the part of a function's JSON log line trace reads: the
// deliver function's "notification" line and the list of deliveries of its
// "batch" line (internal/processor/log.go), and the feedback function's
// "email_event" line (internal/feedback).
type traceLine struct {
	Delivered     []processor.Listed `json:"delivered"`
	Time          time.Time          `json:"time"`
	Timestamp     time.Time          `json:"timestamp"`
	Msg           string             `json:"msg"`
	ID            string             `json:"id"`
	EventID       string             `json:"event_id"`
	Channel       string             `json:"channel"`
	QueueChannel  string             `json:"queue_channel"`
	Outcome       string             `json:"outcome"`
	ReceiveCount  int                `json:"receive_count"`
	ErrorClass    string             `json:"error_class"`
	Error         string             `json:"error"`
	Delay         *int               `json:"delay_seconds"`
	DurationMS    float64            `json:"duration_ms"`
	MovedTo       string             `json:"moved_to"`
	DuplicateOf   string             `json:"duplicate_of"`
	EventType     string             `json:"event_type"`
	BounceType    string             `json:"bounce_type"`
	BounceSubType string             `json:"bounce_sub_type"`
	TraceID       string             `json:"trace_id"`
}

// stepOf reads one log line: the step it is about id, or false when it is
// not a line about id (another notification, a batch line that does not
// list it, not JSON). A line matches by its notification id, or by its
// event id (an event fanned out to many notifications); a batch line by an
// id it lists as delivered on its first receive (processor.Listed). stamp
// is the log event's time, used when the line carries none (the deployed
// functions leave the time to CloudWatch).
func stepOf(line []byte, id string, stamp time.Time) (traceStep, bool) {
	var l traceLine
	if json.Unmarshal(line, &l) != nil {
		return traceStep{}, false
	}
	if l.Msg == processor.LineBatch {
		i := slices.IndexFunc(l.Delivered, func(d processor.Listed) bool { return d.ID == id })
		if i < 0 {
			return traceStep{}, false
		}
		l.Msg, l.ID, l.ReceiveCount = processor.LineNotification, id, 1
		l.DurationMS, l.TraceID = l.Delivered[i].DurationMS, ""
	}
	if l.ID != id && l.EventID != id {
		return traceStep{}, false
	}
	t := l.Time
	for _, c := range []time.Time{l.Timestamp, stamp} {
		if t.IsZero() {
			t = c
		}
	}
	s := traceStep{Time: t.UTC(), TraceID: l.TraceID}
	switch l.Msg {
	case processor.LineNotification:
		s.Source = "herald"
		s.Channel, s.Queue = l.Channel, l.Channel
		if l.QueueChannel != "" {
			s.Queue = l.QueueChannel
		}
		s.ReceiveCount, s.Outcome, s.ErrorClass, s.Error = l.ReceiveCount, l.Outcome, l.ErrorClass, l.Error
		s.DelaySeconds, s.DurationMS, s.MovedTo, s.DuplicateOf = l.Delay, l.DurationMS, l.MovedTo, l.DuplicateOf
	case msgEmailEvent:
		s.Source = "ses"
		s.EventType, s.BounceType, s.Error = l.EventType, l.BounceType, l.Error
		if l.BounceSubType != "" {
			s.BounceType += "/" + l.BounceSubType
		}
	default:
		return traceStep{}, false
	}
	return s, true
}

// buildTrace orders steps by time (a record's lines by receive count when
// they share a time) and says what they mean.
func buildTrace(id string, steps []traceStep) traceReport {
	slices.SortStableFunc(steps, func(a, b traceStep) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return a.ReceiveCount - b.ReceiveCount
	})
	r := traceReport{ID: id, Steps: steps, RetryDelays: []int{}}
	var last *traceStep
	var settled *traceStep
	for i := range steps {
		s := &steps[i]
		if s.Source != "herald" {
			continue
		}
		last = s
		if s.Outcome == string(processor.Retry) && s.DelaySeconds != nil {
			r.RetryDelays = append(r.RetryDelays, *s.DelaySeconds)
		}
		switch processor.Outcome(s.Outcome) {
		case processor.Delivered, processor.DeadLettered, processor.Dropped:
			settled = s
		}
	}
	retries := ""
	if n := len(r.RetryDelays); n > 0 {
		d := make([]string, n)
		for i, v := range r.RetryDelays {
			d[i] = (time.Duration(v) * time.Second).String()
		}
		retries = fmt.Sprintf(" after %d retr%s (%s)", n, map[bool]string{true: "y", false: "ies"}[n == 1], strings.Join(d, ", "))
	}
	switch {
	case last == nil:
		r.Final, r.Summary = "unknown", "no line of the deliver function names it: not received yet, sent elsewhere, or older than --since"
	case settled != nil:
		r.Final = settled.Outcome
		switch processor.Outcome(settled.Outcome) {
		case processor.Delivered:
			r.Summary = fmt.Sprintf("delivered on receive %d%s", settled.ReceiveCount, retries)
		case processor.DeadLettered:
			r.Summary = fmt.Sprintf("dead-lettered on receive %d (%s)%s", settled.ReceiveCount, settled.ErrorClass, retries)
		default:
			r.Summary = fmt.Sprintf("dropped on receive %d (%s): not delivered, not retried", settled.ReceiveCount, settled.ErrorClass)
		}
	case last.Outcome == string(processor.Retry):
		r.Final = "retrying"
		r.Summary = fmt.Sprintf("retrying (%s): receive %d comes after %s", last.ErrorClass, last.ReceiveCount+1, last.Time.Add(time.Duration(derefInt(last.DelaySeconds))*time.Second).Format(time.RFC3339))
	case last.Outcome == string(processor.Duplicate):
		r.Final, r.Summary = "duplicate", "settled as a duplicate: another copy was delivered (its line says when) or is being delivered"
	case last.Outcome == string(processor.Moved):
		r.Final, r.Summary = "moved", fmt.Sprintf("moved to the %s queue, where it waits for its channel", last.MovedTo)
	default: // failed, skipped
		r.Final, r.Summary = "failed", fmt.Sprintf("%s on receive %d: it comes back after the queue's visibility timeout", last.Outcome, last.ReceiveCount)
	}
	return r
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// filterLogs returns the lines of group about id between start and end
// (FilterLogEvents, every page). The filter pattern is the id as a quoted
// term, which CloudWatch Logs matches as an exact phrase; each line is
// checked again (stepOf), as a term also matches inside other fields, and
// LocalStack ignores filter patterns.
func filterLogs(ctx context.Context, api traceLogsAPI, group, id string, start, end time.Time) ([]traceStep, error) {
	in := &cloudwatchlogs.FilterLogEventsInput{
		LogGroupName:  aws.String(group),
		FilterPattern: aws.String(strconv.Quote(id)),
		StartTime:     aws.Int64(start.UnixMilli()),
		EndTime:       aws.Int64(end.UnixMilli()),
	}
	var steps []traceStep
	for {
		out, err := api.FilterLogEvents(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("filter log group %s: %w", group, err)
		}
		for _, ev := range out.Events {
			if s, ok := stepOf([]byte(aws.ToString(ev.Message)), id, time.UnixMilli(aws.ToInt64(ev.Timestamp))); ok {
				steps = append(steps, s)
			}
		}
		if out.NextToken == nil || aws.ToString(out.NextToken) == aws.ToString(in.NextToken) {
			return steps, nil
		}
		in.NextToken = out.NextToken
	}
}

// readLogFile returns the lines of r about id: a file of the deliver
// function's JSON log lines (herald run --json).
func readLogFile(r io.Reader, id string) ([]traceStep, error) {
	var steps []traceStep
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		if s, ok := stepOf(sc.Bytes(), id, time.Time{}); ok {
			steps = append(steps, s)
		}
	}
	return steps, sc.Err()
}

// traceGroups are the log groups to read: --log-group, else the stack's
// deliver and feedback log groups. fallback is the group Lambda writes
// when LoggingConfig names none (/aws/lambda/<DeliverFunctionName>), read
// when the deliver group does not exist (LocalStack).
type traceGroups struct {
	groups   []string
	fallback string
}

func resolveTraceGroups(flags []string, stack string, outputs map[string]string) (traceGroups, error) {
	if len(flags) > 0 {
		return traceGroups{groups: flags}, nil
	}
	var tg traceGroups
	for _, k := range []string{outputDeliverLogGroup, outputFeedbackLogGroup} {
		if v := outputs[k]; v != "" {
			tg.groups = append(tg.groups, v)
		}
	}
	if fn := outputs[outputDeliverFunction]; fn != "" {
		tg.fallback = lambdaLogGroupPrefix + fn
	}
	if outputs[outputDeliverLogGroup] == "" {
		return tg, fmt.Errorf("stack %s has no %s output: is it a herald stack?", stack, outputDeliverLogGroup)
	}
	return tg, nil
}

// read reads each group; a group that does not exist is skipped. When
// the deliver function's has no line about id (LocalStack creates it but
// writes /aws/lambda/<function>) or does not exist, tg.fallback is read
// instead: one more call, which in AWS finds no such group. It returns the
// steps and the groups read.
func (tg traceGroups) read(ctx context.Context, api traceLogsAPI, id string, start, end time.Time) ([]traceStep, []string, error) {
	var steps []traceStep
	var read []string
	for i, g := range tg.groups {
		s, err := filterLogs(ctx, api, g, id, start, end)
		if (isNotFound(err) || (err == nil && len(s) == 0)) && i == 0 && tg.fallback != "" {
			fs, ferr := filterLogs(ctx, api, tg.fallback, id, start, end)
			if ferr == nil {
				g, s, err = tg.fallback, fs, nil
			} else if !isNotFound(ferr) {
				err = ferr
			}
		}
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		steps, read = append(steps, s...), append(read, g)
	}
	return steps, read, nil
}

// isNotFound reports whether err says a log group does not exist.
func isNotFound(err error) bool {
	var nf *logstypes.ResourceNotFoundException
	return errors.As(err, &nf)
}

func newTraceCmd(e *env, g *globals) *cobra.Command {
	var logGroups []string
	var logFile, since string
	var noDLQ bool
	var hold time.Duration
	cmd := &cobra.Command{
		Use:   "trace ID",
		Short: "Follow one notification: its receives, attempts, retries, outcome and dead letter",
		Long: `Print the path of notification ID (or of the notifications of event ID):
one row per line the deliver function logged about it — time, queue,
receive count, outcome, error class, retry delay, error — and for email the
SES events the feedback function logged; then its fate (delivered on
receive N after retries of 1m, 2m; dead-lettered; retrying; …) and whether
it is in a dead-letter queue now, with herald's reason.

The lines come from CloudWatch Logs (FilterLogEvents): --log-group
(repeatable), else the stack's DeliverFunctionLogGroupName and
FeedbackFunctionLogGroupName outputs (--stack; in LocalStack, which writes
/aws/lambda/<function>, that group). Locally, --log-file reads a file of the
function's JSON lines: herald run --json | tee .local/run.jsonl.
--since bounds how far back (default 24h; 90m, 7d): FilterLogEvents scans
(and bills) every event of that time, so keep it short.

The dead-letter queues are read as herald dlq show reads them (the stack's or
HERALD_*_DLQ_URL; nothing is consumed); --no-dlq skips them.

When the lines carry a trace id (OpenTelemetry tracing), each row shows it.

IAM: logs:FilterLogEvents on the log groups, cloudformation:DescribeStacks
(--stack), and what herald dlq show needs.`,
		Example: `  herald trace --stack herald ntf_01HZY3K6W9Q4T2M8B5C7D1E0FA
  herald trace --stack herald --since 7d --json ntf_1
  herald run --json | tee .local/run.jsonl     # then, in another terminal:
  herald trace --log-file .local/run.jsonl ntf_1`,
		Args: exactArgs(1, "one notification ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id := args[0]
			if strings.TrimSpace(id) == "" {
				return usagef("the notification ID is empty")
			}
			back, err := parseAge(since)
			if err != nil || back <= 0 {
				return usagef("--since %q: want a duration above zero such as 90m, 36h or 7d", since)
			}
			if logFile != "" && (len(logGroups) > 0 || g.stack != "") {
				return usagef("--log-file reads a local file: give it without --log-group and --stack")
			}
			if logFile == "" && len(logGroups) == 0 && g.stack == "" {
				return usagef("no log to read: give --stack NAME, --log-group NAME or --log-file FILE (herald run --json's lines)")
			}
			var steps []traceStep
			var sources []string
			if logFile != "" {
				f, err := os.Open(logFile)
				if err != nil {
					return err
				}
				steps, err = readLogFile(f, id)
				_ = f.Close()
				if err != nil {
					return fmt.Errorf("read %s: %w", logFile, err)
				}
				sources = []string{logFile}
			} else {
				var outputs map[string]string
				if len(logGroups) == 0 {
					if outputs, err = g.stackOutputs(ctx); err != nil {
						return err
					}
				}
				tg, err := resolveTraceGroups(logGroups, g.stack, outputs)
				if err != nil {
					return err
				}
				cfg, err := g.awsConfig(ctx)
				if err != nil {
					return err
				}
				end := e.now()
				if steps, sources, err = tg.read(ctx, cloudwatchlogs.NewFromConfig(cfg), id, end.Add(-back), end); err != nil {
					return err
				}
			}
			r := buildTrace(id, steps)
			r.Sources = sources
			if noDLQ {
				r.DeadLettersNote = "not read (--no-dlq)"
			} else if err := traceDeadLetters(ctx, e, g, id, hold, &r); err != nil {
				return err
			}
			return writeTrace(e, g, r)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&logGroups, "log-group", nil, "a log group to read (repeatable; default: the stack's deliver and feedback log groups)")
	f.StringVar(&logFile, "log-file", "", "read the deliver function's JSON lines from this file instead (herald run --json)")
	f.StringVar(&since, "since", "24h", "how far back to look (90m, 36h, 7d)")
	f.BoolVar(&noDLQ, "no-dlq", false, "do not read the dead-letter queues")
	f.DurationVar(&hold, "hold", deadletter.DefaultHold, "visibility timeout of the dead letters while reading (made 0 again right after)")
	return cmd
}

// traceDeadLetters reads the dead-letter queues (as dlq show does) and
// adds the notification's letters to r. No dead-letter queue known is a
// note, not an error.
func traceDeadLetters(ctx context.Context, e *env, g *globals, id string, hold time.Duration, r *traceReport) error {
	client, scans, err := scanDLQ(ctx, e, g, false, hold)
	var ue usageError
	if errors.As(err, &ue) {
		r.DeadLettersNote = "not read: " + ue.Error()
		return nil
	}
	if err != nil {
		return err
	}
	relErr := release(context.WithoutCancel(ctx), client, scans)
	filter := deadletter.Filter{IDs: []string{id}}
	r.DeadLetters = []traceDeadLetter{}
	for _, s := range scans {
		for i := range s.letters {
			l := &s.letters[i]
			if !filter.Match(l, e.now()) {
				continue
			}
			d := traceDeadLetter{Queue: s.pair.dlq, ErrorClass: l.Class, Attempts: l.Attempts, FailedAt: l.FailedAt, MovedBy: l.MovedBy}
			if l.Reason != nil {
				d.Error = l.Reason.Error
			}
			r.DeadLetters = append(r.DeadLetters, d)
		}
		if s.partial {
			r.DeadLettersNote = "a FIFO dead-letter queue was read only in part"
		}
	}
	return relErr
}

func writeTrace(e *env, g *globals, r traceReport) error {
	if g.json {
		return writeJSON(e.stdout, r)
	}
	w := e.stdout
	fmt.Fprintf(w, "notification %s (from %s)\n", printable(r.ID), strings.Join(r.Sources, ", "))
	if len(r.Steps) > 0 {
		rows := make([][]string, len(r.Steps))
		withTrace := slices.ContainsFunc(r.Steps, func(s traceStep) bool { return s.TraceID != "" })
		for i, s := range r.Steps {
			what, receive, delay, detail := s.Outcome, "", "", s.Error
			if s.ReceiveCount > 0 {
				receive = strconv.Itoa(s.ReceiveCount)
			}
			if s.DelaySeconds != nil {
				delay = (time.Duration(*s.DelaySeconds) * time.Second).String()
			}
			class := s.ErrorClass
			if s.Source == "ses" {
				what, class = s.EventType, s.BounceType
			}
			if s.MovedTo != "" {
				detail = "moved to the " + s.MovedTo + " queue"
			}
			if s.DuplicateOf != "" {
				detail = "duplicate of SQS message " + s.DuplicateOf
			}
			if detail == "" && s.DurationMS > 0 {
				detail = strconv.FormatFloat(s.DurationMS, 'f', -1, 64) + " ms"
			}
			rows[i] = []string{s.Time.Format("2006-01-02T15:04:05.000Z"), s.Source, s.Queue, receive, what, class, delay, detail}
			if withTrace {
				rows[i] = append(rows[i], s.TraceID)
			}
		}
		header := []string{"TIME", "SOURCE", "QUEUE", "RECEIVE", "OUTCOME", "CLASS", "RETRY IN", "DETAIL"}
		if withTrace {
			header = append(header, "TRACE ID")
		}
		if err := table(w, header, rows); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "fate: %s\n", r.Summary)
	switch {
	case r.DeadLetters == nil:
		fmt.Fprintf(w, "dead-letter queues: %s\n", r.DeadLettersNote)
	case len(r.DeadLetters) == 0:
		fmt.Fprintln(w, "dead-letter queues: not in any")
	default:
		for _, d := range r.DeadLetters {
			failed := "-"
			if !d.FailedAt.IsZero() {
				failed = d.FailedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "dead-letter queue %s now: %s after %s (failed at %s, moved by %s): %s\n",
				d.Queue, cell(d.ErrorClass), plural(d.Attempts, "attempt"), failed, d.MovedBy, cell(d.Error))
		}
	}
	return nil
}

// plural is n and noun, with an s unless n is 1 ("1 attempt", "2 attempts").
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
