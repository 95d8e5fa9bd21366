// Package tracecontext carries a trace across herald's hops: from the
// producer's context into each SQS message (a W3C Trace Context
// `traceparent` message attribute and SQS's AWSTraceHeader system
// attribute), from each record back to links of the deliver function's
// spans, and from a delivery's span into the `traceparent` header of a
// webhook or chat POST, so that a receiver can join the trace.
//
// It depends on the OpenTelemetry API alone (no SDK, no exporter): the
// producer package imports it without linking a tracing SDK, and with no
// span in the context every function here writes nothing and allocates
// nothing. Formats: W3C Trace Context
// (https://www.w3.org/TR/trace-context/) and the X-Ray trace header
// (https://docs.aws.amazon.com/xray/latest/devguide/xray-concepts.html#xray-concepts-tracingheader);
// SQS's AWSTraceHeader:
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html.
package tracecontext
