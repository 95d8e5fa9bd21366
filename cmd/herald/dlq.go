package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/deadletter"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

func newDLQCmd(e *env, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "List, read and redrive dead letters",
		Long: `Work with the dead-letter queues: each channel's (email, webhook, chat) and,
while a stack keeps it, the dead-letter queue of the queue of every channel.
Every command reads all of them; redrive sends each letter back to the queue
whose dead-letter queue held it.

Reading never consumes: the dead letters are received with a short visibility
timeout (--hold, 60s) and made visible again (visibility timeout 0) as soon as
they are read, so the queue's count is the same afterwards. Were herald
stopped in between, SQS makes them visible again when the hold ends.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newDLQLsCmd(e, g), newDLQShowCmd(e, g), newDLQRedriveCmd(e, g))
	return cmd
}

// filterFlags are the selection flags of ls and redrive.
type filterFlags struct {
	ids       []string
	class     string
	channel   string
	olderThan string
	tenant    string
	endpoint  string
	since     string
	hold      time.Duration
}

func (f *filterFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.ids, "id", nil, "notification id or dead-letter SQS message id (repeatable)")
	cmd.Flags().StringVar(&f.class, "class", "", "error class, such as webhook_gone; redrive_policy for letters moved without a reason")
	cmd.Flags().StringVar(&f.channel, "channel", "", "email, webhook or chat")
	cmd.Flags().StringVar(&f.olderThan, "older-than", "", "only letters that failed longer ago than this (90m, 36h, 7d)")
	f.addEndpointFlags(cmd)
	cmd.Flags().DurationVar(&f.hold, "hold", deadletter.DefaultHold, "visibility timeout while reading (made 0 again right after)")
}

// addEndpointFlags adds the flags that choose the letters of deliveries to
// registered endpoints (ls, show and redrive).
func (f *filterFlags) addEndpointFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.tenant, "tenant", "", "only letters of deliveries to this tenant's endpoints")
	cmd.Flags().StringVar(&f.endpoint, "endpoint", "", "only letters of deliveries to this registered endpoint (ep_…)")
	cmd.Flags().StringVar(&f.since, "since", "", "only letters that failed at or after this time (RFC 3339, such as 2026-12-04T10:00:00Z) or this long ago (90m, 36h, 7d)")
}

// chooses reports whether a flag that chooses letters for a redrive was
// given (--channel alone chooses too many).
func (f *filterFlags) chooses() bool {
	return len(f.ids) > 0 || f.class != "" || f.olderThan != "" || f.tenant != "" || f.endpoint != "" || f.since != ""
}

// endpointFilter reads --tenant, --endpoint and --since into out, --since
// relative to now.
func (f *filterFlags) endpointFilter(out *deadletter.Filter, now time.Time) error {
	if f.endpoint != "" && !endpoint.ValidID(f.endpoint) {
		return usagef("--endpoint %q: want an endpoint id, ep_ and 26 characters", delivery.Truncate(f.endpoint, 80))
	}
	if f.tenant != "" && !notification.ValidTenant(f.tenant) {
		return usagef("--tenant %q: want a tenant id, 1–%d characters of A-Z a-z 0-9 . _ : -", delivery.Truncate(f.tenant, 80), notification.MaxIDLength)
	}
	out.Tenant, out.Endpoint = f.tenant, f.endpoint
	if f.since != "" {
		if t, err := time.Parse(time.RFC3339Nano, f.since); err == nil {
			out.Since = t
		} else if d, err := parseAge(f.since); err == nil {
			out.Since = now.Add(-d)
		} else {
			return usagef("--since %q: want an RFC 3339 time (2026-12-04T10:00:00Z) or a duration such as 90m, 36h or 7d", delivery.Truncate(f.since, 80))
		}
	}
	return nil
}

func (f *filterFlags) filter(now time.Time) (deadletter.Filter, error) {
	out := deadletter.Filter{IDs: f.ids, Class: f.class, Channel: f.channel}
	if err := f.endpointFilter(&out, now); err != nil {
		return out, err
	}
	if slices.Contains(f.ids, "") {
		return out, usagef("--id is empty")
	}
	if f.olderThan != "" {
		d, err := parseAge(f.olderThan)
		if err != nil {
			return out, usagef("--older-than %v", err)
		}
		out.OlderThan = d
	}
	if f.channel != "" && !notification.Channel(f.channel).Known() {
		return out, usagef("--channel %q: want email, webhook or chat", f.channel)
	}
	return out, checkHold(f.hold)
}

// checkHold checks a --hold: whole seconds of visibility timeout, 1 s to
// 12 h (SQS ChangeMessageVisibility, VisibilityTimeout 0 to 43,200 s; 0
// would leave the letters visible while they are read).
func checkHold(hold time.Duration) error {
	if hold < time.Second || hold > 12*time.Hour {
		return usagef("--hold %s: want 1s to 12h (the SQS visibility timeout range)", hold)
	}
	return nil
}

// scanned is one dead-letter queue, read.
type scanned struct {
	pair    queuePair
	letters []deadletter.Letter
	// partial reports a FIFO dead-letter queue read only in part
	// (deadletter.ErrIncomplete).
	partial bool
}

// scanDLQ resolves the dead-letter queues (each channel's, and the queue of
// every channel's) and reads each; release must be called with what is still
// held. A FIFO dead-letter queue read only in part gets a warning: the
// command works on the letters read and exits 1. needQueue asks for each
// dead-letter queue's own queue as well (redrive sends letters back there).
func scanDLQ(ctx context.Context, e *env, g *globals, needQueue bool, hold time.Duration) (*sqs.Client, []scanned, error) {
	q, err := g.resolve(ctx, e, needQueue, true)
	if err != nil {
		return nil, nil, err
	}
	if needQueue {
		for _, p := range q.withDLQ() {
			switch {
			case p.url == "":
				return nil, nil, usagef("no queue to send the dead letters of %s back to (from %s)", p.dlq, q.source)
			case sameQueue(p.url, p.dlq):
				// A redrive would put each letter back where it is, without
				// herald's attributes: its reason would be lost.
				return nil, nil, usagef("a queue and its dead-letter queue are the same (%s, from %s)", p.url, q.source)
			}
		}
	}
	cfg, err := g.awsConfig(ctx)
	if err != nil {
		return nil, nil, err
	}
	client := sqs.NewFromConfig(cfg)
	var out []scanned
	for _, p := range q.withDLQ() {
		letters, err := deadletter.Scan(ctx, client, p.dlq, hold)
		if errors.Is(err, deadletter.ErrIncomplete) {
			fmt.Fprintf(e.stderr, "herald: warning: %v; what follows covers only the letters read (redriving or deleting them lets the next run read further)\n", err)
			out = append(out, scanned{pair: p, letters: letters, partial: true})
			continue
		}
		if err != nil {
			out = append(out, scanned{pair: p, letters: letters})
			return nil, nil, errors.Join(err, release(context.WithoutCancel(ctx), client, out))
		}
		out = append(out, scanned{pair: p, letters: letters})
	}
	return client, out, nil
}

// release makes every letter of scans visible again (deadletter.Release).
func release(ctx context.Context, client *sqs.Client, scans []scanned) error {
	var errs []error
	for _, s := range scans {
		if err := deadletter.Release(ctx, client, s.pair.dlq, s.letters); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// lettersOf returns the letters of every scan, in queue order, and whether
// any queue was read only in part.
func lettersOf(scans []scanned) ([]deadletter.Letter, bool) {
	var out []deadletter.Letter
	partial := false
	for _, s := range scans {
		out = append(out, s.letters...)
		partial = partial || s.partial
	}
	return out, partial
}

// What dlq prints of a dead letter for people, in bytes: a cell of ls's
// table, a field of show, show's body. Dead letters hold what producers
// and receivers wrote (a body of up to 1 MiB, an error class from an
// attribute anyone could set); a terminal gets a bounded part of each, cut
// on a character boundary and marked "…", and a note says how to see all:
// `dlq show --full ID`, or --json, which prints every letter whole.
const (
	maxShownCell  = 80
	maxShownField = 1024
	maxShownBody  = 4096
)

// bounded is s as a terminal gets it (printable: control characters
// escaped, up to 6 bytes each) cut to at most n bytes of that form, on a
// character or escape boundary and marked with delivery.Ellipsis, and
// whether it was cut: the bound holds for what is printed, not for what
// it was escaped from.
func bounded(s string, n int) (string, bool) {
	if p, all := printableUpTo(s, n); all {
		return p, false
	}
	if n < len(delivery.Ellipsis) {
		p, _ := printableUpTo(s, n)
		return p, true
	}
	p, _ := printableUpTo(s, n-len(delivery.Ellipsis))
	return p + delivery.Ellipsis, true
}

// lsRow is the table form of a dead letter, each cell at most
// maxShownCell bytes; cut reports whether one was cut.
func lsRow(l *deadletter.Letter, now time.Time) (row []string, cut bool) {
	attempts, failedAt := "", ""
	if l.Attempts > 0 {
		attempts = strconv.Itoa(l.Attempts)
	}
	if !l.FailedAt.IsZero() {
		failedAt = l.FailedAt.Format(time.RFC3339)
	}
	row = []string{l.NotificationID, l.Channel, l.Destination, l.Class, attempts, failedAt, age(l.Age(now)), l.MovedBy}
	for i := range row {
		var c bool
		row[i], c = bounded(row[i], maxShownCell)
		cut = cut || c
	}
	return row, cut
}

var lsHeader = []string{"ID", "CHANNEL", "DESTINATION", "CLASS", "ATTEMPTS", "FAILED AT", "AGE", "MOVED BY"}

func newDLQLsCmd(e *env, g *globals) *cobra.Command {
	var f filterFlags
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List dead letters, one row each (nothing is consumed)",
		Long: `List the dead letters: notification id, channel, destination (the webhook's
or chat webhook's host, or the first recipient's domain), error class, attempts, when herald gave
up, age, and who moved it: herald (with a herald.reason) or the queue's
redrive_policy (after maxReceiveCount receives, without a reason).

Nothing is consumed: see 'herald dlq --help'. Dead letters that another reader
holds at that moment are not listed; their number is printed after the table.`,
		Example: `  herald dlq ls
  herald dlq ls --class webhook_http_5xx --older-than 2h
  herald dlq ls --tenant acme --since 24h
  herald dlq ls --json | jq -r '.[].id'      # bodies: herald dlq show ID`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			filter, err := f.filter(e.now())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			client, scans, err := scanDLQ(ctx, e, g, false, f.hold)
			if err != nil {
				return err
			}
			relErr := release(context.WithoutCancel(ctx), client, scans)
			letters, partial := lettersOf(scans)
			now := e.now()
			var shown []deadletter.Letter
			for i := range letters {
				if filter.Match(&letters[i], now) {
					shown = append(shown, listed(letters[i]))
				}
			}
			if g.json {
				if shown == nil {
					shown = []deadletter.Letter{}
				}
				if err := writeJSON(e.stdout, shown); err != nil {
					return err
				}
			} else {
				rows := make([][]string, len(shown))
				anyCut := false
				for i := range shown {
					var c bool
					rows[i], c = lsRow(&shown[i], now)
					anyCut = anyCut || c
				}
				if err := table(e.stdout, lsHeader, rows); err != nil {
					return err
				}
				if anyCut {
					fmt.Fprintf(e.stderr, "cells cut at %d bytes (…): --json prints them whole\n", maxShownCell)
				}
				fmt.Fprintf(e.stderr, "%d of %d dead letters shown", len(shown), len(letters))
				held := 0
				for _, s := range scans {
					if c, err := deadletter.Count(ctx, client, s.pair.dlq); err == nil {
						held += c.InFlight
					}
				}
				if held > 0 {
					fmt.Fprintf(e.stderr, "; %d more held by another reader, not listed", held)
				}
				fmt.Fprintln(e.stderr)
			}
			if relErr != nil {
				return fmt.Errorf("listed, but some dead letters stay hidden until their hold ends: %w", relErr)
			}
			if partial {
				return errReported
			}
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

// listed is l as dlq ls shows it: like the table, the listing leaves the
// producer's data (the body with its recipients and URL secrets, the message
// attributes herald kept in the reason) to dlq show.
func listed(l deadletter.Letter) deadletter.Letter {
	l.Body = ""
	for _, r := range []**redrive.Reason{&l.Reason, &l.PreviousReason} {
		if *r != nil {
			c := **r
			c.OverflowAttributes = nil
			*r = &c
		}
	}
	return l
}

func newDLQShowCmd(e *env, g *globals) *cobra.Command {
	var hold time.Duration
	var full bool
	var f filterFlags
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a dead letter's original body and herald's reason",
		Long: `Print the dead letter whose notification id or SQS message id is ID: its
original body and the parsed herald.reason (outcome, error class, error,
attempts, failed at, source message). Nothing is consumed.

A body is printed up to 4 KiB and each field up to 1 KiB as printed (control
characters escaped), cut on a character or escape boundary and marked "…",
with a note when something was cut: --full prints everything, as --json
does.`,
		Args: exactArgs(1, "one ID (a notification id or a dead-letter SQS message id)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkHold(hold); err != nil {
				return err
			}
			if args[0] == "" {
				return usagef("dlq show: the ID is empty")
			}
			filter := deadletter.Filter{IDs: args}
			if err := f.endpointFilter(&filter, e.now()); err != nil {
				return err
			}
			ctx := cmd.Context()
			client, scans, err := scanDLQ(ctx, e, g, false, hold)
			if err != nil {
				return err
			}
			relErr := release(context.WithoutCancel(ctx), client, scans)
			letters, partial := lettersOf(scans)
			var found []deadletter.Letter
			for i := range letters {
				if filter.Match(&letters[i], e.now()) {
					found = append(found, letters[i])
				}
			}
			if len(found) == 0 {
				fmt.Fprintf(e.stderr, "no dead letter %q among the %d visible ones\n", args[0], len(letters))
				return reported(e, relErr)
			}
			if g.json {
				if err := writeJSON(e.stdout, found); err != nil {
					return err
				}
			} else {
				cut := false
				for i := range found {
					if i > 0 {
						fmt.Fprintln(e.stdout)
					}
					cut = printLetter(e, &found[i], full) || cut
				}
				if cut {
					fmt.Fprintf(e.stderr, "cut to %d bytes of body and %d of each field (…): `herald dlq show --full ID` prints all of it (or --json)\n",
						maxShownBody, maxShownField)
				}
			}
			if partial {
				return reported(e, relErr)
			}
			return relErr
		},
	}
	cmd.Flags().DurationVar(&hold, "hold", deadletter.DefaultHold, "visibility timeout while reading (made 0 again right after)")
	cmd.Flags().BoolVar(&full, "full", false, "print the whole body and every field, however long")
	f.addEndpointFlags(cmd)
	return cmd
}

