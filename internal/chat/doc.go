// Package chat delivers chat notifications (contract channel "chat") to the
// incoming webhooks of Slack, Discord and Microsoft Teams, each in its own
// wire format, with its own success statuses, error classes, hosts and rate
// limits (docs/delivery.md, "Chat: Slack, Discord, Teams").
//
// What it shares with package webhook, through package outbound: the HTTP
// client and its destination check at dial time (outbound.NewClient: no
// private, loopback or metadata address unless allowed), the attempt's
// timeout and its bounds, the sorting of transport failures, the scrubbing
// of response excerpts, and Retry-After parsing. What it adds:
//
//   - By default a URL must name one of the service's own hosts
//     ([DefaultHosts]); Config.AllowHosts adds others (a local test receiver).
//   - The URL is the webhook's credential (a Slack or Discord path, a Teams
//     Workflows query signature): error texts name the scheme and host only,
//     and response excerpts are scrubbed of every part of it.
//   - Each webhook's rate limit is kept by a pacer keyed by [Destination]
//     (a digest of the webhook's normalized address, never its token),
//     shared by every execution environment through a [PaceStore] when one
//     is configured: a send waits for its turn when the turn comes before
//     the caller's deadline, and otherwise returns a transient error whose
//     RetryAfter is the wait, so a burst to one webhook is spread over
//     time, never failed. A 429's wait (Discord: its retry_after, in the
//     unit of the API version posted to; a URL without one is posted to
//     [DiscordAPIVersion]) holds every send to that webhook until it
//     passes; Discord's global 429 holds every Discord webhook for its
//     wait, and its Cloudflare ban (a 429 without rate-limit headers) for
//     [DiscordBanPause]. A send that waited for its turn waits out a hold
//     met meanwhile too. Teams is paced per kind: a legacy connector under
//     its 1 s to one-day table, a workflow at most 3 in any second.
//   - A Discord URL is posted to Execute Webhook's own path on discord.com
//     (a trailing /slack or /github, Discord's compatible endpoints, is
//     dropped).
//   - An answer that says the webhook is gone (Discord's Unknown Webhook,
//     Slack's no_service …) is a *delivery.PermanentError with Gone set:
//     the deliver function disables the destination's key. The Sender
//     holds back the sends already under way for [GoneFor] and returns them
//     retried then, when the key's health decides. Until a webhook has
//     answered once in the process, its posts go one at a time.
//   - A Teams legacy connector's 200 that is not its "1" is not delivered.
//
// Services: Slack incoming webhooks
// (https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks),
// Discord Execute Webhook
// (https://discord.com/developers/docs/resources/webhook#execute-webhook),
// Microsoft Teams Workflows and legacy incoming webhooks
// (https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook).
package chat
