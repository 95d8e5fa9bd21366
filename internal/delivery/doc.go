// Package delivery holds the leaf types every herald package shares: the
// errors that say what the queue should do with a failed notification.
//
// A sender returns nil (delivered), a *PermanentError (never retry: the
// notification goes to the dead-letter queue) or a *TransientError (retry
// later, optionally no sooner than RetryAfter). Any other error is treated as
// transient. Match them with errors.As; [Classify] does it for you.
package delivery
