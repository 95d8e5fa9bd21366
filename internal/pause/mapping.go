package pause

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// MappingAPI is the part of the Lambda API that pausing and resuming call.
type MappingAPI interface {
	ListEventSourceMappings(ctx context.Context, in *lambda.ListEventSourceMappingsInput, optFns ...func(*lambda.Options)) (*lambda.ListEventSourceMappingsOutput, error)
	UpdateEventSourceMapping(ctx context.Context, in *lambda.UpdateEventSourceMappingInput, optFns ...func(*lambda.Options)) (*lambda.UpdateEventSourceMappingOutput, error)
}

var _ MappingAPI = (*lambda.Client)(nil)

// Mapping is one event source mapping after a Pause or Resume.
type Mapping struct {
	// UUID identifies the mapping (the --uuid of the AWS CLI).
	UUID string
	// EventSourceARN is the queue's ARN.
	EventSourceARN string
	// State is the mapping's state as Lambda returned it after the update:
	// "Disabling"/"Disabled" after Pause, "Enabling"/"Enabled" after Resume.
	State string
}

// ErrNoMapping is returned when function has no event source mapping from
// the queue.
var ErrNoMapping = errors.New("no event source mapping found")

// Pause disables the event source mappings that invoke function (a name or
// ARN) from the queue sourceARN, or from any source when sourceARN is "".
// A mapping already disabled is left as it is, and so is one that another
// update is disabling at the same moment (another execution environment
// pausing too). It returns the mappings, ErrNoMapping when there is none,
// or the first Lambda API error. An update Lambda refuses because another
// is in progress (ResourceInUseException, ResourceConflictException: the
// mapping is Enabling, Disabling, or Updating while a stack update changes
// it, which can last minutes) is waited out: tried again after 1 s, then
// waits doubling up to 8 s, for as long as the waits and the Lambda calls'
// own time fit before ctx's deadline less 2 s (the invocation's, so the
// batch is still handed back in time), or in 30 s when ctx has none; then
// its error is returned.
//
// IAM: lambda:ListEventSourceMappings (no resource-level permission) and
// lambda:UpdateEventSourceMapping, which the template limits to mappings of
// this function with the lambda:FunctionArn condition key.
func Pause(ctx context.Context, api MappingAPI, function, sourceARN string) ([]Mapping, error) {
	return setEnabled(ctx, api, function, sourceARN, false)
}

// Resume enables the mappings Pause disables. It returns them, ErrNoMapping
// or the first Lambda API error; like Pause, it waits out an update in
// progress (a resume right after a pause, while the mapping is Disabling).
func Resume(ctx context.Context, api MappingAPI, function, sourceARN string) ([]Mapping, error) {
	return setEnabled(ctx, api, function, sourceARN, true)
}

// ResumeCommand is the AWS CLI command that resumes the mapping uuid.
func ResumeCommand(uuid string) string {
	return "aws lambda update-event-source-mapping --uuid " + uuid + " --enabled"
}

// Lambda's event source mapping states
// (EventSourceMappingConfiguration.State).
const (
	stateEnabled   = "Enabled"
	stateEnabling  = "Enabling"
	stateDisabled  = "Disabled"
	stateDisabling = "Disabling"
)

