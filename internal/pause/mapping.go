package pause

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
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
// A mapping already disabled is left as it is. It returns the mappings,
// ErrNoMapping when there is none, or the first Lambda API error.
//
// IAM: lambda:ListEventSourceMappings (no resource-level permission) and
// lambda:UpdateEventSourceMapping, which the template limits to mappings of
// this function with the lambda:FunctionArn condition key.
func Pause(ctx context.Context, api MappingAPI, function, sourceARN string) ([]Mapping, error) {
	return setEnabled(ctx, api, function, sourceARN, false)
}

// Resume enables the mappings Pause disables. It returns them, ErrNoMapping
// or the first Lambda API error.
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
		if done(mapping.State, enabled) {
			out = append(out, mapping)
			continue
		}
		upd, err := api.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{
			UUID:    aws.String(mapping.UUID),
			Enabled: aws.Bool(enabled),
		})
		if err != nil {
			return out, fmt.Errorf("update event source mapping %s (Enabled=%t): %w", mapping.UUID, enabled, err)
		}
		mapping.State = aws.ToString(upd.State)
		out = append(out, mapping)
	}
	return out, nil
}

// done reports whether state is already where setEnabled(enabled) leads.
func done(state string, enabled bool) bool {
	if enabled {
		return state == stateEnabled || state == stateEnabling
	}
	return state == stateDisabled || state == stateDisabling
}