// printLetter writes a dead letter for people: its reason's fields, then
// the body, indented when it is JSON. Unless full, each field is cut to
// maxShownField bytes and the body to maxShownBody; it reports whether
// something was cut.
func printLetter(e *env, l *deadletter.Letter, full bool) bool {
	w := &printer{w: e.stdout, full: full}
	fmt.Fprintf(w, "SQS message id:  %s\n", w.field(l.MessageID))
	fmt.Fprintf(w, "moved by:        %s\n", l.MovedBy)
	if r := l.Reason; r != nil {
		fmt.Fprintf(w, "notification id: %s\n", w.field(r.NotificationID))
		fmt.Fprintf(w, "channel:         %s\n", w.field(r.Channel))
		fmt.Fprintf(w, "outcome:         %s\n", w.field(r.Outcome))
		fmt.Fprintf(w, "error class:     %s\n", w.field(string(r.ErrorClass)))
		fmt.Fprintf(w, "error:           %s\n", w.field(r.Error))
		fmt.Fprintf(w, "attempts:        %d\n", r.Attempts)
		fmt.Fprintf(w, "failed at:       %s (%s ago)\n", w.field(r.FailedAt), age(l.Age(e.now())))
		fmt.Fprintf(w, "source message:  %s\n", w.field(r.SourceMessageID))
		if len(r.DroppedAttributes) > 0 {
			fmt.Fprintf(w, "attributes left out for size: %s\n", w.field(fmt.Sprint(r.DroppedAttributes)))
		}
	} else if l.MovedBy == deadletter.MovedByHerald {
		fmt.Fprintf(w, "error class:     %s\n", w.field(l.Class))
		fmt.Fprintln(w, "reason:          the herald.reason attribute is not readable JSON")
	} else {
		fmt.Fprintln(w, "reason:          none: the queue's redrive policy moved it after maxReceiveCount receives")
		if r := l.PreviousReason; r != nil {
			// Sent back with herald's attributes (SQS's move task keeps
			// them) and moved again: history, not this move's cause.
			fmt.Fprintf(w, "earlier reason:  %s (%s, failed at %s), from an earlier dead-lettering, not why it was moved this time\n",
				w.field(string(r.ErrorClass)), w.field(r.Outcome), w.field(r.FailedAt))
		}
	}
	if l.Tenant != "" {
		fmt.Fprintf(w, "tenant:          %s\n", w.field(l.Tenant))
	}
	if l.Endpoint != "" {
		fmt.Fprintf(w, "endpoint:        %s\n", w.field(l.Endpoint))
	}
	fmt.Fprintln(w, "body:")
	var buf bytes.Buffer
	body := l.Body
	if json.Indent(&buf, []byte(l.Body), "  ", "  ") == nil {
		body = buf.String()
	}
	if !full {
		var c bool
		if body, c = bounded(body, maxShownBody); c {
			body += fmt.Sprintf("\n  (the first %d bytes of %d shown)", len(body), len(l.Body))
			w.cut = true
		}
	}
	// Producer data: printed without its control characters (printable).
	fmt.Fprintf(w, "  %s\n", printable(body))
	return w.cut
}

