// Package email delivers notifications of the "email" channel through the
// Amazon SES v2 SendEmail operation
// (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html).
//
// A [Sender] turns one [notification.Message] into one SendEmailInput — a
// Simple message (subject, text and/or HTML body, extra headers) or a stored
// Template with its JSON data — sends it, and says what the queue should do
// with the outcome: nil (delivered), a *[delivery.PermanentError] (dead-letter
// it) or a *[delivery.TransientError] (retry it later).
//
// # Addresses
//
// SES does not support SMTPUTF8 (RFC 6531), so every mailbox it is given must
// be 7-bit ASCII (SES v2 API reference, Destination and SendEmail
// FromEmailAddress). The Sender therefore rewrites each mailbox: an
// internationalized domain is converted to Punycode (IDNA, UTS #46 lookup
// profile: bücher.example → xn--bcher-kva.example), a display name with
// non-ASCII characters becomes an RFC 2047 encoded-word (B encoding when it
// holds a character RFC 2047 §5(3) keeps out of one, a backslash among
// them), and a mailbox whose local part is not ASCII, or whose domain is
// left with an empty label by the mapping (a label of default-ignorable
// characters only, such as U+034F or U+200B, which UTS #46 deletes), cannot
// be sent at all ([ClassInvalidAddress]).
//
// # Outcomes
//
// The error of SendEmail is sorted by the SES exception it carries, then by
// its HTTP status, then by the transport failure that left it without one:
//
//	SES error / transport failure              outcome      class
//	TooManyRequestsException, ThrottlingEx…    retry        ses_throttled
//	LimitExceededException                     retry        ses_limit_exceeded
//	InternalServiceErrorException, any 5xx     retry        ses_5xx
//	SendingPausedException                     retry later  ses_sending_paused
//	no response (refused, reset, timeout)      retry        ses_network
//	the caller's ctx ended first               retry        invocation_deadline
//	MessageRejected                            dead-letter  ses_message_rejected
//	MailFromDomainNotVerifiedException         dead-letter  ses_mail_from_not_verified
//	NotFoundException, or a 404 without a code,
//	  for a template (see ClassTemplateNotFound) dead-letter  ses_template_not_found
//	NotFoundException                          dead-letter  ses_not_found
//	BadRequestException, SDK input validation  dead-letter  ses_bad_request
//	AccountSuspendedException                  dead-letter  ses_account_suspended
//	HTTP 429 without a known code              retry        ses_throttled
//	any other 4xx                              dead-letter  ses_4xx
//
// "retry later" carries RetryAfter = Config.SendingPausedDelay. An error that
// fits no row is retried with class "unknown". A 2xx answer whose body cannot
// be read counts as delivered: SES accepted the email, and a retry would send
// it twice.
//
// Error texts carry the notification id, the SES error code and message, the
// HTTP status and the SES request id; never a body, subject or address beyond
// what SES itself put in its message.
//
// # Retries inside one attempt
//
// The SES client keeps the SDK's standard retryer: up to 3 attempts with
// exponential backoff (at most 20 s apart) for throttling, 5xx and connection
// errors. The caller bounds that loop, and the whole send, with the deadline
// of the ctx it passes to [Sender.Send]; when ctx ends first the outcome is
// [delivery.ClassDeadline] and the queue retries the notification.
//
// SendEmail is not idempotent: a connection lost after SES took the request
// (retried by the SDK or by the queue) can send an email twice. The
// [IDTag] message tag, the same on every attempt, lets SES event consumers
// spot such duplicates.
package email
