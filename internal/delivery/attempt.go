package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DeliveredError is the outcome of a send a middleware settled as
// delivered without sending: the notification was delivered before (At,
// as the delivered-once store recorded it), and this copy is acknowledged
// unsent. The processor settles it as a duplicate; it is neither
// permanent nor transient (Classify sees an unknown class), so a
// middleware further out (the circuit) counts it as no answer of the
// destination.
type DeliveredError struct {
	At  time.Time
	Err error
}

func (e *DeliveredError) Error() string {
	return fmt.Sprintf("delivered at %s: %v", e.At.UTC().Format(time.RFC3339), e.Err)
}

func (e *DeliveredError) Unwrap() error { return e.Err }

// AlreadyDelivered reports whether err says the notification was
// delivered before, and when.
func AlreadyDelivered(err error) (time.Time, bool) {
	var d *DeliveredError
	if errors.As(err, &d) {
		return d.At, true
	}
	return time.Time{}, false
}

// MaxLease is how long a lease taken for an attempt lasts when the
// invocation has no deadline: the longest a Lambda invocation can run
// (15 minutes).
const MaxLease = 15 * time.Minute

// leaseMargin is added to the invocation's deadline, for the clocks of two
// execution environments that differ by a little.
const leaseMargin = time.Second

// Attempt is one record's attempt as the processor and the middlewares
// around its send share it (river's job middleware sees its job row the
// same way): what a middleware tells the processor beside the send's
// error, for the record's log line and the batch's metrics. The processor
// puts one in each send's context (NewContext); a middleware finds it with
// AttemptFrom. A nil *Attempt (a send outside the processor) takes every
// note and keeps none. It is safe for concurrent use.
type Attempt struct {
	// Number is the attempt's number: the record's SQS receive count, 1 for
	// the first attempt; 0 when unknown.
	Number int

	// Deadline is the invocation's deadline, zero when it has none. The
	// send's context ends earlier (the processor keeps a reserve for its
	// SQS calls); what a middleware writes after the send, and a lease it
	// takes, run to Deadline.
	Deadline time.Time

	mu       sync.Mutex
	storeErr error
	disabled bool
}

type attemptKey struct{}

// NewContext returns ctx carrying a.
func NewContext(ctx context.Context, a *Attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// WithAttempt returns ctx carrying an Attempt numbered n, for a send made
// outside the processor (a test, a command) that a middleware recording
// attempts wraps.
func WithAttempt(ctx context.Context, n int) context.Context {
	return NewContext(ctx, &Attempt{Number: n})
}

// AttemptOf is the number of the Attempt ctx carries, 0 when none.
func AttemptOf(ctx context.Context) int {
	if a := AttemptFrom(ctx); a != nil {
		return a.Number
	}
	return 0
}

// AttemptFrom returns the Attempt ctx carries, nil when none.
func AttemptFrom(ctx context.Context) *Attempt {
	a, _ := ctx.Value(attemptKey{}).(*Attempt)
	return a
}

// StoreFailed notes a failed call to a store (delivered-once, destination
// health) for the attempt, joined to any earlier one: logged with the
// record (store_error) and counted (StoreErrors).
func (a *Attempt) StoreFailed(err error) {
	if a == nil || err == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.storeErr = errors.Join(a.storeErr, err)
}

// StoreError returns the failed store calls noted, nil when none.
func (a *Attempt) StoreError() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.storeErr
}

// DisabledDestination notes that this attempt's failure disabled its
// destination (the write that made the transition was this attempt's):
// counted (DestinationsDisabled).
func (a *Attempt) DisabledDestination() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.disabled = true
}

// Disabled reports whether DisabledDestination was noted.
func (a *Attempt) Disabled() bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.disabled
}

// LeaseUntil is when a lease taken for the attempt in ctx at now ends:
// the invocation's deadline (the Attempt's, else ctx's) plus a second for
// the clocks of two execution environments, or MaxLease after now when
// there is none.
func LeaseUntil(ctx context.Context, now time.Time) time.Time {
	if a := AttemptFrom(ctx); a != nil && !a.Deadline.IsZero() {
		return a.Deadline.Add(leaseMargin)
	}
	if d, ok := ctx.Deadline(); ok {
		return d.Add(leaseMargin)
	}
	return now.Add(MaxLease)
}

// AfterSend returns the context for what a middleware writes after the
// send (a lease's release, a health change): ctx's values, but not its
// end, which the processor sets a reserve before the invocation's; it
// ends at the invocation's deadline (the Attempt's) instead, or never
// when there is none.
func AfterSend(ctx context.Context) (context.Context, context.CancelFunc) {
	out := context.WithoutCancel(ctx)
	if a := AttemptFrom(ctx); a != nil && !a.Deadline.IsZero() {
		return context.WithDeadline(out, a.Deadline)
	}
	return context.WithCancel(out)
}
