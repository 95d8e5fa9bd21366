package circuit

import (
	"time"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
)

// Circuit defaults (docs/configuration.md says why).
const (
	DefaultThreshold     = 10
	DefaultProbeInterval = time.Minute
	// DefaultDisableAfter is 5 days, as Svix disables an endpoint: a
	// receiver down over a weekend plus a working day is not disabled.
	DefaultDisableAfter = 5 * 24 * time.Hour
)

// FailureRunGap ends a run of failures: an origin-down failure more than
// this after the origin's last recorded one starts a new run (one failure,
// failing since now) instead of adding to the old one. So an origin is
// disabled only when it failed across the whole disable-after period,
// never more than FailureRunGap apart: Svix disables an endpoint only when
// "all attempts ... fail for a period of 5 days", a clock it starts "after
// multiple deliveries failed within a 24 hour span"
// (https://docs.svix.com/retries, "Disabling failing endpoints"). A
// quiet origin's old failures say nothing of it now. 24 h is twice SQS's
// longest visibility timeout (12 h), herald's longest wait between two
// attempts of one notification, so a receiver that keeps failing keeps
// its run. docs/operations.md "Destination states".
const FailureRunGap = 24 * time.Hour

// ClassCircuitOpen is the class of a record not sent because its origin's
// circuit is open: it is retried at the next probe time or after its
// backoff delay, whichever is later.
var ClassCircuitOpen = delivery.NewClass("destination_circuit_open")

// ClassDestinationDisabled is the class of a record dead-lettered at once
// because its origin is disabled (docs/operations.md "Destination
// states"): redrive it after `herald destinations enable`.
var ClassDestinationDisabled = delivery.NewClass("destination_disabled")

// State is a destination's state as `herald destinations` names it.
type State string

// The states of a destination (docs/operations.md "Destination states").
const (
	Closed   State = "closed"
	Open     State = "open"
	Disabled State = "disabled"
)

// Rules are the numbers of the state machine. The zero Rules has the
// circuit off: nothing is ever open. StateOf still names a stored disable,
// but a Breaker off holds nothing back (Wrap returns the sender): a
// disabled destination is sent to until Threshold is above 0.
type Rules struct {
	// Threshold is the number of consecutive origin-down failures that
	// open a destination's circuit; 0 turns the circuit off. The deliver
	// function's default is [DefaultThreshold].
	Threshold int
	// ProbeInterval is how long after an open circuit's last failure its
	// next probe is let through. Defaults to [DefaultProbeInterval].
	ProbeInterval time.Duration
	// DisableAfter disables a destination whose circuit is open and whose
	// consecutive failures began this long ago with no success since. 0
	// never disables one automatically. The deliver function's default is
	// [DefaultDisableAfter].
	DisableAfter time.Duration
}

// StateOf is h's state under r: disabled, else open from Threshold
// consecutive failures on (never with Threshold 0), else closed.
func (r Rules) StateOf(h store.Health) State {
	switch {
	case h.Disabled():
		return Disabled
	case r.Open(h):
		return Open
	}
	return Closed
}

// Open reports whether h's circuit is open: Threshold is above 0 and h
// has Threshold or more consecutive failures (disabled or not).
func (r Rules) Open(h store.Health) bool {
	return r.Threshold > 0 && h.Failures >= r.Threshold
}

// NextProbe is when an open circuit lets its next probe through: a probe
// interval after the last failure, and not before a probe lease ends.
func (r Rules) NextProbe(h store.Health) time.Time {
	interval := r.ProbeInterval
	if interval <= 0 {
		interval = DefaultProbeInterval
	}
	at := h.LastFailure.Add(interval)
	if h.ProbeUntil.After(at) {
		at = h.ProbeUntil
	}
	return at
}

// RunEnded reports whether h's run of failures ended before a failure at
// now: its last failure is FailureRunGap or longer ago.
func RunEnded(h store.Health, now time.Time) bool {
	return !h.LastFailure.IsZero() && now.Sub(h.LastFailure) >= FailureRunGap
}

// Disables reports whether h, after a failure at now, disables its
// destination: DisableAfter is set, the circuit is open, it is not
// disabled yet and its run of failures (no two failures FailureRunGap or
// more apart: RunEnded) began DisableAfter or longer ago.
func (r Rules) Disables(h store.Health, now time.Time) bool {
	return r.DisableAfter > 0 && r.Open(h) && !h.Disabled() &&
		!h.FailingSince.IsZero() && now.Sub(h.FailingSince) >= r.DisableAfter
}

// DisabledEvent is the detail of destination.disabled for h, written at.
func DisabledEvent(h store.Health, at time.Time) announce.Event {
	return announce.Event{
		Origin: h.Origin, State: string(Disabled), DisabledBy: h.DisabledBy,
		ConsecutiveFailures: h.Failures, LastFailureClass: h.FailureClass,
		FailingSince: announce.Time(h.FailingSince), LastFailure: announce.Time(h.LastFailure),
		LastSuccess: announce.Time(h.LastSuccess), DisabledAt: announce.Time(h.DisabledAt), At: announce.Time(at),
	}
}
