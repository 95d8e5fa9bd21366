package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/eventbridgetest"
	"github.com/heraldhq/herald/internal/testkit/templatetest"
)

// TestDestinationsUsage: each command needs a store table and show,
// enable and disable one URL with an origin; each mistake is a usage
// error.
func TestDestinationsUsage(t *testing.T) {
	t.Parallel()
	table := map[string]string{"HERALD_STORE_TABLE": "herald-store"}
	for _, tc := range []struct {
		vars map[string]string
		args []string
		want string
	}{
		{nil, []string{"destinations", "ls"}, "no store table"},
		{nil, []string{"destinations", "disable", "https://hooks.example.com/x"}, "no store table"},
		{table, []string{"destinations", "show"}, "one URL or origin"},
		{table, []string{"destinations", "enable", "a", "b"}, "one URL or origin"},
		{table, []string{"destinations", "disable", "ftp://hooks.example.com/x"}, "https"},
		{table, []string{"destinations", "ls", "extra"}, "takes no arguments"},
		{map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_CIRCUIT_THRESHOLD": "ten"}, []string{"destinations", "ls"}, "HERALD_CIRCUIT_THRESHOLD"},
		{map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_CIRCUIT_THRESHOLD": "-1"}, []string{"destinations", "ls"}, "HERALD_CIRCUIT_THRESHOLD"},
		// 0 is a threshold (the circuit never opens): the next check speaks.
		{map[string]string{"HERALD_CIRCUIT_THRESHOLD": "0"}, []string{"destinations", "ls"}, "no store table"},
	} {
		r := heraldWith(t, tc.vars, tc.args...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
}

// TestDestinationsDisableShowEnable: against the DynamoDB wire fake (the
// SDK's endpoint variable), disable writes the origin of a URL (no path,
// no credentials) as disabled by the operator; ls lists it beside an open
// and a closed origin; enable closes it and forgets its failures; enable
// leaves an origin that is not disabled as it is.
func TestDestinationsDisableShowEnable(t *testing.T) { // t.Setenv: not parallel
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddb.URL())
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	eb := eventbridgetest.New(t)
	t.Setenv("AWS_ENDPOINT_URL_EVENTBRIDGE", eb.URL())
	vars := map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_CIRCUIT_THRESHOLD": "3", "HERALD_EVENT_BUS": "default"}
	st, err := store.New(ddb.Client(), store.Config{Table: "herald-store"})
	require.NoError(t, err)
	ctx := context.Background()
	for origin, failures := range map[string]int{"https://down.example.com": 5, "https://flaky.example.com:8443": 2} {
		_, _, err := st.UpdateHealth(ctx, store.Health{Origin: origin}, func(h *store.Health) bool {
			h.Failures, h.FailureClass = failures, "webhook_timeout"
			return true
		})
		require.NoError(t, err)
	}

	r := heraldWith(t, vars, "--json", "destinations", "disable", "https://user:pw@Hooks.Example.com:443/secret-path?q=1")
	require.Equal(t, exitOK, r.code, "%+v", r)
	var d destination
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
	require.Equal(t, "https://hooks.example.com", d.Origin)
	require.Equal(t, string(circuit.Disabled), d.State)
	require.Equal(t, store.DisabledByOperator, d.DisabledBy)
	require.NotEmpty(t, d.DisabledAt)

	r = heraldWith(t, vars, "destinations", "disable", "https://hooks.example.com")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "already disabled")

	r = heraldWith(t, vars, "--json", "destinations", "ls")
	require.Equal(t, exitOK, r.code, "%+v", r)
	var ds []destination
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ds), r.stdout)
	require.Len(t, ds, 3)
	states := map[string]string{}
	for _, x := range ds {
		states[x.Origin] = x.State
	}
	require.Equal(t, map[string]string{
		"https://down.example.com":       string(circuit.Open),
		"https://flaky.example.com:8443": string(circuit.Closed),
		"https://hooks.example.com":      string(circuit.Disabled),
	}, states)

	r = heraldWith(t, vars, "destinations", "ls")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "ORIGIN")
	require.Contains(t, r.stdout, "webhook_timeout")
	require.NotContains(t, r.stdout, "secret-path")

	r = heraldWith(t, vars, "destinations", "enable", "https://hooks.example.com/other-path")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Equal(t, "https://hooks.example.com enabled\n", r.stdout)
	evs := eb.Events()
	require.Len(t, evs, 2, "one disabled, one recovered: no event when nothing changed")
	require.Equal(t, "destination.disabled", evs[0].DetailType)
	require.Equal(t, "operator", evs[0].Detail["disabled_by"])
	require.Equal(t, "https://hooks.example.com", evs[0].Detail["origin"])
	require.Equal(t, "destination.recovered", evs[1].DetailType)
	require.Equal(t, "closed", evs[1].Detail["state"])
	require.Equal(t, "operator", evs[1].Detail["disabled_by"])
	require.Equal(t, evs[0].Detail["disabled_at"], evs[1].Detail["disabled_at"])
	// Within one second both have the same origin, disabled_at and at:
	// the id, which consumers deduplicate on, tells them apart, and the
	// sequence orders them.
	require.Regexp(t, `^[0-9a-f]{32}$`, evs[0].Detail["id"])
	require.Regexp(t, `^[0-9a-f]{32}$`, evs[1].Detail["id"])
	require.NotEqual(t, evs[0].Detail["id"], evs[1].Detail["id"])
	require.Less(t, evs[0].Detail["sequence"], evs[1].Detail["sequence"])
	require.NotContains(t, fmt.Sprint(evs), "secret-path")
	require.NotContains(t, fmt.Sprint(evs), "pw")

	r = heraldWith(t, vars, "--json", "destinations", "show", "https://hooks.example.com/x")
	require.Equal(t, exitOK, r.code, "%+v", r)
	d = destination{}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
	require.Equal(t, destination{Origin: "https://hooks.example.com", State: string(circuit.Closed)}, d)

	r = heraldWith(t, vars, "--json", "destinations", "enable", "https://down.example.com")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, `"state": "open"`, "an open circuit that is not disabled is left as it is")

	r = heraldWith(t, vars, "destinations", "show", "https://never.example.com")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "closed")
	require.Len(t, eb.Events(), 2)

	// A bus that does not exist: the change is made, the command fails
	// and says the event was not published.
	vars["HERALD_EVENT_BUS"] = "nope"
	r = heraldWith(t, vars, "destinations", "disable", "https://other.example.com")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "disabled, but its event was not published")
	require.Contains(t, r.stderr, "ResourceNotFoundException")
	h, err := st.Health(ctx, "https://other.example.com")
	require.NoError(t, err)
	require.Contains(t, h.PendingEvents, "destination.disabled", "recorded with the change")

	// The bus fixed, the same command again changes nothing but puts the
	// event it could not; a third run puts nothing.
	vars["HERALD_EVENT_BUS"] = "default"
	r = heraldWith(t, vars, "destinations", "disable", "https://other.example.com")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "already disabled")
	evs = eb.Events()
	require.Len(t, evs, 3)
	require.Equal(t, "destination.disabled", evs[2].DetailType)
	require.Equal(t, "https://other.example.com", evs[2].Detail["origin"])
	h, err = st.Health(ctx, "https://other.example.com")
	require.NoError(t, err)
	require.Empty(t, h.PendingEvents, "removed once put")
	r = heraldWith(t, vars, "destinations", "disable", "https://other.example.com")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Len(t, eb.Events(), 3)

	// EventBridge throttles the entry on every attempt: enabled, the
	// command fails after its retries; then, once EventBridge takes it,
	// enable again finishes it. One refusal alone is retried at once.
	eb.Refuse(eventbridgetest.CodeThrottling, eventbridgetest.CodeInternalFailure, eventbridgetest.CodeThrottling, eventbridgetest.CodeThrottling)
	calls := eb.Calls()
	r = heraldWith(t, vars, "destinations", "enable", "https://other.example.com")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "enabled, but its event was not published")
	require.Contains(t, r.stderr, "refused on each of 4 attempts")
	require.Equal(t, calls+4, eb.Calls())
	require.Len(t, eb.Events(), 3)
	r = heraldWith(t, vars, "destinations", "enable", "https://other.example.com")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "already enabled")
	evs = eb.Events()
	require.Len(t, evs, 4)
	require.Equal(t, "destination.recovered", evs[3].DetailType)
	require.Equal(t, "https://other.example.com", evs[3].Detail["origin"])

	eb.Refuse(eventbridgetest.CodeInternalFailure)
	r = heraldWith(t, vars, "destinations", "disable", "https://other.example.com")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Len(t, eb.Events(), 5, "refused once, put on the retry")
}

