// Package circuit is herald's circuit breaker per destination: the state
// of a destination's health (closed, open, disabled), the transitions a
// send's outcome makes, and the rule "is this destination open?", used by
// the deliver function's middleware around each send (Breaker) and by
// `herald destinations` alike.
//
// A destination is keyed by its Sender's DestinationKey
// (delivery.DestinationKeyer: a chat webhook's identity, package chat) or else by the origin of its URL (scheme, host,
// port, as webhook.Origin writes it); its health is one item of the store
// (package store, Health), shared by every execution environment.
//
// The states (docs/operations.md "Destination states"):
//   - closed: fewer than Threshold consecutive origin-down failures
//     (delivery.OriginDown); every record is sent;
//   - open: Threshold or more; one probe at a time is let through from the
//     next probe time on (ProbeInterval after the last failure), every
//     other record is retried at that time (ClassCircuitOpen);
//   - disabled: by herald after DisableAfter of failures with no success,
//     by a destination that said it is gone (delivery.DestinationGone), or
//     by an operator; every record is dead-lettered at once
//     (ClassDestinationDisabled) until `herald destinations enable`.
//
// The model is convoy's pkg/circuit_breaker and Svix's disabling of failing
// endpoints (https://docs.svix.com/retries).
package circuit
