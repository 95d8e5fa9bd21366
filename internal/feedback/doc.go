// Package feedback reads the email sending events Amazon SES publishes for
// herald's mail — what happened after SES accepted a message — and writes one
// JSON log line with metrics for each, tied back to the notification.
//
// SES publishes the events of a configuration set to an event destination
// (https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-eventbridge.html);
// herald's template sends them to the account's default Amazon EventBridge
// bus, where a rule that matches the [email.IDTag] message tag invokes the
// feedback function with one [events.EventBridgeEvent] per SES event. Its
// detail is the event record SES documents for every destination
// (https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html),
// decoded here as [Event].
//
// # The log line
//
// One line per event, message "email_event", with
//
//	id                      the notification id, decoded from the herald-id tag
//	                        (the same member as the deliver function's lines)
//	event_type              send, delivery, bounce, complaint, reject,
//	                        rendering_failure, delivery_delay (see [EventTypes])
//	ses_message_id          the SES message id (SendEmail's MessageId)
//	configuration_set       the ses:configuration-set tag
//	recipient_domains       the domains of the recipients the event is about,
//	                        lower case, sorted, each once — never an address
//	bounce_type, bounce_sub_type, status        bounces
//	complaint_feedback_type, complaint_sub_type complaints
//	delay_type, status      delivery delays
//	processing_time_ms      deliveries
//	reject_reason           rejects
//	template, error         rendering failures (error with addresses removed)
//	event_time              when the event happened (RFC 3339)
//
// and the Embedded Metric Format members of one [metrics.Entry]: metric
// [MetricEmailEvents] (Count 1) in namespace Herald with dimension
// event_type, and for bounces also by event_type and bounce_type. Bounces,
// complaints, rejects and rendering failures are logged at WARN, the rest at
// INFO.
//
// An event it cannot read — a payload that is not a JSON object, another
// source, an eventType herald does not publish, an event without
// mail.messageId or without its type's object — is logged once as
// "email_event_unreadable" and counted ([MetricEmailEventsUnreadable]); the
// invocation succeeds, since a retry would fail the same way. Events that
// never reach the function, or whose invocation fails (a crash, a timeout),
// go to the stack's feedback dead-letter queue (docs/alarms.md).
//
// Addresses never reach the log: the event's headers, sender, diagnostic
// codes and SMTP responses are not decoded at all, and recipients are
// reduced to their domains.
package feedback