// printer writes show's lines, cutting each value printed with %s to
// maxShownField bytes unless full, and remembers whether it cut one.
type printer struct {
	w    io.Writer
	full bool
	cut  bool
}

func (p *printer) Write(b []byte) (int, error) { return p.w.Write(b) }

// field is s bounded for show (unless full) as a table cell is written.
func (p *printer) field(s string) string {
	if !p.full {
		var c bool
		s, c = bounded(s, maxShownField)
		p.cut = p.cut || c
	}
	return cell(s)
}

func newDLQRedriveCmd(e *env, g *globals) *cobra.Command {
	var f filterFlags
	var all, dryRun bool
	cmd := &cobra.Command{
		Use:   "redrive (--id ID... | --class C | --older-than D | --tenant T | --endpoint EP | --since T | --all) [--dry-run]",
		Short: "Send chosen dead letters back to the queue, then delete them from the dead-letter queue",
		Long: `Send the chosen dead letters back to their queues (each dead-letter queue's
letters to its own queue: the email dead letters to the email queue) with their
original body and the producer's own message attributes (not herald's), then
delete each from the dead-letter queue. Send comes before delete, so an
interruption can leave a message in both queues (receivers deduplicate on the
notification id), never in neither. FIFO queues keep the message group and
its order: each group's letters go back in their original order (their
SequenceNumber, whichever moved them: herald or the redrive policy), and a
group stops at its first letter not sent, or not chosen (--id n-9 --id n-11
holds n-11 behind n-10): the rest of it is "held" and stays.
A send whose answer cannot be trusted (a wrong MD5, no answer in time, a cut
connection) is "unknown": the queue may hold it, the dead letter stays, and
the row says how to check before redriving it again.

Choose with --id (repeatable), --class, --older-than, --channel, --tenant,
--endpoint, --since (combined: all must match), or --all. After a registered
endpoint recovers, --endpoint ep_… --since T resends what failed since T. --dry-run shows what would be sent and changes nothing.
Ends with the count sent, skipped and failed (held included), and unknown;
exit status 1 when any failed or is unknown, an --id was not found, or Ctrl-C
stopped it before every chosen letter.`,
		Example: `  herald dlq redrive --id welcome-42 --dry-run
  herald dlq redrive --class webhook_http_5xx --older-than 1h
  herald dlq redrive --endpoint ep_01jekz5v8n3q4r5s6t7v8w9x0y --since 2026-12-04T10:00:00Z
  herald dlq redrive --all`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !all && !f.chooses() {
				return usagef("choose what to redrive: --id, --class, --older-than, --tenant, --endpoint, --since or --all")
			}
			if all && (f.chooses() || f.channel != "") {
				return usagef("--all cannot be combined with --id, --class, --older-than, --channel, --tenant, --endpoint or --since")
			}
			filter, err := f.filter(e.now())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			client, scans, err := scanDLQ(ctx, e, g, true, f.hold)
			if err != nil {
				return err
			}
			letters, partial := lettersOf(scans)
			now := e.now()
			// Once sending starts, Ctrl-C does not cut a letter between its
			// send and its delete.
			interrupted := 0
			choose := func(l *deadletter.Letter) bool {
				if !filter.Match(l, now) {
					return false
				}
				if ctx.Err() != nil {
					interrupted++
					return false
				}
				return true
			}
			// Each dead-letter queue's letters go back to its own queue.
			rep := deadletter.Report{DryRun: dryRun, Results: []deadletter.Result{}}
			var relErrs []error
			for _, s := range scans {
				r, err := deadletter.Redrive(context.WithoutCancel(ctx), client, s.pair.dlq, s.pair.url, s.letters, choose, dryRun)
				rep.Sent, rep.Skipped, rep.Failed, rep.Unknown = rep.Sent+r.Sent, rep.Skipped+r.Skipped, rep.Failed+r.Failed, rep.Unknown+r.Unknown
				rep.Results = append(rep.Results, r.Results...)
				if err != nil {
					relErrs = append(relErrs, err)
				}
			}
			relErr := errors.Join(relErrs...)
			missing := missingIDs(f.ids, letters)
			if g.json {
				if err := writeJSON(e.stdout, struct {
					deadletter.Report
					NotFound []string `json:"not_found,omitempty"`
				}{rep, missing}); err != nil {
					return err
				}
			} else {
				rows := make([][]string, len(rep.Results))
				for i, r := range rep.Results {
					rows[i] = []string{r.NotificationID, r.MessageID, r.Action, r.NewMessageID, r.Error}
				}
				if len(rows) > 0 {
					if err := table(e.stdout, []string{"ID", "DEAD LETTER", "ACTION", "NEW SQS MESSAGE ID", "ERROR"}, rows); err != nil {
						return err
					}
				}
				verb := "sent"
				if dryRun {
					verb = "dry run: would send " + strconv.Itoa(len(rep.Results)) + ", sent"
				}
				fmt.Fprintf(e.stdout, "%s %d, skipped %d, failed %d", verb, rep.Sent, rep.Skipped, rep.Failed)
				if rep.Unknown > 0 {
					fmt.Fprintf(e.stdout, ", unknown %d (the queue may hold them; each row says how to check)", rep.Unknown)
				}
				fmt.Fprintln(e.stdout)
				for _, id := range missing {
					fmt.Fprintf(e.stderr, "not found: %s\n", id)
				}
			}
			if interrupted > 0 {
				fmt.Fprintf(e.stderr, "interrupted: %d chosen dead letters not redriven (counted as skipped); they stay in the dead-letter queue\n", interrupted)
			}
			if rep.Failed > 0 || rep.Unknown > 0 || len(missing) > 0 || interrupted > 0 || partial {
				return reported(e, relErr)
			}
			return relErr
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "redrive every dead letter")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what would be sent; change nothing")
	return cmd
}

// missingIDs returns the ids that name no letter.
func missingIDs(ids []string, letters []deadletter.Letter) []string {
	var out []string
	for _, id := range ids {
		found := false
		for i := range letters {
			if letters[i].NotificationID == id || letters[i].MessageID == id {
				found = true
				break
			}
		}
		if !found {
			out = append(out, id)
		}
	}
	return out
}

// reported ends a command whose failure has been printed: errReported,
// after printing err too when there is one.
func reported(e *env, err error) error {
	if err != nil {
		fmt.Fprintf(e.stderr, "herald: %v\n", err)
	}
	return errReported
}
