// Package deadletter reads and redrives the dead letters of herald's
// dead-letter queue for operators (the `herald dlq` commands).
//
// Reading never consumes: [Scan] receives every visible dead letter with a
// short visibility timeout (Hold), which hides it from other readers only
// while the scan runs, and [Release] then sets each one's visibility timeout
// back to 0, so the queue's count is unchanged. Nothing is deleted by a
// scan. A scan interrupted before Release leaves the messages hidden for at
// most Hold, after which SQS makes them visible again by itself.
//
// [Redrive] sends each chosen dead letter back to the main queue with its
// original body and the producer's own message attributes (herald's
// herald.* attributes are left out), then deletes it from the dead-letter
// queue: send before delete, so an interruption between the two leaves the
// message in both queues (delivered at least once, which receivers
// deduplicate on the notification id), never in neither. On a FIFO queue
// each message group goes back in its original order and stops at its
// first letter not sent (see [Scan] and [Redrive]); a send whose answer
// cannot be trusted is of unknown outcome, never "not sent".
//
// The reason herald wrote is [redrive.Reason], read from the
// herald.reason message attribute; a dead letter without it was moved by
// the queue's redrive policy (maxReceiveCount reached without herald
// settling it, for example when the function timed out). So was one with a
// herald.reason that SQS marked with DeadLetterQueueSourceArn, or that was
// stored more than 20 minutes after the reason's failed_at: the reason is
// from an earlier dead-lettering (the letter was sent back with its
// attributes and moved again), and is kept as [Letter.PreviousReason]
// only.
package deadletter