// TestDestinationsChatWebhook: a chat webhook herald disabled as gone is
// addressed by its key (as a dead letter's reason prints it) or by its URL
// on the service's host (any API version, any Discord host), and nothing
// printed holds the URL's token; a malformed key is a usage error.
func TestDestinationsChatWebhook(t *testing.T) { // t.Setenv: not parallel
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddb.URL())
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	vars := map[string]string{"HERALD_STORE_TABLE": "herald-store"}
	st, err := store.New(ddb.Client(), store.Config{Table: "herald-store"})
	require.NoError(t, err)
	const hook = "https://discord.com/api/webhooks/1234567/tokSecret7Q"
	key, err := chat.Destination("discord", hook)
	require.NoError(t, err)
	_, _, err = st.UpdateHealth(context.Background(), store.Health{Origin: key}, func(h *store.Health) bool {
		h.FailureClass, h.DisabledBy = "discord_unknown_webhook", store.DisabledByHerald
		h.DisabledAt, h.LastFailure = time.Now(), time.Now()
		return true
	})
	require.NoError(t, err)

	for _, arg := range []string{hook, "https://discordapp.com/api/v10/webhooks/1234567/tokSecret7Q?wait=true", key} {
		r := heraldWith(t, vars, "--json", "destinations", "show", arg)
		require.Equal(t, exitOK, r.code, "%+v", r)
		var d destination
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
		require.Equal(t, key, d.Origin, arg)
		require.Equal(t, string(circuit.Disabled), d.State)
		require.NotContains(t, r.stdout+r.stderr, "tokSecret7Q")
	}
	r := heraldWith(t, vars, "destinations", "ls")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, key)
	r = heraldWith(t, vars, "destinations", "enable", hook)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Equal(t, key+" enabled\n", r.stdout)
	require.NotContains(t, r.stdout+r.stderr, "tokSecret7Q")
	h, err := st.Health(context.Background(), key)
	require.NoError(t, err)
	require.False(t, h.Disabled())

	for _, bad := range []string{"chat:discord:abc", "chat:irc:" + strings.Repeat("a", 32), "chat:slack:" + strings.Repeat("A", 32)} {
		r := heraldWith(t, vars, "destinations", "enable", bad)
		require.Equal(t, exitUsage, r.code, "%s: %+v", bad, r)
		require.Contains(t, r.stderr, "32 hex digits")
	}
}