// List returns the event source mappings that invoke function (a name or
// ARN) from the queue sourceARN, or from any source when sourceARN is "",
// as Lambda reports them, every page read. It changes nothing (what
// `herald resume --dry-run` shows). It returns ErrNoMapping when there is
// none, or the Lambda API's error. IAM: lambda:ListEventSourceMappings.
func List(ctx context.Context, api lambda.ListEventSourceMappingsAPIClient, function, sourceARN string) ([]Mapping, error) {
	in := &lambda.ListEventSourceMappingsInput{FunctionName: aws.String(function)}
	if sourceARN != "" {
		in.EventSourceArn = aws.String(sourceARN)
	}
	var out []Mapping
	p := lambda.NewListEventSourceMappingsPaginator(api, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return out, fmt.Errorf("list event source mappings of %s: %w", function, err)
		}
		for _, m := range page.EventSourceMappings {
			out = append(out, Mapping{UUID: aws.ToString(m.UUID), EventSourceARN: aws.ToString(m.EventSourceArn), State: aws.ToString(m.State)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w for function %s from %q", ErrNoMapping, function, sourceARN)
	}
	return out, nil
}

// Enabled reports whether m is enabled or enabling: Resume leaves such a
// mapping as it is, and updates any other.
func (m Mapping) Enabled() bool { return done(m.State, true) }

func setEnabled(ctx context.Context, api MappingAPI, function, sourceARN string, enabled bool) ([]Mapping, error) {
	mappings, err := List(ctx, api, function, sourceARN)
	if err != nil {
		return nil, err
	}
	out := make([]Mapping, 0, len(mappings))
	for _, mapping := range mappings {
		m, err := update(ctx, api, function, sourceARN, mapping, enabled)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Waiting out an update in progress: busyWait is the pause before the first
// retry, doubled before each next one up to maxBusyWait (1 s, 2 s, 4 s, 8 s,
// 8 s, …). The waits add up to at most the time left before the context's
// deadline less busyMargin (the room to answer, and for the update calls
// themselves), or to busyBudget when the context has no deadline (herald
// resume, at a terminal).
const (
	busyWait    = time.Second
	maxBusyWait = 8 * time.Second
	busyMargin  = 2 * time.Second
	busyBudget  = 30 * time.Second
)

// waitBudget is how long update may spend waiting for ctx: until its
// deadline less busyMargin, or busyBudget.
func waitBudget(ctx context.Context) time.Duration {
	if deadline, ok := ctx.Deadline(); ok {
		return time.Until(deadline) - busyMargin
	}
	return busyBudget
}

// waitsKey carries, in a test's context, a function that is told each wait
// instead of sleeping it (export_test.go): the schedule is tested exactly,
// without a clock.
type waitsKey struct{}

// sleep waits d, or less when ctx ends first (then its cause).
func sleep(ctx context.Context, d time.Duration) error {
	if record, ok := ctx.Value(waitsKey{}).(func(time.Duration)); ok {
		record(d)
		return context.Cause(ctx)
	}
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(d):
		return nil
	}
}

// update sets mapping's Enabled unless it is already done. Lambda refuses
// an update while the mapping is in a transitional state (Creating,
// Enabling, Disabling, Updating) with ResourceInUseException, or with
// ResourceConflictException while another operation is in progress: what
// another execution environment pausing at the same moment, or a resume
// right after a pause, or a stack update (Updating), causes. Then update
// reads the mapping again: when the other update leads where this one does,
// the mapping is done; otherwise it waits and tries again, as long as the
// waits and the calls' own time fit in waitBudget (the waits are counted,
// not read from the clock, so that a test records them without sleeping;
// the calls are timed).
func update(ctx context.Context, api MappingAPI, function, sourceARN string, mapping Mapping, enabled bool) (Mapping, error) {
	// spent is the time the Lambda calls took (measured: each can take a
	// second), waited the waits': both count against the budget.
	wait, budget, waited, spent := busyWait, waitBudget(ctx), time.Duration(0), time.Duration(0)
	for attempt := 1; !done(mapping.State, enabled); attempt++ {
		if attempt > 1 {
			if err := sleep(ctx, wait); err != nil {
				return mapping, fmt.Errorf("update event source mapping %s (Enabled=%t): %w", mapping.UUID, enabled, err)
			}
			waited += wait
			wait = min(2*wait, maxBusyWait)
		}
		start := time.Now()
		upd, err := api.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{
			UUID:    aws.String(mapping.UUID),
			Enabled: aws.Bool(enabled),
		})
		spent += time.Since(start)
		if err == nil {
			mapping.State = aws.ToString(upd.State)
			return mapping, nil
		}
		err = fmt.Errorf("update event source mapping %s (Enabled=%t): %w", mapping.UUID, enabled, err)
		if !busy(err) {
			return mapping, err
		}
		if waited+spent+wait > budget {
			return mapping, fmt.Errorf("%w; still busy after %s of waiting and %s of calls, no time for another %s", err, waited, spent.Round(time.Millisecond), wait)
		}
		start = time.Now()
		mapping, err = find(ctx, api, function, sourceARN, mapping.UUID)
		spent += time.Since(start)
		if err != nil {
			return mapping, err
		}
	}
	return mapping, nil
}

// busy reports whether err is Lambda refusing an update because another
// one of the same mapping is in progress.
func busy(err error) bool {
	var inUse *types.ResourceInUseException
	var conflict *types.ResourceConflictException
	return errors.As(err, &inUse) || errors.As(err, &conflict)
}

// find lists the mappings again and returns the one of uuid.
func find(ctx context.Context, api MappingAPI, function, sourceARN, uuid string) (Mapping, error) {
	mappings, err := List(ctx, api, function, sourceARN)
	if err != nil {
		return Mapping{UUID: uuid}, err
	}
	for _, m := range mappings {
		if m.UUID == uuid {
			return m, nil
		}
	}
	return Mapping{UUID: uuid}, fmt.Errorf("%w: %s is gone", ErrNoMapping, uuid)
}

// done reports whether state is already where setEnabled(enabled) leads.
func done(state string, enabled bool) bool {
	if enabled {
		return state == stateEnabled || state == stateEnabling
	}
	return state == stateDisabled || state == stateDisabling
}
