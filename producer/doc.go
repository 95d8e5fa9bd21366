// Package producer sends herald notifications to the notification queue:
// each body is validated by [notification.Parse], the same code the deliver
// function runs, before anything is sent, and the valid ones go out with SQS
// SendMessageBatch, at most 10 entries and 1 MiB per call (the SQS batch
// limits, https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html).
// Entries that SQS fails for a reason of its own (SenderFault false, such as
// an internal error or throttling) are sent again, up to
// [Client.MaxAttempts] times; entries it refuses as the sender's fault are
// reported at once.
//
// On a FIFO queue (its URL ends in ".fifo") each notification's group is
// [Client.GroupBy]'s or [Client.GroupID] and its deduplication id is the
// notification id, so a repeated send of the same notification within SQS's
// 5-minute deduplication interval is stored once. Each group keeps its
// order whatever SQS fails: one notification of a group per call, and none
// of a group after one that was not sent ([ErrGroupBlocked]); SendBodies
// reports every one not sent in a [NotSentError].
//
// A call whose answer cannot be trusted (an MD5 of the body that does not
// match, an answer after the caller's deadline, a connection cut once the
// request was sent) leaves its notifications neither sent nor not sent: SQS
// may hold them. They are reported as of unknown outcome
// ([ErrOutcomeUnknown], [NotSentError].Unknown), with the queue and how to
// check before sending them again.
//
// The command `herald send` is a thin layer over this package.
package producer
