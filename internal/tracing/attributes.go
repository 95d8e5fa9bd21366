package tracing

import "go.opentelemetry.io/otel/attribute"

// The attribute keys of herald's spans: OpenTelemetry semantic conventions
// where one exists (https://opentelemetry.io/docs/specs/semconv/), herald.*
// for herald's own.
const (
	// Resource.
	KeyServiceName   = attribute.Key("service.name")
	KeyCloudProvider = attribute.Key("cloud.provider")
	KeyCloudRegion   = attribute.Key("cloud.region")
	KeyFaaSName      = attribute.Key("faas.name")

	// Invocation span.
	KeyFaaSInvocationID = attribute.Key("faas.invocation_id")
	KeyFaaSColdStart    = attribute.Key("faas.coldstart")
	KeyFaaSTrigger      = attribute.Key("faas.trigger")
	KeyBatchCount       = attribute.Key("messaging.batch.message_count")
	KeyBatchFailures    = attribute.Key("herald.batch.failures")

	// Record span.
	KeyMessagingSystem = attribute.Key("messaging.system")
	KeyMessageID       = attribute.Key("messaging.message.id")
	KeyNotificationID  = attribute.Key("herald.notification.id")
	KeyChannel         = attribute.Key("herald.channel")
	KeyReceiveCount    = attribute.Key("herald.receive_count")
	KeyOutcome         = attribute.Key("herald.outcome")
	KeyRetryDelayMS    = attribute.Key("herald.retry_delay_ms")

	// Send span.
	KeyServerAddress = attribute.Key("server.address")
	KeyURLScheme     = attribute.Key("url.scheme")
	KeyPermanent     = attribute.Key("herald.permanent")
	KeyRetryAfterMS  = attribute.Key("herald.retry_after_ms")

	// Every span that failed: herald's error class (package delivery) or,
	// for an AWS call, the service's error code. Never the error's text,
	// which can carry an address or a URL.
	KeyErrorType  = attribute.Key("error.type")
	KeyErrorClass = attribute.Key("herald.error.class")

	// AWS SDK call span.
	KeyRPCSystem      = attribute.Key("rpc.system")
	KeyRPCService     = attribute.Key("rpc.service")
	KeyRPCMethod      = attribute.Key("rpc.method")
	KeyAWSRequestID   = attribute.Key("aws.request_id")
	KeyHTTPStatusCode = attribute.Key("http.response.status_code")
)
