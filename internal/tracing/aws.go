package tracing

import (
	"context"
	"errors"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// AWSMiddleware adds a span per AWS SDK operation (a client span named
// Service.Operation, retries included) to a client's stack: append it to
// aws.Config.APIOptions. Attributes: rpc.system aws-api, rpc.service,
// rpc.method, cloud.region, aws.request_id, and on failure the HTTP status
// and the service's error code (error.type; "canceled", "timeout" or
// "transport" when there is none). Never a request's parameters: a queue
// URL, a table key, an address. A nil t adds nothing.
//
// (The contrib otelaws instrumentation is deprecated upstream and records
// an error's whole text, which for SES can carry an address.)
func (t *Tracing) AWSMiddleware(stack *middleware.Stack) error {
	if t == nil {
		return nil
	}
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("HeraldTracing", func(
		ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler,
	) (middleware.InitializeOutput, middleware.Metadata, error) {
		service, op := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
		ctx, span := t.Tracer().Start(ctx, service+"."+op,
			trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(KeyRPCSystem.String("aws-api"), KeyRPCService.String(service), KeyRPCMethod.String(op),
				KeyCloudRegion.String(awsmiddleware.GetRegion(ctx))))
		defer span.End()
		out, md, err := next.HandleInitialize(ctx, in)
		if id, ok := awsmiddleware.GetRequestIDMetadata(md); ok {
			span.SetAttributes(KeyAWSRequestID.String(id))
		}
		if err != nil {
			var status *smithyhttp.ResponseError
			if errors.As(err, &status) {
				span.SetAttributes(KeyHTTPStatusCode.Int(status.HTTPStatusCode()))
			}
			code := awsErrorCode(err)
			span.SetAttributes(KeyErrorType.String(code))
			span.SetStatus(codes.Error, code)
		}
		return out, md, err
	}), middleware.After)
}

// awsErrorCode is the service's error code of err, else what kind of
// failure it is.
func awsErrorCode(err error) string {
	var api smithy.APIError
	switch {
	case errors.As(err, &api):
		return api.ErrorCode()
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	default:
		return "transport"
	}
}
