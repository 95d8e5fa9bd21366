package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
)

// destination is one origin's health as `destinations --json` prints it.
type destination struct {
	Origin       string `json:"origin"`
	State        string `json:"state"`
	Failures     int    `json:"consecutive_failures"`
	FailingSince string `json:"failing_since,omitempty"`
	LastSuccess  string `json:"last_success,omitempty"`
	LastFailure  string `json:"last_failure,omitempty"`
	FailureClass string `json:"last_failure_class,omitempty"`
	DisabledAt   string `json:"disabled_at,omitempty"`
	DisabledBy   string `json:"disabled_by,omitempty"`
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// destinationOf is h as the command prints it, its state by the circuit's
// rule (circuit.Rules.StateOf) with threshold.
func destinationOf(h store.Health, threshold int) destination {
	return destination{
		Origin: h.Origin, State: string(circuit.Rules{Threshold: threshold}.StateOf(h)), Failures: h.Failures, FailingSince: rfc3339(h.FailingSince),
		LastSuccess: rfc3339(h.LastSuccess), LastFailure: rfc3339(h.LastFailure), FailureClass: h.FailureClass,
		DisabledAt: rfc3339(h.DisabledAt), DisabledBy: h.DisabledBy,
	}
}

// destinationsCtx is what every destinations subcommand needs: the store
// and the circuit threshold that says closed from open.
type destinationsCtx struct {
	st        *store.Store
	threshold int
	pub       *announce.Publisher // nil without a bus
}

// The template's outputs the destinations commands read with --stack:
// the event bus, and the circuit threshold the deliver function was
// deployed with.
const (
	outputEventBus         = "EventBusName"
	outputCircuitThreshold = "CircuitThreshold"
)

// circuitThreshold is the threshold that tells an open destination from
// a closed one as the deliver function counts it: stack, --stack's
// CircuitThreshold output (the template parameter the function runs with,
// as --stack's outputs win over the environment for the table and the
// bus too; "" without --stack, or for a stack deployed before the output
// existed); else env, HERALD_CIRCUIT_THRESHOLD (the function's own
// variable, for a function configured by hand or locally); else
// circuit.DefaultThreshold, the function's default.
func circuitThreshold(stack, env string) (int, error) {
	v, source := stack, "the stack's "+outputCircuitThreshold+" output"
	if v == "" {
		v, source = env, "HERALD_CIRCUIT_THRESHOLD"
	}
	if v == "" {
		return circuit.DefaultThreshold, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, usagef("%s %q: want a whole number from 0", source, v)
	}
	return n, nil
}

func openDestinations(ctx context.Context, e *env, g *globals) (*destinationsCtx, error) {
	var outputs map[string]string // --stack's, read once
	if g.stack != "" {
		var err error
		if outputs, err = g.stackOutputs(ctx); err != nil {
			return nil, err
		}
	}
	threshold, err := circuitThreshold(outputs[outputCircuitThreshold], e.getenv("HERALD_CIRCUIT_THRESHOLD"))
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, g, e.getenv, func() (aws.Config, error) { return g.awsConfig(ctx) },
		func(context.Context) (map[string]string, error) { return outputs, nil })
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, usagef("no store table: give --stack NAME or HERALD_STORE_TABLE")
	}
	d := &destinationsCtx{st: st, threshold: threshold}
	bus := e.getenv("HERALD_EVENT_BUS")
	if g.stack != "" {
		bus = outputs[outputEventBus]
	}
	if bus != "" {
		cfg, err := g.awsConfig(ctx)
		if err != nil {
			return nil, err
		}
		if d.pub, err = announce.New(eventbridge.NewFromConfig(cfg), bus); err != nil {
			return nil, err
		}
	}
	if threshold == 0 {
		// The deliver function wraps no circuit then (circuit.Breaker.Wrap):
		// a disable is stored, and shown, but holds nothing back.
		fmt.Fprintln(e.stderr, "note: the circuit is off (threshold 0): deliver functions send every notification, also to a destination shown disabled, until the threshold is above 0")
	}
	return d, nil
}

