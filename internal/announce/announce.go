// Package announce publishes herald's operational events to Amazon
// EventBridge, so that an operator or a tenant can route them (a rule to
// SNS, SQS, a Lambda function): a webhook or chat origin disabled
// (destination.disabled) and enabled again (destination.recovered).
//
// Each event is one PutEvents entry on the bus the Publisher names, with
// source "herald", detail-type the event's type and as detail a JSON
// object (Event's fields). It names the origin only as
// webhook.Origin writes it (scheme://host[:port]): no path, no query, no
// credentials. See
// https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html.
package announce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// Source is every herald event's source.
const Source = "herald"

// Detail types of herald's events.
const (
	// DestinationDisabled: an origin was disabled, by herald after no
	// success for the disable-after setting or by an operator.
	DestinationDisabled = "destination.disabled"
	// DestinationRecovered: an operator enabled a disabled origin.
	DestinationRecovered = "destination.recovered"
)

// MaxEntryBytes bounds an entry's size as EventBridge counts it: the bytes
// of its Source, DetailType and Detail (herald sends no Time and no
// Resources, which count too). "The maximum size for a PutEvents event
// entry is 256 KB" (API Reference, PutEvents; User Guide, "Calculating
// PutEvents event entry size"); AWS raised it to 1 MB in January 2026
// (AWS Compute Blog, "More room to build: serverless services now support
// payloads up to 1 MB"), and herald keeps the older bound, which every
// region and the local stack accept. herald's detail is under 3 KB: an
// origin's host is at most notification.MaxHostChars.
const MaxEntryBytes = 256 * 1024

// API is the EventBridge call a Publisher makes.
type API interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

var _ API = (*eventbridge.Client)(nil)

// Event is the detail of a destination event. Times are RFC 3339 UTC with
// whole seconds, absent when unknown.
type Event struct {
	// ID names this event: 32 hex digits given when it is recorded
	// (AppendPending), the same in every copy put of it. An event is put
	// at least once; a consumer deduplicates on ID. Two changes of an
	// origin within one second have the same origin, disabled_at and at,
	// but never the same ID.
	ID string `json:"id"`
	// Origin is scheme://host[:port], as webhook.Origin writes it.
	Origin string `json:"origin"`
	// State is the origin's state after the change: "disabled" or "closed".
	State string `json:"state"`
	// DisabledBy is "herald" or "operator" (store.DisabledBy…); for
	// destination.recovered, who had disabled it.
	DisabledBy string `json:"disabled_by,omitempty"`
	// ConsecutiveFailures and LastFailureClass are the origin's run of
	// failures when it was disabled.
	ConsecutiveFailures int    `json:"consecutive_failures"`
	LastFailureClass    string `json:"last_failure_class,omitempty"`
	FailingSince        string `json:"failing_since,omitempty"`
	LastFailure         string `json:"last_failure,omitempty"`
	LastSuccess         string `json:"last_success,omitempty"`
	DisabledAt          string `json:"disabled_at,omitempty"`
	// At is when the change was written.
	At string `json:"at"`
	// Sequence is the version of the origin's health item written with
	// the change (store.Health.Version): it grows with each change of the
	// origin, so a consumer that gets the origin's events out of order
	// (EventBridge does not keep order; two readers may put one late)
	// keeps the one of the highest Sequence as the origin's state. It
	// starts again only after the item was forgotten, 30 days without a
	// write: compare it between events less than 30 days apart (At).
	Sequence int64 `json:"sequence,omitempty"`
	// DroppedBefore counts the origin's events recorded before this one
	// and dropped unpublished (an item keeps MaxPending); absent when none.
	DroppedBefore int `json:"dropped_before,omitempty"`
}

// Time formats t for an Event: RFC 3339 UTC, "" for the zero time.
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Publisher puts events on one event bus.
type Publisher struct {
	api      API
	bus      string
	attempts int
	base     time.Duration
}

// Retries of a refused entry: EventBridge refuses an entry with a code a
// caller is to retry ("Retryable errors include: InternalFailure ...
// ThrottlingException"; API Reference, PutEventsResultEntry), and "You
// must detect unsuccessful entries and include them in a subsequent call"
// (User Guide, "Handling failures with PutEvents").
const (
	// DefaultAttempts is how many PutEvents calls Publish makes for one
	// entry at most. Defaults to 4.
	DefaultAttempts = 4
	// DefaultRetryBase is the wait before the first retry, doubled before
	// each next one (100, 200, 400 ms: 700 ms at most in all).
	DefaultRetryBase = 100 * time.Millisecond
)

// Option sets a Publisher's retries.
type Option func(*Publisher)

// WithRetries sets how many calls Publish makes for a refused entry at
// most (at least 1) and the first wait, doubled each time.
func WithRetries(attempts int, base time.Duration) Option {
	return func(p *Publisher) { p.attempts, p.base = max(attempts, 1), base }
}

// New returns a Publisher putting events on bus (a name or ARN; "default"
// is the account's default bus).
func New(api API, bus string, opts ...Option) (*Publisher, error) {
	if api == nil || bus == "" {
		return nil, errors.New("announce: an API and a bus are required")
	}
	p := &Publisher{api: api, bus: bus, attempts: DefaultAttempts, base: DefaultRetryBase}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// retryable reports whether EventBridge asks for an entry refused with
// code to be sent again.
func retryable(code string) bool {
	return code == "ThrottlingException" || code == "InternalFailure"
}

// Publish puts one event of detailType with detail e. An entry EventBridge
// refuses with a retryable code (ThrottlingException, InternalFailure) is
// sent again after a wait (DefaultRetryBase, doubling), up to
// DefaultAttempts calls, never waiting past ctx's deadline. It returns an
// error when the entry would be over MaxEntryBytes (without a call), when
// a call fails (the SDK's retryer has retried it), or when EventBridge
// refused the entry for good or on every attempt (the last error code and
// message).
func (p *Publisher) Publish(ctx context.Context, detailType string, e Event) error {
	if e.ID == "" {
		// Not recorded (AppendPending gives one): its retries below share it.
		e.ID = newID()
	}
	detail, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("publish %s of %s: %w", detailType, e.Origin, err)
	}
	if size := len(Source) + len(detailType) + len(detail); size > MaxEntryBytes {
		return fmt.Errorf("publish %s of %s: entry of %d bytes, above %d", detailType, e.Origin, size, MaxEntryBytes)
	}
	in := &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{{
		EventBusName: aws.String(p.bus),
		Source:       aws.String(Source),
		DetailType:   aws.String(detailType),
		Detail:       aws.String(string(detail)),
	}}}
	wait := p.base
	for attempt := 1; ; attempt++ {
		out, err := p.api.PutEvents(ctx, in)
		if err != nil {
			return fmt.Errorf("publish %s of %s: %w", detailType, e.Origin, err)
		}
		if out.FailedEntryCount == 0 {
			return nil
		}
		code, why := "", "no entry result"
		if len(out.Entries) > 0 {
			code = aws.ToString(out.Entries[0].ErrorCode)
			why = code + ": " + aws.ToString(out.Entries[0].ErrorMessage)
		}
		if !retryable(code) {
			return fmt.Errorf("publish %s of %s: refused: %s", detailType, e.Origin, why)
		}
		if attempt >= p.attempts {
			return fmt.Errorf("publish %s of %s: refused on each of %d attempts, the last: %s", detailType, e.Origin, attempt, why)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("publish %s of %s: refused (attempt %d, no time for another before the deadline): %s", detailType, e.Origin, attempt, why)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("publish %s of %s: refused (attempt %d): %s: %w", detailType, e.Origin, attempt, why, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}
