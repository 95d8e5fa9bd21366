package endpointapi

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/endpoint"
)

// Store is what the handlers need of the endpoint store
// (internal/endpoint's Table, d29's Go API).
type Store interface {
	Create(ctx context.Context, e endpoint.Endpoint) (endpoint.Endpoint, error)
	Get(ctx context.Context, id string) (endpoint.Endpoint, error)
	List(ctx context.Context, q endpoint.ListQuery) (endpoint.Page, error)
	Update(ctx context.Context, id string, version int64, p endpoint.Patch) (endpoint.Endpoint, error)
	Delete(ctx context.Context, id string, version int64) error
	SetDisabled(ctx context.Context, id string, d *endpoint.Disabled) (endpoint.Endpoint, error)
	RotateSecret(ctx context.Context, id string, grace time.Duration) (endpoint.Endpoint, endpoint.Secret, error)
	Failures(ctx context.Context, id string, limit int) ([]endpoint.Failure, error)
}

// Queue is the SQS call of a test event.
type Queue interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var _ Queue = (*sqs.Client)(nil)

type eventsRequest = events.APIGatewayProxyRequest

var _ Store = (*endpoint.Table)(nil)