// TestDestinationsEndpoint: a registered endpoint's health is kept under
// endpoint:ep_…, named by that key or by the endpoint's id alone; a
// malformed id is no endpoint (read as a URL: a usage error).
func TestDestinationsEndpoint(t *testing.T) { // t.Setenv: not parallel
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddb.URL())
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	vars := map[string]string{"HERALD_STORE_TABLE": "herald-store"}
	st, err := store.New(ddb.Client(), store.Config{Table: "herald-store"})
	require.NoError(t, err)
	const id = "ep_01jekz5v8n3q4r5s6t7v8w9x0y"
	_, _, err = st.UpdateHealth(context.Background(), store.Health{Origin: "endpoint:" + id}, func(h *store.Health) bool {
		h.FailureClass, h.DisabledBy = "webhook_http_5xx", store.DisabledByHerald
		h.DisabledAt, h.LastFailure = time.Now(), time.Now()
		return true
	})
	require.NoError(t, err)
	for _, arg := range []string{id, "endpoint:" + id} {
		r := heraldWith(t, vars, "--json", "destinations", "show", arg)
		require.Equal(t, exitOK, r.code, "%+v", r)
		var d destination
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
		require.Equal(t, "endpoint:"+id, d.Origin, arg)
		require.Equal(t, string(circuit.Disabled), d.State)
	}
	r := heraldWith(t, vars, "destinations", "enable", id)
	require.Equal(t, exitOK, r.code, "%+v", r)
	h, err := st.Health(context.Background(), "endpoint:"+id)
	require.NoError(t, err)
	require.False(t, h.Disabled())
	for _, bad := range []string{"ep_short", "endpoint:ep_short", "endpoint:" + strings.ToUpper(id)} {
		r := heraldWith(t, vars, "destinations", "show", bad)
		require.Equal(t, exitUsage, r.code, "%s: %+v", bad, r)
	}
}

