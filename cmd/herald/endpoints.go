package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/endpoints"
)

// Outputs of the template that `herald endpoints` reads (template.yaml,
// Outputs).
const (
	outputEndpointsAPIID  = "EndpointsApiId"
	outputEndpointsAPIURL = "EndpointsApiUrl"
)

// envEndpointsAPIURL names the API's base URL when --api-url is not given.
const envEndpointsAPIURL = "HERALD_ENDPOINTS_API_URL"

// endpointsAPIStage is the stage of the API (template.yaml, EndpointsApiStage).
const endpointsAPIStage = "api"

// maxGrace is rotate-secret's longest --grace, the API's (7 days).
const maxGrace = 7 * 24 * time.Hour

// endpointsFlags are the group's own flags.
type endpointsFlags struct {
	apiURL string
}

// newEndpointsCmd is the `herald endpoints` group.
func newEndpointsCmd(e *env, g *globals) *cobra.Command {
	f := &endpointsFlags{}
	cmd := &cobra.Command{
		Use:   "endpoints",
		Short: "Register, list, change, disable and test your customers' endpoints",
		Long: `Manage the registered endpoints through herald's endpoints API (an API Gateway
REST API with AWS IAM authorization; docs/endpoints.md, "API reference"). Each
request is signed with Signature Version 4 with the SDK's credentials.

The API is found with --api-url (the stage's URL, the EndpointsApiUrl output),
else $` + envEndpointsAPIURL + `, else --stack NAME's outputs: with
AWS_ENDPOINT_URL set (the local stack), its URL is
AWS_ENDPOINT_URL/_aws/execute-api/<EndpointsApiId>/api (` + "`make deploy-local`" + `'s
stack is herald-local).

Bad input is refused by the API naming the field (and the flag), before
anything is written.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&f.apiURL, "api-url", "", "the endpoints API's base URL (default $"+envEndpointsAPIURL+" or --stack's outputs)")
	cmd.AddCommand(
		newEndpointsCreateCmd(e, g, f),
		newEndpointsListCmd(e, g, f),
		newEndpointsShowCmd(e, g, f),
		newEndpointsUpdateCmd(e, g, f),
		newEndpointsDeleteCmd(e, g, f),
		newEndpointsEnableCmd(e, g, f),
		newEndpointsDisableCmd(e, g, f),
		newEndpointsRotateCmd(e, g, f),
		newEndpointsTestCmd(e, g, f),
	)
	return cmd
}

// endpointsAPIURL is the API's base URL from --api-url, the environment
// or the stack's outputs (outputs is read only with --stack).
func endpointsAPIURL(ctx context.Context, f *endpointsFlags, g *globals, getenv func(string) string, outputs func(context.Context) (map[string]string, error)) (string, error) {
	switch {
	case f.apiURL != "":
		return f.apiURL, nil
	case getenv(envEndpointsAPIURL) != "":
		return getenv(envEndpointsAPIURL), nil
	case g.stack == "":
		return "", usagef("no endpoints API: give --stack NAME (herald-local for make deploy-local), --api-url URL or %s", envEndpointsAPIURL)
	}
	out, err := outputs(ctx)
	if err != nil {
		return "", err
	}
	id := out[outputEndpointsAPIID]
	if id == "" {
		return "", fmt.Errorf("stack %s has no %s output: deploy a herald stack with the endpoints API", g.stack, outputEndpointsAPIID)
	}
	if local := getenv("AWS_ENDPOINT_URL"); local != "" {
		// The local stack: its outputs name AWS's host, which does not
		// resolve here; LocalStack serves the API under its own address.
		return strings.TrimRight(local, "/") + "/_aws/execute-api/" + url.PathEscape(id) + "/" + endpointsAPIStage, nil
	}
	return out[outputEndpointsAPIURL], nil
}

// client builds the API client for the command.
func (f *endpointsFlags) client(ctx context.Context, e *env, g *globals) (*endpoints.Client, error) {
	base, err := endpointsAPIURL(ctx, f, g, e.getenv, g.stackOutputs)
	if err != nil {
		return nil, err
	}
	cfg, err := g.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	c, err := endpoints.New(base, cfg)
	if err != nil {
		return nil, usageError{err}
	}
	return c, nil
}

// flagOfField names the flag that sets an API field.
var flagOfField = []struct{ prefix, flag string }{
	{"url", "--url"}, {"tenant", "--tenant"}, {"kind", "--kind"}, {"description", "--description"},
	{"event_types", "--event-type"}, {"headers", "--header"}, {"metadata", "--metadata"},
	{"rate_limit", "--rate-limit"}, {"reason", "--reason"}, {"grace_seconds", "--grace"},
	{"state", "--state"}, {"limit", "--limit"}, {"cursor", "--cursor"}, {"event_type", "--event-type"},
	{"payload", "--payload"}, {"id", "ID"}, {"If-Match", "--version"},
}

// apiError reports an answer of the API: bad input as a usage error naming
// the flag and the field, the rest as a failure.
func apiError(err error) error {
	var ae *endpoints.Error
	if !errors.As(err, &ae) {
		return err
	}
	if ae.Status == 400 && ae.Field != "" {
		for _, m := range flagOfField {
			if ae.Field == m.prefix || strings.HasPrefix(ae.Field, m.prefix+".") || strings.HasPrefix(ae.Field, m.prefix+"[") {
				return usagef("%s: %s: %s (nothing was written)", m.flag, ae.Field, ae.Message)
			}
		}
	}
	return err
}

// readPayload reads --payload: inline JSON, or @FILE, or @- for stdin.
func readPayload(e *env, s string) (json.RawMessage, error) {
	if s == "" {
		return nil, nil
	}
	raw := []byte(s)
	if name, ok := strings.CutPrefix(s, "@"); ok {
		var err error
		if name == "-" {
			raw, err = io.ReadAll(e.stdin)
		} else {
			raw, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, usagef("--payload %s: %v", s, err)
		}
	}
	if !json.Valid(raw) {
		return nil, usagef("--payload: not one JSON value")
	}
	return json.RawMessage(raw), nil
}

// headerFlag reads --header "Name: value" values.
func headerFlag(vals []string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range vals {
		name, value, ok := strings.Cut(v, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, usagef("--header %.40q: want \"Name: value\"", v)
		}
		if _, dup := out[name]; dup {
			return nil, usagef("--header %s: given twice", name)
		}
		out[name] = strings.TrimSpace(value)
	}
	return out, nil
}

// metadataFlag reads --metadata key=value values.
func metadataFlag(vals []string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, usagef("--metadata %.40q: want key=value", v)
		}
		if _, dup := out[k]; dup {
			return nil, usagef("--metadata %s: given twice", k)
		}
		out[k] = val
	}
	return out, nil
}

// endpointFields are the flags create and update share.
type endpointFields struct {
	url, description, kind string
	eventTypes             []string
	headers, metadata      []string
	rateLimit              float64
}

func (ef *endpointFields) add(cmd *cobra.Command, create bool) {
	fl := cmd.Flags()
	fl.StringVar(&ef.url, "url", "", "the https URL (webhook) or the chat service's incoming-webhook URL")
	fl.StringVar(&ef.description, "description", "", "what the endpoint is for")
	fl.StringSliceVar(&ef.eventTypes, "event-type", nil, "an event type or prefix (invoice.*) it subscribes to; repeat for more (default every type)")
	fl.StringArrayVar(&ef.headers, "header", nil, `a custom request header "Name: value"; repeat for more`)
	fl.StringArrayVar(&ef.metadata, "metadata", nil, "key=value of your own; repeat for more")
	fl.Float64Var(&ef.rateLimit, "rate-limit", 0, "most requests per second to the endpoint (0: none of its own)")
	if create {
		fl.StringVar(&ef.kind, "kind", endpoints.KindWebhook, "webhook, slack, discord or teams")
	}
}

// idArg checks the ID argument's form before any request.
var idArg = regexp.MustCompile(`^ep_[0-9a-z]{26}$`)

func endpointID(args []string) (string, error) {
	if !idArg.MatchString(args[0]) {
		return "", usagef("ID %.60q: an endpoint id is ep_ and 26 characters (herald endpoints ls lists them)", args[0])
	}
	return args[0], nil
}

func newEndpointsCreateCmd(e *env, g *globals, f *endpointsFlags) *cobra.Command {
	var ef endpointFields
	var tenant string
	cmd := &cobra.Command{
		Use:   "create --tenant T --url URL [flags]",
		Short: "Register an endpoint; prints its signing secret, shown only this once",
		Long: `Register an endpoint for a tenant (your customer). herald makes its signing
secret (whsec_…) and prints it this once: give it to the receiver, who verifies
each webhook with it (docs/endpoints.md). A chat endpoint's URL and header
values are never shown again (only the URL's host and the header names).`,
		Example: `  herald endpoints create --stack herald-local --tenant acme --url https://hooks.acme.example/herald --event-type 'invoice.*'
  herald endpoints create --tenant acme --kind slack --url https://hooks.slack.com/services/T0/B0/XXXX --event-type order.created`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tenant == "" || ef.url == "" {
				return usagef("create needs --tenant and --url")
			}
			in := endpoints.CreateInput{Tenant: tenant, Kind: ef.kind, URL: ef.url, Description: ef.description, EventTypes: ef.eventTypes, RateLimit: ef.rateLimit}
			var err error
			if in.Headers, err = headerFlag(ef.headers); err != nil {
				return err
			}
			if in.Metadata, err = metadataFlag(ef.metadata); err != nil {
				return err
			}
			c, err := f.client(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			out, err := c.Create(cmd.Context(), in)
			if err != nil {
				return apiError(err)
			}
			if g.json {
				return writeJSON(e.stdout, out)
			}
			if err := printEndpoint(e.stdout, out.Endpoint); err != nil {
				return err
			}
			_, err = fmt.Fprintf(e.stdout, "secret       %s\n             (shown only now: give it to the receiver; herald endpoints rotate-secret makes a new one)\n", out.Secret)
			return err
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "the tenant (your customer's id) the endpoint belongs to")
	ef.add(cmd, true)
	return cmd
}

func newEndpointsListCmd(e *env, g *globals, f *endpointsFlags) *cobra.Command {
	var q endpoints.ListQuery
	var all bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List endpoints (filters: --tenant, --event-type, --state)",
		Long: `List endpoints by id, one page (--limit, default 50) at a time: the last line
says how to ask for the next page; --all follows every page.`,
		Example: `  herald endpoints ls --tenant acme
  herald endpoints ls --state disabled --all --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			var eps []endpoints.Endpoint
			next := ""
			for {
				page, err := c.List(cmd.Context(), q)
				if err != nil {
					return apiError(err)
				}
				eps = append(eps, page.Data...)
				next = page.NextCursor
				if !all || next == "" {
					break
				}
				q.Cursor = next
			}
			if g.json {
				return writeJSON(e.stdout, endpoints.Page{Data: append([]endpoints.Endpoint{}, eps...), NextCursor: next})
			}
			rows := [][]string{}
			for _, x := range eps {
				rows = append(rows, []string{x.ID, x.Tenant, x.Kind, x.URLHost, x.State, strings.Join(x.EventTypes, ","), strconv.FormatInt(x.Version, 10)})
			}
			if err := table(e.stdout, []string{"ID", "TENANT", "KIND", "HOST", "STATE", "EVENT TYPES", "VERSION"}, rows); err != nil {
				return err
			}
			if next != "" {
				_, err = fmt.Fprintf(e.stdout, "more: --cursor %s (or --all)\n", next)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&q.Tenant, "tenant", "", "only this tenant's endpoints")
	fl.StringVar(&q.EventType, "event-type", "", "only endpoints subscribed to this event type")
	fl.StringVar(&q.State, "state", "", "only enabled or only disabled endpoints")
	fl.IntVar(&q.Limit, "limit", 0, "most endpoints per page, 1–100 (default 50)")
	fl.StringVar(&q.Cursor, "cursor", "", "the page after the one that printed it")
	fl.BoolVar(&all, "all", false, "follow every page")
	return cmd
}

func newEndpointsShowCmd(e *env, g *globals, f *endpointsFlags) *cobra.Command {
	var failures int
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show an endpoint and its recent failures",
		Args:  exactArgs(1, "one endpoint ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := endpointID(args)
			if err != nil {
				return err
			}
			if failures < 0 || failures > 100 {
				return usagef("--failures %d: from 0 to 100", failures)
			}
			c, err := f.client(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			ep, err := c.Get(cmd.Context(), id)
			if err != nil {
				return apiError(err)
			}
			var fs []endpoints.Failure
			if failures > 0 {
				if fs, err = c.Failures(cmd.Context(), id, failures); err != nil {
					return apiError(err)
				}
			}
			if g.json {
				return writeJSON(e.stdout, struct {
					Endpoint endpoints.Endpoint  `json:"endpoint"`
					Failures []endpoints.Failure `json:"failures"`
				}{ep, append([]endpoints.Failure{}, fs...)})
			}
			if err := printEndpoint(e.stdout, ep); err != nil {
				return err
			}
			if failures == 0 {
				return nil
			}
			if len(fs) == 0 {
				_, err = fmt.Fprintln(e.stdout, "failures     none kept (each is kept 7 days)")
				return err
			}
			fmt.Fprintln(e.stdout, "failures (newest first):")
			rows := [][]string{}
			for _, x := range fs {
				rows = append(rows, []string{rfc3339(x.At), x.MessageID, strconv.Itoa(x.Attempt), x.Class, x.Reason})
			}
			return table(e.stdout, []string{"AT", "MESSAGE", "ATTEMPT", "CLASS", "REASON"}, rows)
		},
	}
	cmd.Flags().IntVar(&failures, "failures", 5, "how many recent failures to show (0: none)")
	return cmd
}

func newEndpointsUpdateCmd(e *env, g *globals, f *endpointsFlags) *cobra.Command {
	var ef endpointFields
	var version int64
	var allTypes, noHeaders bool
	cmd := &cobra.Command{
		Use:   "update ID [--version N] [flags]",
		Short: "Change an endpoint (only the flags given)",
		Long: `Change the fields whose flags are given. --header and --metadata replace all
headers or all metadata; --all-types subscribes to every event type;
--no-headers removes the custom headers.

The change names the endpoint's version (--version, as herald endpoints show
prints it; without it, the version read just before): if the endpoint changed
since, nothing is written and the command says so.`,
		Example: `  herald endpoints update ep_01m921tccrt0eax58fafvapteh --version 3 --event-type 'invoice.*' --event-type order.created`,
		Args:    exactArgs(1, "one endpoint ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := endpointID(args)
			if err != nil {
				return err
			}
			fl := cmd.Flags()
			var p endpoints.Patch
			if fl.Changed("url") {
				p.URL = &ef.url
			}
			if fl.Changed("description") {
				p.Description = &ef.description
			}
			if fl.Changed("event-type") && allTypes {
				return usagef("--event-type and --all-types: give one")
			}
			if fl.Changed("event-type") {
				p.EventTypes = &ef.eventTypes
			} else if allTypes {
				p.EventTypes = &[]string{}
			}
			if fl.Changed("header") && noHeaders {
				return usagef("--header and --no-headers: give one")
			}
			if fl.Changed("header") {
				h, err := headerFlag(ef.headers)
				if err != nil {
					return err
				}
				p.Headers = &h
			} else if noHeaders {
				p.Headers = &map[string]string{}
			}
			if fl.Changed("metadata") {
				m, err := metadataFlag(ef.metadata)
				if err != nil {
					return err
				}
				p.Metadata = &m
			}
			if fl.Changed("rate-limit") {
				p.RateLimit = &ef.rateLimit
			}
			if p == (endpoints.Patch{}) {
				return usagef("update changes nothing: give a flag of a field (herald endpoints update --help)")
			}
			if fl.Changed("version") && version < 1 {
				return usagef("--version %d: versions count from 1", version)
			}
			c, err := f.client(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			if !fl.Changed("version") {
				cur, err := c.Get(cmd.Context(), id)
				if err != nil {
					return apiError(err)
				}
				version = cur.Version
			}
			ep, err := c.Update(cmd.Context(), id, version, p)
			var ae *endpoints.Error
			if errors.As(err, &ae) && ae.Code == endpoints.CodeVersionMismatch {
				return fmt.Errorf("endpoint %s changed since version %d (%s): nothing was written; read it again (herald endpoints show %s)", id, version, ae.Message, id)
			}
			if err != nil {
				return apiError(err)
			}
			if g.json {
				return writeJSON(e.stdout, ep)
			}
			return printEndpoint(e.stdout, ep)
		},
	}
	ef.add(cmd, false)
	fl := cmd.Flags()
	fl.Int64Var(&version, "version", 0, "the version the change is based on (default: the current one)")
	fl.BoolVar(&allTypes, "all-types", false, "subscribe to every event type")
	fl.BoolVar(&noHeaders, "no-headers", false, "remove the custom headers")
	return cmd
}

func newEndpointsDeleteCmd(e *env, g *globals, f *endpointsFlags) *cobra.Command {
	var version int64
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "delete ID [--version N] [--dry-run]",
		Short: "Delete an endpoint (--dry-run shows it and deletes nothing)",
		Long: `Delete an endpoint and its secrets: events no longer reach it, and deliveries
already queued for it are dead-lettered endpoint_not_found. With --version, only
if the endpoint is still at that version.`,
		Args: exactArgs(1, "one endpoint ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := endpointID(args)
			if err != nil {
				return err
			}
			if version < 0 {
				return usagef("--version %d: versions count from 1", version)
			}
			c, err := f.client(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			if dryRun {
				ep, err := c.Get(cmd.Context(), id)
				if err != nil {
					return apiError(err)
				}
				if g.json {
					return writeJSON(e.stdout, struct {
						DryRun   bool               `json:"dry_run"`
						Endpoint endpoints.Endpoint `json:"endpoint"`
					}{true, ep})
				}
				if err := printEndpoint(e.stdout, ep); err != nil {
					return err
				}
				_, err = fmt.Fprintf(e.stdout, "dry run: %s would be deleted; nothing was changed\n", id)
				return err
			}
			if err := c.Delete(cmd.Context(), id, version); err != nil {
				return apiError(err)
			}
			if g.json {
				return writeJSON(e.stdout, map[string]any{"deleted": id})
			}
			_, err = fmt.Fprintf(e.stdout, "deleted %s\n", id)
			return err
		},
	}
	cmd.Flags().Int64Var(&version, "version", 0, "delete only at this version")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the endpoint and delete nothing")
	return cmd
}

func newEndpointsEnableCmd(e *env, g *globals, f *endpointsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "enable ID",
		Short: "Enable an endpoint (disabled by an operator or by herald)",
		Args:  exactArgs(1, "one endpoint ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := endpointID(args)
			if err != nil {
				return err
			}
			c, err := f.client(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			ep, err := c.Enable(cmd.Context(), id)
			if err != nil {
				return apiError(err)
			}
			if g.json {
				return writeJSON(e.stdout, ep)
			}
			_, err = fmt.Fprintf(e.stdout, "%s enabled (version %d); redrive what was dead-lettered while it was disabled: herald dlq redrive\n", ep.ID, ep.Version)
			return err
		},
	}
}

func newEndpointsDisableCmd(e *env, g *globals, f *endpointsFlags) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "disable ID --reason TEXT",
		Short: "Stop deliveries to an endpoint",
		Args:  exactArgs(1, "one endpoint ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := endpointID(args)
			if err != nil {
				return err
			}
			if strings.TrimSpace(reason) == "" {
				return usagef("disable needs --reason (why; shown with the endpoint)")
			}
			c, err := f.client(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			ep, err := c.Disable(cmd.Context(), id, reason)
			if err != nil {
				return apiError(err)
			}
			if g.json {
				return writeJSON(e.stdout, ep)
			}
			_, err = fmt.Fprintf(e.stdout, "%s disabled (version %d): events skip it; deliveries already queued are dead-lettered endpoint_disabled\n", ep.ID, ep.Version)
			return err
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required)")
	return cmd
}

func newEndpointsRotateCmd(e *env, g *globals, f *endpointsFlags) *cobra.Command {
	grace := 24 * time.Hour
	cmd := &cobra.Command{
		Use:   "rotate-secret ID [--grace 24h]",
		Short: "Make a new signing secret; the previous one also signs for --grace",
		Long: `Make a new signing secret for the endpoint and print it (shown only now). For
--grace (default 24h, at most 168h) herald signs each webhook with both secrets
(two signatures, space-separated, as Standard Webhooks allows), so the receiver
can install the new one before the old one stops. --grace 0 replaces it at once.`,
		Args: exactArgs(1, "one endpoint ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := endpointID(args)
			if err != nil {
				return err
			}
			if grace < 0 || grace > maxGrace || grace%time.Second != 0 {
				return usagef("--grace %s: whole seconds from 0 to %s", grace, maxGrace)
			}
			c, err := f.client(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			out, err := c.RotateSecret(cmd.Context(), id, grace)
			if err != nil {
				return apiError(err)
			}
			if g.json {
				return writeJSON(e.stdout, out)
			}
			cur := 0
			if len(out.Endpoint.Secrets) > 0 {
				cur = out.Endpoint.Secrets[0].Version
			}
			_, err = fmt.Fprintf(e.stdout, "%s: secret version %d\nsecret       %s\n             (shown only now; the previous secret also signs for %s)\n", id, cur, out.Secret, grace)
			return err
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", grace, "how long the previous secret also signs")
	return cmd
}

func newEndpointsTestCmd(e *env, g *globals, f *endpointsFlags) *cobra.Command {
	var payload string
	cmd := &cobra.Command{
		Use:   "test ID [--payload JSON|@FILE|@-]",
		Short: "Send the endpoint a test event (type herald.test)",
		Long: `Put an event of type herald.test on the event queue for this endpoint only
(whatever its filter): it is delivered as any event (signed, retried,
dead-lettered). --payload is its payload (default {"test":true}).`,
		Args: exactArgs(1, "one endpoint ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := endpointID(args)
			if err != nil {
				return err
			}
			p, err := readPayload(e, payload)
			if err != nil {
				return err
			}
			c, err := f.client(cmd.Context(), e, g)
			if err != nil {
				return err
			}
			out, err := c.Test(cmd.Context(), id, p)
			if err != nil {
				return apiError(err)
			}
			if g.json {
				return writeJSON(e.stdout, out)
			}
			_, err = fmt.Fprintf(e.stdout, "queued %s (%s) for %s; its fate: herald trace %s, or herald endpoints show %s\n", out.EventID, out.Type, out.Endpoint, out.EventID, out.Endpoint)
			return err
		},
	}
	cmd.Flags().StringVar(&payload, "payload", "", "the event's payload: JSON, @FILE or @- (stdin)")
	return cmd
}

// printEndpoint writes an endpoint as labelled lines.
func printEndpoint(w io.Writer, ep endpoints.Endpoint) error {
	types := "every type"
	if len(ep.EventTypes) > 0 {
		types = strings.Join(ep.EventTypes, ", ")
	}
	where := ep.URL
	if where == "" {
		where = ep.URLHost + " (a chat URL is shown by its host only)"
	}
	state := ep.State
	if ep.Disabled != nil {
		state = fmt.Sprintf("disabled since %s by %s: %s", rfc3339(ep.Disabled.At), ep.Disabled.By, ep.Disabled.Reason)
	}
	lines := [][2]string{
		{"id", ep.ID}, {"tenant", ep.Tenant}, {"kind", ep.Kind}, {"url", where}, {"event types", types}, {"state", state},
		{"version", strconv.FormatInt(ep.Version, 10)}, {"created", rfc3339(ep.CreatedAt)}, {"updated", rfc3339(ep.UpdatedAt)},
	}
	if ep.Description != "" {
		lines = append(lines, [2]string{"description", ep.Description})
	}
	if len(ep.HeaderNames) > 0 {
		lines = append(lines, [2]string{"headers", strings.Join(ep.HeaderNames, ", ") + " (values not shown)"})
	}
	if ep.RateLimit > 0 {
		lines = append(lines, [2]string{"rate limit", strconv.FormatFloat(ep.RateLimit, 'f', -1, 64) + " requests/s"})
	}
	if len(ep.Metadata) > 0 {
		var kv []string
		for k, v := range ep.Metadata {
			kv = append(kv, k+"="+v)
		}
		slices.Sort(kv)
		lines = append(lines, [2]string{"metadata", strings.Join(kv, ", ")})
	}
	for _, s := range ep.Secrets {
		v := "secret v" + strconv.Itoa(s.Version)
		text := "created " + rfc3339(s.CreatedAt)
		if s.Until != nil {
			text += ", signs until " + rfc3339(*s.Until)
		}
		lines = append(lines, [2]string{v, text})
	}
	for _, l := range lines {
		if _, err := fmt.Fprintf(w, "%-12s %s\n", l[0], printable(l[1])); err != nil {
			return err
		}
	}
	return nil
}
