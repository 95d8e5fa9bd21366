package endpoint

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

// DynamoDBAPI is the part of the DynamoDB API the endpoint store calls.
type DynamoDBAPI interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// KMSAPI is the part of the AWS KMS API the endpoint store calls.
type KMSAPI interface {
	GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, optFns ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, in *kms.DecryptInput, optFns ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

var (
	_ DynamoDBAPI = (*dynamodb.Client)(nil)
	_ KMSAPI      = (*kms.Client)(nil)
)

// TableConfig configures a Table.
type TableConfig struct {
	// Table is the stack's DynamoDB table (StoreTable). Required.
	Table string
	// KeyID is the stack's endpoint KMS key (EndpointKey): a key id, ARN
	// or alias. Required to create, update or rotate; reading needs only
	// kms:Decrypt (the data key names its key).
	KeyID string
	// DB and KMS are the clients. Required.
	DB  DynamoDBAPI
	KMS KMSAPI
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// URLRules are the deployment's exceptions to the URL rules applied
	// when an endpoint is created or its URL updated. Defaults to none
	// (production's rules).
	URLRules URLRules
}

// Table is the endpoint store: herald's DynamoDB table's endpoint and
// failure items (docs/endpoints.md "Item shapes"). It is safe for
// concurrent use.
type Table struct {
	cfg TableConfig
}

// NewTable returns a Table, or an error naming a missing field of cfg.
func NewTable(cfg TableConfig) (*Table, error) {
	switch {
	case cfg.Table == "":
		return nil, errors.New("endpoint table: Table is required")
	case cfg.DB == nil:
		return nil, errors.New("endpoint table: DB is required")
	case cfg.KMS == nil:
		return nil, errors.New("endpoint table: KMS is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Table{cfg: cfg}, nil
}

// ListQuery selects the endpoints [Table.List] returns.
type ListQuery struct {
	// Tenant, when set, lists only that tenant's endpoints.
	Tenant string
	// EventType, when set, lists only endpoints whose filter matches it.
	EventType string
	// State is "" (any), [StateEnabled] or [StateDisabled].
	State string
	// Limit is the most endpoints of a page, 1–[MaxListLimit]; 0 means
	// [DefaultListLimit].
	Limit int
	// Cursor is the Next of the previous page; "" for the first.
	Cursor string
}

// States of ListQuery.State.
const (
	StateEnabled  = "enabled"
	StateDisabled = "disabled"
)

// Page limits of a List.
const (
	DefaultListLimit = 50
	MaxListLimit     = 100
)

// Page is one page of a List: the endpoints without their secrets, and
// the cursor of the next page ("" after the last).
type Page struct {
	Endpoints []Endpoint `json:"endpoints"`
	Next      string     `json:"next,omitempty"`
}

// Patch is an update: each field that is not nil replaces the endpoint's.
type Patch struct {
	URL, Description  *string
	EventTypes        *[]string
	Headers, Metadata *map[string]string
	RateLimit         *float64
}

// Subscriber is an enabled endpoint whose filter matches an event's type.
type Subscriber struct {
	ID   string
	Kind Kind
}

// Failure is one failed delivery attempt to an endpoint.
type Failure struct {
	At        time.Time `json:"at"`
	MessageID string    `json:"message_id"`
	EventID   string    `json:"event_id,omitempty"`
	// Class is the failure's error class; Reason its scrubbed text (no URL
	// path or query, no secret).
	Class   string `json:"class"`
	Reason  string `json:"reason"`
	Attempt int    `json:"attempt"`
}