func (d *destinationsCtx) print(e *env, g *globals, ds []destination) error {
	if g.json {
		if ds == nil {
			ds = []destination{}
		}
		return writeJSON(e.stdout, ds)
	}
	rows := make([][]string, 0, len(ds))
	for _, x := range ds {
		last := x.LastFailure
		if x.FailureClass != "" {
			last += " " + x.FailureClass
		}
		rows = append(rows, []string{x.Origin, x.State, strconv.Itoa(x.Failures), x.LastSuccess, last, x.DisabledAt + " " + x.DisabledBy})
	}
	return table(e.stdout, []string{"ORIGIN", "STATE", "FAILURES", "LAST SUCCESS", "LAST FAILURE", "DISABLED"}, rows)
}

// destinationKey is the key arg's health is kept under: a chat webhook's
// key as given ("chat:discord:…", from a dead letter's reason or `ls`), a
// registered endpoint's ("endpoint:ep_…", or its id ep_… alone), a
// URL on a chat service's own host keyed as its webhook
// (chat.Destination: a digest; the URL's token is never printed), else
// the origin of a webhook URL. A usage error when it is none of these.
func destinationKey(arg string) (string, error) {
	if chat.IsDestination(arg) || endpointsend.IsDestination(arg) {
		return arg, nil
	}
	if endpoint.ValidID(arg) { // a registered endpoint's id: its health's key
		return endpointsend.DestinationKey(arg), nil
	}
	if u, err := url.Parse(arg); err == nil && u.Host != "" {
		if svc := chat.ServiceOfHost(u.Hostname()); svc != "" {
			key, err := chat.Destination(svc, arg)
			if err != nil {
				return "", usageError{fmt.Errorf("a %s webhook URL: %w", svc, err)}
			}
			return key, nil
		}
	}
	if strings.HasPrefix(arg, chat.DestinationPrefix) {
		return "", usagef("%q: a chat key is chat:slack|discord|teams: and 32 hex digits, as a dead letter's reason or `herald destinations ls` print it", delivery.Truncate(arg, 80))
	}
	origin, err := webhook.Origin(arg)
	if err != nil {
		return "", usageError{err}
	}
	return origin, nil
}

