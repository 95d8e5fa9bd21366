package fanout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/notification"
)

// TableAPI is the part of the DynamoDB API the progress item needs.
type TableAPI interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

var _ TableAPI = (*dynamodb.Client)(nil)

// The progress item of one event's fan-out (docs/endpoints.md, "Item
// shapes"): pk "event#<event id>", sk "fanout", type "fanout", and
const (
	// TypeProgress is the item's type attribute.
	TypeProgress = "fanout"
	// AttrCursor is where the page of subscribers being enqueued starts
	// (the endpoint store's opaque cursor); absent for the first page.
	AttrCursor = "cursor"
	// AttrLast is the id of the last endpoint of that page enqueued; absent
	// before its first batch. The listing is in id order, so a resumed
	// fan-out skips the page's endpoints up to it.
	AttrLast = "last_endpoint"
	// AttrEnqueued counts the deliveries enqueued so far.
	AttrEnqueued = "enqueued"
	// AttrCreatedAt is the created_at of every delivery, Unix milliseconds:
	// the event's as the first copy claimed it (the producer's, else that
	// copy's SQS SentTimestamp, else when the fan-out started), so that
	// every copy of a delivery is the same body.
	AttrCreatedAt = "created_at"
)

// Also store.AttrOwner (the random token of the copy holding the lease),
// store.AttrLeaseUntil (Unix milliseconds; 0 once given up),
// store.AttrState (StateInProgress or StateDone), store.AttrSeq (the
// number of writes: each write is conditional on the one read),
// store.AttrDigest, store.AttrUpdatedAt and store.AttrExpiresAt.

// States of a progress item.
const (
	StateInProgress = "in_progress"
	StateDone       = "done"
)

// ProgressKey is the key of event id's progress item.
func ProgressKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		store.AttrPK: &types.AttributeValueMemberS{Value: "event#" + id},
		store.AttrSK: &types.AttributeValueMemberS{Value: TypeProgress},
	}
}

// progress is one copy's view of an event's progress item.
type progress struct {
	id        string
	owner     string
	seq       int64
	state     string
	cursor    string
	last      string
	enqueued  int64
	createdAt time.Time
	digest    string
	leaseEnd  time.Time
}

// errLeaseLost is a progress write that found another copy's write: this
// copy's lease ended and another took it over.
var errLeaseLost = errors.New("another copy took the fan-out over")

// claim reads event id's progress item and takes its lease for this copy.
// It returns the progress, done when the fan-out had finished (nothing is
// written then); a *delivery.TransientError of ClassInProgress when another
// copy's lease runs, ClassEventIDReused (permanent) when the item was
// written for another event of the same id, or the store's class when the
// table fails.
func (f *Fanout) claim(ctx context.Context, m *notification.Message, digest string) (*progress, error) {
	id := m.ID
	out, err := f.cfg.DB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(f.cfg.Table),
		Key:            ProgressKey(id),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, (&store.Error{Op: "read the fan-out progress of " + id, Err: err}).Transient()
	}
	now := f.cfg.Now()
	p := &progress{id: id, digest: digest, state: StateInProgress, createdAt: now}
	if m.CreatedAt != nil {
		p.createdAt = *m.CreatedAt
	}
	var prevSeq int64
	if item := out.Item; item != nil {
		p.state = text(item, store.AttrState)
		if d := text(item, store.AttrDigest); d != digest {
			return nil, delivery.Permanent(ClassEventIDReused, fmt.Errorf("event %s was fanned out with other content (another tenant, type, endpoint, payload, expiry or metadata): a new event needs a new id", id))
		}
		if p.state == StateDone {
			p.enqueued, _ = number(item, AttrEnqueued)
			return p, nil
		}
		if until, _ := number(item, store.AttrLeaseUntil); until > now.UnixMilli() {
			return nil, &delivery.TransientError{
				Class:      ClassInProgress,
				RetryAfter: time.Duration(until-now.UnixMilli()) * time.Millisecond,
				Err:        fmt.Errorf("event %s: another copy is fanning it out (its lease ends in %d ms)", id, until-now.UnixMilli()),
			}
		}
		prevSeq, _ = number(item, store.AttrSeq)
		p.cursor = text(item, AttrCursor)
		p.last = text(item, AttrLast)
		p.enqueued, _ = number(item, AttrEnqueued)
		if ms, ok := number(item, AttrCreatedAt); ok {
			p.createdAt = time.UnixMilli(ms)
		}
		p.seq = prevSeq
	}
	p.owner = newOwner()
	if err := f.write(ctx, p, out.Item == nil, f.cfg.Lease); err != nil {
		if errors.Is(err, errLeaseLost) {
			return nil, &delivery.TransientError{Class: ClassInProgress, RetryAfter: f.cfg.Lease,
				Err: fmt.Errorf("event %s: another copy claimed it at the same moment", id)}
		}
		return nil, err
	}
	return p, nil
}

// write puts p's item with p.seq+1, conditional on the item holding p.seq
// (or on there being none, when first), with a lease of lease from now (0:
// the lease given up, another copy may go on at once). It returns
// errLeaseLost when another copy wrote since.
func (f *Fanout) write(ctx context.Context, p *progress, first bool, lease time.Duration) error {
	now := f.cfg.Now()
	leaseEnd := time.Time{}
	if lease > 0 {
		leaseEnd = now.Add(lease)
	}
	item := ProgressKey(p.id)
	item[store.AttrType] = str(TypeProgress)
	item[store.AttrOwner] = str(p.owner)
	item[store.AttrState] = str(p.state)
	item[store.AttrSeq] = num(p.seq + 1)
	item[store.AttrLeaseUntil] = num(leaseEnd.UnixMilli())
	if leaseEnd.IsZero() {
		item[store.AttrLeaseUntil] = num(0)
	}
	item[AttrEnqueued] = num(p.enqueued)
	item[AttrCreatedAt] = num(p.createdAt.UnixMilli())
	item[store.AttrDigest] = str(p.digest)
	item[store.AttrUpdatedAt] = num(now.UnixMilli())
	// Kept for the window after its last write: a copy of the event SQS
	// hands over within it finds it done.
	item[store.AttrExpiresAt] = num(now.Add(f.cfg.Window).Unix())
	if p.cursor != "" {
		item[AttrCursor] = str(p.cursor)
	}
	if p.last != "" {
		item[AttrLast] = str(p.last)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(f.cfg.Table), Item: item}
	if first {
		in.ConditionExpression = aws.String("attribute_not_exists(#pk)")
		in.ExpressionAttributeNames = map[string]string{"#pk": store.AttrPK}
	} else {
		in.ConditionExpression = aws.String("#seq = :seq")
		in.ExpressionAttributeNames = map[string]string{"#seq": store.AttrSeq}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":seq": num(p.seq)}
	}
	if _, err := f.cfg.DB.PutItem(ctx, in); err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return errLeaseLost
		}
		return (&store.Error{Op: "write the fan-out progress of " + p.id, Err: err}).Transient()
	}
	p.seq++
	p.leaseEnd = leaseEnd
	return nil
}

// newOwner is a random token naming one copy's claim.
func newOwner() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func text(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func number(item map[string]types.AttributeValue, name string) (int64, bool) {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	return n, err == nil
}
