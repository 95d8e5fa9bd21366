// Package pause stops the deliver function from draining its queue when it
// cannot deliver anything, and turns delivery back on.
//
// Why: a function whose setup fails on every cold start (a malformed
// signing secret, a refused queue setting) makes Lambda fail each
// invocation, and every failed invocation is one more receive of each
// message in the batch: after the redrive policy's maxReceiveCount the whole
// backlog sits in the dead-letter queue with no reason
// (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
// Instead the function starts in a degraded mode ([Handler]) that disables
// its own event source mapping (UpdateEventSourceMapping Enabled=false, the
// mapping found with ListEventSourceMappings by function name and queue
// ARN), hands the batch back untouched and logs one ERROR naming the bad
// setting and the command that resumes delivery. A disabled mapping stops
// polling, so the messages keep their receive count and wait in the queue
// for as long as its retention period
// (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html).
//
// Resume turns the mapping on again (what `aws lambda
// update-event-source-mapping --uuid UUID --enabled` does).
package pause
