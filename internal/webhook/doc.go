// Package webhook delivers a notification as an HTTPS POST signed per the
// Standard Webhooks specification, and tells the queue what to do when the
// delivery fails.
//
// The specification is https://www.standardwebhooks.com/ (text:
// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
//
// # Request
//
// [Sender.Send] makes one attempt: a POST to the message's webhook URL (https
// only) with the body
//
//	{"type":"<event_type>","timestamp":"<event time, RFC 3339, UTC>","data":<payload>}
//
// where the payload is inserted byte for byte and the event time is the
// message's created_at (the processor sets it, when the producer did not,
// to the SQS SentTimestamp), so that every attempt posts the same body
// ("Payload structure": when the event occurred, "not necessarily the same
// of when it was delivered"); and the headers
//
//	Content-Type: application/json
//	User-Agent: herald/1 (Config.UserAgent)
//	webhook-id: <message id>            (stable across retries: the idempotency key)
//	webhook-timestamp: <attempt time, unix seconds>
//	webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">
//
// The HMAC key is, by default (Config.SecretScope ScopeDestination), the
// key [DeriveSecretVersion] derives with HKDF from the signing secret for
// the URL's [Origin] and each of its active key versions (Config.KeyVersions;
// version 1 without a rotation), so that no receiver holds a key another
// receiver accepts ("Additional considerations" of the signature scheme)
// and one receiver's key can be rotated alone; with ScopeShared, the
// signing secret's key itself.
//
// plus the producer's own headers, which may not replace any of the above,
// Host, Content-Length, Content-Encoding or a hop-by-hop header (RFC 9110
// §7.6.1) ("Webhook headers" and "Signature scheme" in the specification).
// Redirects are never followed ("Delivery success and failure": update the
// URL instead); a 3xx is a failure, retried.
//
// With several active secrets (Config.Secrets, during a rotation),
// webhook-signature holds one such signature per secret, space-separated
// ("v1,<sig1> v1,<sig2>"); a receiver accepts the request if any verifies.
//
// A delivery to a registered endpoint ([Sender.SendTo], called by package
// endpointsend) is signed instead with the endpoint's own secrets, one
// signature per secret still in its grace period, and carries the
// endpoint's custom headers and [HeaderEventType]; everything else is as
// above.
//
// # Outcome
//
// Send returns nil for a 2xx status, else a [delivery.PermanentError] or a
// [delivery.TransientError] whose Class names the cause. Every non-2xx
// status is a failure that is retried, except 410 Gone and the statuses of
// Config.StopStatuses ("Delivery success and failure" in the
// specification):
//
//	2xx                         delivered (nil)
//	410                         permanent webhook_gone
//	Config.StopStatuses         permanent webhook_stop_status
//	3xx                         transient webhook_redirect
//	408, 425, 429               transient webhook_http_408, webhook_http_425, webhook_http_429
//	other 4xx                   transient webhook_http_4xx
//	5xx                         transient webhook_http_5xx
//	1xx, status ≥ 600           transient webhook_http_other
//	timeout                     transient webhook_timeout
//	DNS failure                 transient webhook_dns
//	refused, reset, cut short   transient webhook_connection
//	TLS or certificate failure  transient webhook_tls
//	other transport failure     transient webhook_network
//	caller's context done       transient invocation_deadline
//	blocked destination         permanent webhook_blocked_destination (address or special-use name)
//	non-https or unusable URL   permanent webhook_invalid_url
//	reserved custom header      permanent webhook_reserved_header
//	malformed webhook fields    permanent invalid_message
//
// # Destinations
//
// Producers choose webhook URLs, so a URL must not reach what herald's own
// network position can: the instance metadata service (169.254.169.254),
// loopback services, the VPC. The transport's dialer (package outbound,
// shared with chat) checks every address it is about to connect to with
// outbound.CheckDestination (net.Dialer
// ControlContext: after name resolution, before the connection), so host
// names, DNS rebinding and every spelling of an address are judged by the
// address actually dialled. Loopback, private, link-local, shared (CGNAT),
// multicast, unspecified, broadcast, documentation, benchmarking, reserved
// and other special-purpose ranges of the IANA registries (RFC 6890) are
// blocked unless [Config.AllowCIDRs] lists them; so are IPv6 addresses
// outside 2000::/3 and NAT64 addresses embedding a blocked IPv4 address. A
// URL whose host is a blocked literal address, in any spelling (2130706433,
// 0x7f.1, [::ffff:127.0.0.1]), fails before anything is resolved or dialled,
// and so does a special-use host name (localhost and names under it, .local,
// .onion, home.arpa, .internal, a single label, ...; RFC 6761 and its
// successors), judged by name whatever DNS would answer.
// Proxies from the environment are never used, and redirects are never
// followed, so no other hop needs checking. docs/security.md lists the
// ranges and their sources.
//
// # Transport
//
// One Sender keeps its connections across calls: build one per process.
// At most [Config.MaxInFlightPerDestination] requests (default
// [DefaultMaxInFlightPerDestination]) are in flight to one origin (scheme,
// host and port) at once, however many Sends run concurrently; the others
// wait for a free slot, bounded by their context, and their Timeout and
// signed timestamp start once they have one. The pool keeps as many idle
// connections per origin, so a warm Sender opens no new connection to a
// destination it already talks to. HTTP/2 is used when the receiver offers
// it in ALPN (RFC 9113 §3.2), HTTP/1.1 otherwise. An HTTP/2 connection
// silent for outbound.DefaultHealthCheck gets a PING (RFC 9113 §6.7) and is closed
// when that goes unanswered as long again, so a connection a receiver or a
// proxy keeps open without answering is replaced within seconds instead of
// failing every later request to that origin (docs/reliability.md,
// "Stalled connections").
//
// A 429 or 503 response's Retry-After header (RFC 9110 §10.2.3) becomes the
// TransientError's RetryAfter, at most outbound.MaxRetryAfter.
//
// Error texts name the endpoint by scheme and host only: a webhook URL's
// path, query and userinfo often carry credentials, so they never appear in
// an error, and neither do the secret or the request body. A receiver's
// echo of what the request carried (userinfo, the Basic authorization made
// of it, producer header values, signatures) is scrubbed from the excerpt
// of its answer in the encodings receivers use (raw, base64, percent- and
// JSON-escaped, and others: see package outbound's scrub.go).
package webhook
