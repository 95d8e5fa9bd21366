// Package endpointsend is the deliver function's middleware for
// deliveries that name a registered endpoint (webhook.endpoint,
// chat.endpoint; docs/endpoints.md "Delivery to an endpoint"): around the
// channel's own sender, it reads the endpoint through the endpoint
// store's cache, refuses one that is disabled, missing, another tenant's
// or of a kind the channel does not send to, waits for the endpoint's turn
// under its rate limit (package gcra, shared between execution
// environments through the store's pace item), and sends to the
// endpoint's URL with its own secrets and headers. Every failed attempt
// is recorded as one of the endpoint's failures.
//
// Its DestinationKey keys an endpoint delivery's health by the endpoint
// ("endpoint:ep_…"), so the processor's circuit, auto-disable and
// destination events, and `herald destinations`, act per endpoint; a
// message that names its URL inline goes to the wrapped sender unchanged.
package endpointsend