// TestDestinationsThresholdOfTheStack: with --stack, ls and show tell
// open from closed by the threshold the deliver function runs with, the
// stack's CircuitThreshold output (3 here: an origin with 5 failures is
// open, as the function holds its notifications back), over
// HERALD_CIRCUIT_THRESHOLD as the table and the bus are; a stack deployed
// before the output existed falls back to the variable, then to the
// default (10); an output that is no whole number is a usage error.
func TestDestinationsThresholdOfTheStack(t *testing.T) { // t.Setenv: not parallel
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	st, err := store.New(ddb.Client(), store.Config{Table: "herald-store"})
	require.NoError(t, err)
	_, _, err = st.UpdateHealth(context.Background(), store.Health{Origin: "https://down.example.com"}, func(h *store.Health) bool {
		h.Failures, h.FailureClass = 5, "webhook_http_5xx"
		return true
	})
	require.NoError(t, err)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddb.URL())
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	state := func(outputs, vars map[string]string) result {
		t.Helper()
		t.Setenv("AWS_ENDPOINT_URL_CLOUDFORMATION", cfnURL(t, "herald", outputs))
		return heraldWith(t, vars, "--stack", "herald", "--json", "destinations", "show", "https://down.example.com")
	}
	shown := func(r result) string {
		t.Helper()
		require.Equal(t, exitOK, r.code, "%+v", r)
		var d destination
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
		return d.State
	}
	withThreshold := map[string]string{outputStoreTable: "herald-store", outputCircuitThreshold: "3"}
	require.Equal(t, string(circuit.Open), shown(state(withThreshold, nil)), "the stack's threshold, 3")
	require.Equal(t, string(circuit.Open), shown(state(withThreshold, map[string]string{"HERALD_CIRCUIT_THRESHOLD": "10"})), "the stack's, not the shell's")
	old := map[string]string{outputStoreTable: "herald-store"}
	require.Equal(t, string(circuit.Closed), shown(state(old, nil)), "no output: the default, 10")
	require.Equal(t, string(circuit.Open), shown(state(old, map[string]string{"HERALD_CIRCUIT_THRESHOLD": "5"})), "no output: the variable")
	r := state(map[string]string{outputStoreTable: "herald-store", outputCircuitThreshold: "ten"}, nil)
	require.Equal(t, exitUsage, r.code, "%+v", r)
	require.Contains(t, r.stderr, `the stack's CircuitThreshold output "ten"`)
	r = heraldWith(t, map[string]string{"HERALD_STORE_TABLE": "herald-store"}, "--json", "destinations", "ls")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, `"state": "closed"`, "no stack, no variable: the default")
}

// TestTemplateOutputsTheCircuitThreshold: the stack outputs the
// CircuitThreshold parameter the deliver function runs with, which
// `herald destinations --stack` reads.
func TestTemplateOutputsTheCircuitThreshold(t *testing.T) {
	t.Parallel()
	root := templatetest.Root(t)
	v := templatetest.Path(root, "Outputs", outputCircuitThreshold, "Value")
	require.NotNil(t, v)
	require.Equal(t, "!Ref", v.Tag)
	require.Equal(t, "CircuitThreshold", v.Value)
	require.NotNil(t, templatetest.Path(root, "Parameters", "CircuitThreshold"))
	env := templatetest.Path(root, "Resources", "DeliverFunction", "Properties", "Environment", "Variables", "HERALD_CIRCUIT_THRESHOLD")
	require.NotNil(t, env)
	require.Equal(t, "CircuitThreshold", env.Value, "the function's threshold is that parameter")
}

// TestDestinationsSayWhenTheCircuitIsOff: at threshold 0 the deliver
// function wraps no circuit, so a disabled destination is still sent to;
// the commands still store and show the disable, and say on stderr that
// it holds nothing back (stdout, --json's included, is unchanged).
func TestDestinationsSayWhenTheCircuitIsOff(t *testing.T) { // t.Setenv: not parallel
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddb.URL())
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	off := map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_CIRCUIT_THRESHOLD": "0"}
	r := heraldWith(t, off, "--json", "destinations", "disable", "https://hooks.example.com")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stderr, "the circuit is off (threshold 0)")
	var d destination
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
	require.Equal(t, string(circuit.Disabled), d.State, "the disable is stored")
	r = heraldWith(t, off, "destinations", "ls")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stderr, "the circuit is off")
	on := map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_CIRCUIT_THRESHOLD": "1"}
	r = heraldWith(t, on, "destinations", "ls")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Empty(t, r.stderr)
}
