package producer

import (
	"errors"
	"fmt"
	"net"

	"github.com/aws/smithy-go"
)

// ErrOutcomeUnknown marks a send whose answer cannot be trusted: the request
// may have reached SQS, which may hold the message, but no answer says so.
// It is neither "sent" nor "not sent". A Result.Err wrapping it names the
// queue and says how to check before sending again.
var ErrOutcomeUnknown = errors.New("outcome unknown")

// OutcomeUnknown reports whether err, the error of an SQS send call
// (SendMessage, SendMessageBatch) that was made, leaves unknown whether SQS
// stored the messages. SQS answering with an error (a smithy.APIError: a
// refusal, a throttle, an internal error) means it stored none of them, and
// a request that never left (the connection or the DNS look-up failed) was
// not stored either. Anything else happened after the request could have
// reached SQS: an answer whose MD5 of the body does not match what was
// sent (the SDK's checksum validation), an answer after the caller's
// deadline or cancellation, a connection cut before the answer.
func OutcomeUnknown(err error) bool {
	if err == nil {
		return false
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var dns *net.DNSError
	return !errors.As(err, &dns)
}

// unknownError is a Result.Err of a notification whose send's outcome is
// unknown: cause, the call's error, wrapped with ErrOutcomeUnknown and how
// to check the queue before sending id again.
func unknownError(cause error, queueURL, id string) error {
	check := fmt.Sprintf("check whether the deliver function logged notification %s (or its receiver got it) before sending it again: a second copy on this standard queue is a second message (receivers deduplicate on the id)", id)
	if IsFIFO(queueURL) {
		check = fmt.Sprintf("sending it again within 5 minutes of this try is safe: SQS stores one message per deduplication id %s", DeduplicationID(id))
	}
	return fmt.Errorf("%w (%w): SQS may hold it in %s; %s", ErrOutcomeUnknown, cause, queueURL, check)
}