// newDestinationsCmd is the `herald destinations` group: ls, show, enable
// and disable.
func newDestinationsCmd(e *env, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "destinations",
		Short: "Show webhook origins' and chat webhooks' health and disable or enable one",
		Long: `Show and change the health herald keeps of each webhook origin (scheme,
host, port) and of each chat webhook (its key, chat:<service>:<digest>, which
holds no token; a chat webhook URL given here is turned into its key) and of
each registered endpoint (endpoint:ep_…, or its id ep_… alone) in its
DynamoDB table (--stack's StoreTableName output,
else HERALD_STORE_TABLE): closed (sending), open (circuit open after
the deliver function's threshold of consecutive failures: --stack's
CircuitThreshold output, else HERALD_CIRCUIT_THRESHOLD, else 10; one probe
at a time) or disabled (every notification dead-lettered at once as
destination_disabled). docs/operations.md, "Destination states".`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "ls",
		Short: "List every origin herald keeps health of",
		Long: `List every origin's state, consecutive failures, last success, last failure
and its class, and when and by whom it was disabled. It reads the whole
table with Scan (billed per 4 KB read, every item of the table: delivered-
once records too); the deliver function itself never scans. --json prints
an array of objects.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := openDestinations(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			hs, err := d.st.Healths(cmd.Context())
			if err != nil {
				return err
			}
			var ds []destination
			for _, h := range hs {
				ds = append(ds, destinationOf(h, d.threshold))
			}
			return d.print(e, g, ds)
		},
	}, &cobra.Command{
		Use:   "show URL|KEY",
		Short: "Show one origin's or chat webhook's state (URL, origin or chat key)",
		Args:  exactArgs(1, "one URL or origin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			origin, err := destinationKey(args[0])
			if err != nil {
				return err
			}
			d, err := openDestinations(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			h, err := d.st.Health(cmd.Context(), origin)
			if err != nil {
				return err
			}
			x := destinationOf(h, d.threshold)
			if g.json {
				return writeJSON(e.stdout, x)
			}
			return d.print(e, g, []destination{x})
		},
	}, newDestinationsSetCmd(e, g, false), newDestinationsSetCmd(e, g, true))
	return cmd
}

func newDestinationsSetCmd(e *env, g *globals, disable bool) *cobra.Command {
	use, short, long := "enable URL|KEY", "Enable a disabled origin or chat webhook: herald sends to it again",
		`Enable the origin (scheme, host, port) of URL, or the chat webhook of a
chat URL or key (chat:<service>:<digest>; a webhook herald disabled because
the service said it is gone, such as Discord's Unknown Webhook): herald sends its notifications
again, and forgets its consecutive failures (its circuit is closed). Running
deliver functions see it within about 6 s. Notifications dead-lettered while it
was disabled (class destination_disabled) are not sent by this: redrive
them with `+"`herald dlq redrive`"+`. One GetItem and at most one conditional
PutItem; an enabled origin is left as it is. With an event bus (--stack's
EventBusName output, else HERALD_EVENT_BUS) it records a
destination.recovered event (source herald) in that write when it enabled
one, puts it, and then removes it with one more PutItem; an event of the
origin an earlier command or deliver function could not put is put too,
so running the command again finishes it.`
	if disable {
		use, short, long = "disable URL|KEY", "Disable an origin or chat webhook: its notifications go to the dead-letter queue at once",
			`Disable the origin (scheme, host, port) of URL, or the chat webhook of a chat
URL or key, by hand: from then on (within
about 6 s in running deliver functions) its notifications are not sent but
dead-lettered at once with class destination_disabled, until
`+"`herald destinations enable`"+`. Needs the circuit on (HERALD_CIRCUIT_THRESHOLD
above 0). One GetItem and at most one conditional PutItem. With an event
bus (--stack's EventBusName output, else HERALD_EVENT_BUS) it records a
destination.disabled event (source herald) in that write when it disabled
one, puts it, and then removes it with one more PutItem; an event of the
origin an earlier command or deliver function could not put is put too,
so running the command again finishes it.`
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long + "\n\n--json prints the origin's state after the change.",
		Args:  exactArgs(1, "one URL or origin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			origin, err := destinationKey(args[0])
			if err != nil {
				return err
			}
			d, err := openDestinations(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			var record []func(before store.Health, h *store.Health)
			if d.pub != nil {
				// The event goes into the item with the change and
				// leaves it once published (announce.Pending).
				record = append(record, func(before store.Health, h *store.Health) {
					p := announce.Pending{DetailType: announce.DestinationDisabled, Detail: circuit.DisabledEvent(*h, e.now())}
					if !disable {
						p = announce.Pending{DetailType: announce.DestinationRecovered, Detail: circuit.DisabledEvent(before, e.now())}
						p.Detail.State = string(circuit.Closed)
					}
					announce.Record(h, p)
				})
			}
			h, changed, err := d.st.SetDisabled(cmd.Context(), origin, disable, record...)
			if err != nil {
				return err
			}
			verb := map[bool]string{true: "disabled", false: "enabled"}[disable]
			if d.pub != nil && h.PendingEvents != "" {
				// This change's event, and any an earlier command or
				// deliver function could not publish.
				if h, err = announce.Finish(cmd.Context(), d.pub, d.st, h); err != nil {
					return fmt.Errorf("%s is %s, but its event was not published (it stays recorded in the store: run this command again, or a deliver function reading the origin puts it): %w", origin, verb, err)
				}
			}
			x := destinationOf(h, d.threshold)
			if g.json {
				return writeJSON(e.stdout, x)
			}
			if !changed {
				_, err = fmt.Fprintf(e.stdout, "%s was already %s: nothing changed\n", origin, verb)
				return err
			}
			_, err = fmt.Fprintf(e.stdout, "%s %s\n", origin, verb)
			return err
		},
	}
}
