// Package outbound is the HTTP client of every request herald sends to a
// URL a producer chose (the webhook and chat channels), and the rules those
// requests share:
//
//   - The destination check ([CheckDestination], applied by [NewClient]'s
//     dialer to every address it is about to connect to, after resolution,
//     and by callers to a URL's literal address ([HostAddr]) and host name
//     ([CheckHostName]) before anything is resolved): no loopback, private,
//     link-local, metadata or other special-purpose address of the IANA
//     registries (RFC 6890) unless [ClientConfig.AllowCIDRs]
//     (HERALD_WEBHOOK_ALLOW_CIDRS, read by [ParseAllowCIDR]) lists it; a
//     blocked destination is a *[BlockedError] whose Advice names the
//     setting that opens it. docs/security.md lists the ranges.
//   - The transport: TLS 1.2 or later, HTTP/2 when the receiver offers it,
//     an HTTP/2 health check ([DefaultHealthCheck]), step timeouts, the pool
//     of idle connections per host, no proxy, no redirects, no compression.
//   - The attempt's timeout and its bounds ([DefaultTimeout], [MinTimeout],
//     [MaxTimeout]) and the User-Agent ([DefaultUserAgent]).
//   - The sorting of a failure to get a response into a [Failure]
//     ([TransportFailure]), which each sender turns into its own class.
//   - Retry-After ([ParseRetryAfter], at most [MaxRetryAfter]).
//   - Response excerpts for error texts ([Excerpt], [Scrub]): one printable
//     line, scrubbed of the URL's secrets and of what the request carried.
//
// It imports no sender: package webhook and package chat both import it,
// and neither imports the other.
package outbound
