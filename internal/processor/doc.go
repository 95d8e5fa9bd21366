// Package processor is herald's delivery policy: it turns one SQS batch
// (events.SQSEvent, as the Lambda event source mapping delivers it) into
// deliveries and a partial batch response.
//
// Each record ends as one of:
//   - delivered: acknowledged (left out of BatchItemFailures, so the event
//     source mapping deletes it);
//   - dropped: its expires_at has passed; acknowledged, never sent;
//   - retry: a transient failure; its visibility timeout is set to the backoff
//     delay (one ChangeMessageVisibilityBatch call per ten records) and it is
//     reported in BatchItemFailures, so SQS delivers it again after the delay;
//   - dead-lettered: a permanent failure, an invalid message, or a transient
//     failure on the last receive the redrive policy allows; herald sends it
//     to the dead-letter queue with its reason and acknowledges it;
//   - skipped: on a FIFO queue, a record behind a retried or failed record of
//     its message group in the batch; not attempted, reported failed, and
//     given that record's visibility delay, so the group keeps its order;
//   - duplicate: an earlier record of the batch carries the same notification
//     id; acknowledged without an attempt (the earlier record carries it).
//     Also a record whose send a middleware settled as delivered before
//     (a *delivery.DeliveredError: delivered-once found a copy delivered
//     earlier, in any invocation): acknowledged unsent.
//
// The processor decides what SQS does with a record from the outcome its
// channel's sender returns, and nothing else. What happens around a send
// is middleware (Config.Middleware, river's job middleware the model):
// the circuit per destination (package circuit) and delivered-once
// (package once) wrap each sender, return the same typed errors a sender
// returns, and note on the record's delivery.Attempt what its log line
// and the batch's metrics say beside the outcome. A middleware's
// StartBatch is its hook per batch (delivered-once's one confirm write).
//
// Before any delivery every record is read once: a message above
// notification.MaxMessageBytes (whose dead letter would not leave room for
// its whole reason) is dead-lettered unattempted as message_too_large, its
// body whole and its reason shortened as far as needed; a record
// without a message id (which the response cannot name) is delivered, and
// fails the invocation when it is to come back; a notification without
// created_at gets the record's SentTimestamp, the event time of the webhook
// envelope.
//
// Deliveries end Config.Reserve before the invocation's deadline: each
// sender gets a context with that deadline, so a request's timeout is the
// shorter of its own and the time left; a record not started by then is
// retried at once (visibility 0). Handle returns before the deadline even
// when ctx has already expired.
//
// CheckQueues compares the queues' attributes with herald's settings; the
// deliver function runs it at cold start.
//
// The queue's redrive policy stays the guarantee: a record whose visibility
// change or dead-letter move fails is reported failed and comes back, and a
// crash or timeout leaves the whole batch to SQS.
//
// See https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
// (partial batch responses) and docs/delivery.md.
package processor
