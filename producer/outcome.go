package producer

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
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

// RetryKnownOutcomesOnly is an option of an SQS send call (SendMessage,
// SendMessageBatch: pass it among optFns) under which the SDK's retryer
// does not retry an attempt whose outcome is unknown ([OutcomeUnknown]: a
// connection cut after the request left, an answer after the deadline).
// The SDK retries those by default (a cut is a connection error to it): on
// a standard queue each retry of a request SQS stored stores another copy,
// and the caller sees only the last attempt's error, so an error answer to
// the retry would read as "not sent". Attempts SQS refused or that never
// left are retried as before. [Client] sends with it.
func RetryKnownOutcomesOnly(o *sqs.Options) {
	if o.Retryer != nil {
		o.Retryer = knownOutcomeRetryer{o.Retryer}
	}
}

// knownOutcomeRetryer is a retryer that retries only what the one it wraps
// retries and whose outcome is known.
type knownOutcomeRetryer struct{ aws.Retryer }

func (r knownOutcomeRetryer) IsErrorRetryable(err error) bool {
	return !OutcomeUnknown(err) && r.Retryer.IsErrorRetryable(err)
}

// GetAttemptToken is the wrapped retryer's (aws.RetryerV2), or its initial
// token when it has none, as the SDK does for such a retryer.
func (r knownOutcomeRetryer) GetAttemptToken(ctx context.Context) (func(error) error, error) {
	if v2, ok := r.Retryer.(aws.RetryerV2); ok {
		return v2.GetAttemptToken(ctx)
	}
	return r.GetInitialToken(), nil
}

var _ aws.RetryerV2 = knownOutcomeRetryer{}
