package metrics

// herald's metric names, in Namespace. The template's alarms, dashboard and
// saved queries name the same metrics (checked by a test in this package).
const (
	// Notifications counts records by channel and outcome (delivered,
	// dropped, retry, dead_lettered, failed, skipped).
	Notifications = "Notifications"
	// DeliveryDuration is the time one delivery attempt took, milliseconds.
	DeliveryDuration = "DeliveryDuration"
	// AgeAtDelivery is the time from SQS's SentTimestamp to the delivery,
	// seconds, of a notification delivered after a retry (receive count
	// above 1): the clean path writes Notifications and DeliveryDuration
	// only, and the queue's own ApproximateAgeOfOldestMessage (free) shows
	// its wait.
	AgeAtDelivery = "AgeAtDelivery"
	// AgeSinceCreated is the time from the notification's created_at to the
	// delivery, seconds, of a notification delivered after a retry.
	AgeSinceCreated = "AgeSinceCreated"
	// ReceiveCountAtDelivery is the record's ApproximateReceiveCount when it
	// was delivered after a retry (above 1).
	ReceiveCountAtDelivery = "ReceiveCountAtDelivery"
	// ReceiveCountAtRetry is the record's ApproximateReceiveCount when it
	// failed and was put back for a retry: the failing alarm's metric. SQS
	// leaves a message received three times or more out of the queue's
	// ApproximateAgeOfOldestMessage, so this is what sees a notification
	// that keeps failing (docs/alarms.md).
	ReceiveCountAtRetry = "ReceiveCountAtRetry"
	// DeadLetters counts records herald moved to the dead-letter queue, by
	// channel and error class.
	DeadLetters = "DeadLetters"
	// DeadLettersTooLarge counts records herald could not dead-letter because
	// even the message as it came, with no reason, exceeds the dead-letter
	// queue's MaximumMessageSize (smaller than its queue's): left in the
	// queue, untouched, for the redrive policy to move. By channel and
	// error class.
	DeadLettersTooLarge = "DeadLettersTooLarge"
	// DeadLettersWithoutReason counts records herald dead-lettered as they
	// came (body and the producer's attributes) with no herald.reason,
	// because not even the shortest reason fitted beside them; the reason
	// is in the record's log line. By channel and error class.
	DeadLettersWithoutReason = "DeadLettersWithoutReason"
	// Retries counts records put back with a backoff delay, by channel and
	// error class.
	Retries = "Retries"
	// Paused is 1 each time the deliver function paused its event source
	// mapping (or found it must be paused) because it cannot deliver, and
	// 0 on a queue's first batch in an execution environment, its first
	// after a quiet minute there, and its first after that environment
	// paused it (processor.PausedQuiet): what the paused alarm needs to
	// return to OK after a resume, without a data point on every batch.
	Paused = "Paused"
	// StoreErrors counts, per batch, the records whose call to herald's
	// DynamoDB table failed or was throttled (package store): each was
	// retried later, or sent anyway with HERALD_ON_STORE_ERROR=send, or,
	// after a delivery, left its lease to end on its own.
	StoreErrors = "StoreErrors"
	// DestinationsDisabled counts, per batch, the webhook and chat origins
	// this batch disabled after no success for the disable-after setting
	// (docs/operations.md "Destination states"): 1 for each transition,
	// written by the one environment whose conditional write made it.
	DestinationsDisabled = "DestinationsDisabled"
	// DeadLettersDeleted and DeadLettersKept are the retention function's
	// counts per run: dead letters deleted as too old, and those kept.
	DeadLettersDeleted = "DeadLettersDeleted"
	DeadLettersKept    = "DeadLettersKept"
	// EventsFannedOut, DeliveriesEnqueued and EventsWithoutSubscribers are
	// the fan-out function's counts (package fanout), one line per event
	// and invocation: 1 for each event whose fan-out finished, the
	// deliveries this invocation enqueued, and 1 for each event no
	// endpoint asked for (settled no_subscribers).
	EventsFannedOut          = "EventsFannedOut"
	DeliveriesEnqueued       = "DeliveriesEnqueued"
	EventsWithoutSubscribers = "EventsWithoutSubscribers"
)

// herald's dimension names: bounded values only.
const (
	// DimChannel is the notification's channel (email, webhook, chat), or
	// "unknown" for a body that does not parse.
	DimChannel = "channel"
	// DimOutcome is the record's outcome.
	DimOutcome = "outcome"
	// DimErrorClass is the failure's class (package delivery's classes).
	DimErrorClass = "error_class"
	// DimFunction is the function: "deliver" ([FunctionDeliver]),
	// "retention" or "fanout".
	DimFunction = "function"
)

// FunctionDeliver is the deliver function's DimFunction value.
const FunctionDeliver = "deliver"
