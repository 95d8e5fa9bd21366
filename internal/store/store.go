package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/heraldhq/herald/internal/delivery"
)

// API is the part of the DynamoDB API the store calls.
type API interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Attribute names of the table's items (package doc).
const (
	AttrPK         = "pk"
	AttrSK         = "sk"
	AttrType       = "type"
	AttrState      = "state"
	AttrOwner      = "owner"
	AttrLeaseUntil = "lease_until"
	AttrUpdatedAt  = "updated_at"
	// AttrVersion is a keys item's current key version, ≥ 1, and a health
	// item's number of writes.
	AttrVersion = "version"
	// AttrPreviousUntil is when a keys item's previous version stops
	// signing, Unix milliseconds.
	AttrPreviousUntil = "previous_until"
	// AttrRotationID is a random id of a keys item's last rotation.
	AttrRotationID = "rotation_id"
	// AttrBatch is the batch of a delivery item's lease, and AttrSeq its
	// number in that batch (Store.NewBatch).
	AttrBatch = "batch"
	AttrSeq   = "seq"
	// AttrDelivered is a batch's confirm item's set of delivered sequence
	// numbers (Store.Confirm).
	AttrDelivered = "delivered"
	// AttrDigest is a delivery item's notification digest (package
	// processor's fingerprint of the content a copy shares).
	AttrDigest = "digest"
	// AttrExpiresAt is the table's time-to-live attribute, Unix seconds.
	AttrExpiresAt = "expires_at"
)

// States of a delivery item.
const (
	StateInProgress = "in_progress"
	StateDelivered  = "delivered"
)

// DefaultWindow is Config.Window's default: how long a delivered
// notification is remembered, so that a copy SQS hands over within it is
// not sent again.
const DefaultWindow = 24 * time.Hour

// Config configures a Store.
type Config struct {
	// Table is the table's name. Required.
	Table string
	// Window is how long a delivered notification is remembered, ≥ 1 s.
	// Defaults to [DefaultWindow].
	Window time.Duration
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

// Store reads and writes herald's table. It is safe for concurrent use.
type Store struct {
	api API
	cfg Config
}

// New returns a Store that calls api. It returns an error when cfg.Table is
// empty or cfg.Window is below a second.
func New(api API, cfg Config) (*Store, error) {
	switch {
	case api == nil:
		return nil, errors.New("store: nil API")
	case cfg.Table == "":
		return nil, errors.New("store: Table is required")
	case cfg.Window == 0:
		cfg.Window = DefaultWindow
	case cfg.Window < time.Second:
		return nil, fmt.Errorf("store: Window %s: must be at least 1s", cfg.Window)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Store{api: api, cfg: cfg}, nil
}

// Error classes of a store failure (package delivery).
var (
	// ClassThrottled: DynamoDB refused the request for its rate
	// (ProvisionedThroughputExceededException, ThrottlingException,
	// RequestLimitExceeded) after the SDK's retries.
	ClassThrottled = delivery.NewClass("store_throttled")
	// ClassUnavailable: any other failure to read or write the table.
	ClassUnavailable = delivery.NewClass("store_unavailable")
)

// Error is a failed call to the table: a transient failure of Class
// [ClassThrottled] or [ClassUnavailable].
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "store " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ErrContended matches (errors.Is) the error of a conditional update whose
// every try met another writer: the store answered each call, others
// wrote first. Unlike a failed call it says nothing of the store's health.
var ErrContended = errors.New("every try met another writer")

// contendedError is ErrContended after tries tries.
type contendedError struct{ tries int }

func (e contendedError) Error() string        { return fmt.Sprintf("%d tries met another writer", e.tries) }
func (e contendedError) Is(target error) bool { return target == ErrContended }

// Class is the error's class.
func (e *Error) Class() delivery.Class {
	var ae smithy.APIError
	if errors.As(e.Err, &ae) {
		switch ae.ErrorCode() {
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded":
			return ClassThrottled
		}
	}
	return ClassUnavailable
}

// Transient returns e as a delivery.TransientError of its class.
func (e *Error) Transient() error { return delivery.Transient(e.Class(), e) }

// ms is t in Unix milliseconds, as a DynamoDB number.
func ms(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.UnixMilli(), 10)}
}

// seconds is t in Unix seconds, as a DynamoDB number: the unit of time to
// live.
func seconds(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.Unix(), 10)}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// number reads a number attribute of item; ok is false when it is absent
// or not a whole number.
func number(item map[string]types.AttributeValue, name string) (int64, bool) {
	n, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	return v, err == nil
}

func text(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// token is a random owner token: 16 bytes, hex.
func token() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}
