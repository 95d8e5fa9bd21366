// Package tracing is herald's OpenTelemetry tracing of the deliver
// function: a span per invocation ([Tracing.Handler]), a span per record
// linked to the producer's trace ([Tracing.StartRecord], the processor's
// Tracer), a child span per send ([Tracing.Sender]) and per AWS SDK call
// ([Tracing.AWSMiddleware]: SQS, DynamoDB, SES, EventBridge, Lambda), each
// with its outcome and error class, never a secret, a URL's path or query,
// an address or a payload. Package tracecontext carries the trace across
// the queue and into the webhook or chat POST.
//
// Spans go out by OTLP/HTTP (protobuf): to X-Ray's OTLP traces endpoint
// https://xray.<region>.amazonaws.com/v1/traces signed with SigV4 (service
// xray, IAM action xray:PutTraceSegments; the account must have
// CloudWatch Transaction Search enabled), the way AWS documents sending
// OpenTelemetry spans to X-Ray now that the X-Ray SDKs and daemon are in
// maintenance (https://docs.aws.amazon.com/xray/latest/devguide/xray-opentelemetry.html,
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch-OTLPEndpoint.html);
// or to any OTLP/HTTP receiver (a collector, a test). The SDK (sdk/trace:
// provider, batcher, sampler) is OpenTelemetry's; the exporter is herald's
// own ([exporter]), a protobuf encoder that keeps gRPC out of the
// bootstrap. Off (the default),
// nothing of this package is built: no exporter, no tracer, no wrapper.
//
// Configuration: docs/configuration.md, "Tracing"; following one
// notification: docs/operations.md.
package tracing
