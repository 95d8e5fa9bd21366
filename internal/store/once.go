package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item kinds, in AttrType.
const typeDelivery = "delivery"

// deliveryKey is a notification's delivery item key: the channel and id
// (notification.MaxIDLength keeps it far below DynamoDB's 2048-byte limit
// on a partition key).
func deliveryKey(channel, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: str("notification#" + channel + "#" + id),
		AttrSK: str(typeDelivery),
	}
}

// Lease is an attempt's hold on a notification, from [Store.Claim] until
// [Store.Delivered] or [Store.Release].
type Lease struct {
	channel, id string
	owner       string
	digest      string
	// Until is when the lease ends: another attempt may then take it.
	Until time.Time
}

// DeliveredError is Claim's answer for a notification already delivered
// within the window: the copy is not to be sent.
type DeliveredError struct {
	// At is when it was delivered.
	At time.Time
}

func (e *DeliveredError) Error() string {
	return "already delivered at " + e.At.UTC().Format(time.RFC3339)
}

// MismatchError is Claim's answer for a notification whose id was
// delivered, or is being delivered, with another digest: the producer
// reused the id for another notification (another destination, type or
// payload). It is not to be sent under that id; the record is kept as it
// is. Powertools' idempotency utility refuses a changed payload the same
// way (IdempotencyValidationError).
type MismatchError struct {
	// State is the record's state: StateDelivered or StateInProgress.
	State string
	// At is when the record was written (for a delivered one, when it was
	// delivered); zero when unknown.
	At time.Time
}

func (e *MismatchError) Error() string {
	verb := "was delivered"
	if e.State == StateInProgress {
		verb = "is being delivered"
	}
	at := ""
	if !e.At.IsZero() {
		at = " (" + e.At.UTC().Format(time.RFC3339) + ")"
	}
	return "another notification with this id " + verb + at + ": its digest differs"
}

// HeldError is Claim's answer for a notification whose lease another
// attempt holds: it may be being sent right now, so the copy is to be
// tried again after Until.
type HeldError struct {
	Until time.Time
}

func (e *HeldError) Error() string {
	return "another attempt holds its lease until " + e.Until.UTC().Format(time.RFC3339Nano)
}

// claimCondition lets a PutItem take a notification's lease when no live
// item holds it: there is none, the item is past its time to live, or it is
// a lease that has ended.
const claimCondition = "attribute_not_exists(#pk) OR #exp <= :now_s OR (#state = :in_progress AND #lease <= :now_ms)"

// Claim takes the lease on the notification (channel, id) until until, with
// one conditional PutItem. digest is the notification's fingerprint
// (package processor's: the content a copy shares), kept with the record;
// "" keeps none and checks none. A refusal names the item that refused it
// (ReturnValuesOnConditionCheckFailure); from a store that answers without
// it (emulators, older DynamoDB-compatible stores), the item is read back
// with one strongly consistent GetItem, and when that finds no live item
// (it was released or ended in between) the claim is tried once more.
// Errors:
//   - *DeliveredError: it was delivered within the window (not to be sent);
//   - *HeldError: another attempt's lease has not ended (retry after it);
//   - *MismatchError: the live record holds another digest (a record
//     without one, from an older herald, matches any);
//   - *Error: the call failed (DynamoDB's error inside), or the item that
//     refused the claim is not a delivery item this package wrote (no
//     state, or a lease without its end): never read as a lease that
//     ended in 1970.
func (s *Store) Claim(ctx context.Context, channel, id, digest string, until time.Time) (Lease, error) {
	op := fmt.Sprintf("claim %s %s", channel, id)
	for try := 0; ; try++ {
		l, item, err := s.claim(ctx, channel, id, digest, until)
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			return l, nil
		case !errors.As(err, &ccf):
			return Lease{}, &Error{Op: op, Err: err}
		case item == nil:
			if item, err = s.deliveryItem(ctx, channel, id); err != nil {
				return Lease{}, &Error{Op: op, Err: err}
			}
		}
		if item != nil && s.live(item) {
			return Lease{}, held(op, digest, item)
		}
		if try == 1 {
			return Lease{}, &Error{Op: op, Err: errors.New("the condition failed twice but no live item was read back")}
		}
	}
}

// claim makes Claim's conditional PutItem; item is the item that refused
// it, when the answer carries it.
func (s *Store) claim(ctx context.Context, channel, id, digest string, until time.Time) (Lease, map[string]types.AttributeValue, error) {
	now := s.cfg.Now()
	l := Lease{channel: channel, id: id, owner: token(), digest: digest, Until: until}
	item := deliveryKey(channel, id)
	item[AttrType] = str(typeDelivery)
	item[AttrState] = str(StateInProgress)
	item[AttrOwner] = str(l.owner)
	item[AttrLeaseUntil] = ms(until)
	item[AttrUpdatedAt] = ms(now)
	if digest != "" {
		item[AttrDigest] = str(digest)
	}
	// An abandoned lease (the invocation died) is forgotten a window after
	// its end.
	item[AttrExpiresAt] = seconds(until.Add(s.cfg.Window))
	_, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.cfg.Table),
		Item:                item,
		ConditionExpression: aws.String(claimCondition),
		ExpressionAttributeNames: map[string]string{
			"#pk": AttrPK, "#exp": AttrExpiresAt, "#state": AttrState, "#lease": AttrLeaseUntil,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now_s":       seconds(now),
			":now_ms":      ms(now),
			":in_progress": str(StateInProgress),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return Lease{}, ccf.Item, err
	}
	return l, nil, err
}

// deliveryItem reads a delivery item with one strongly consistent GetItem;
// nil when there is none.
func (s *Store) deliveryItem(ctx context.Context, channel, id string) (map[string]types.AttributeValue, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.cfg.Table),
		Key:            deliveryKey(channel, id),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("read back the item that refused the claim: %w", err)
	}
	return out.Item, nil
}

// live reports whether a delivery item refuses a claim now: claimCondition's
// negation. An item with no state, or whose lease or expiry is not a
// number, is live: held reports it as unreadable.
func (s *Store) live(item map[string]types.AttributeValue) bool {
	now := s.cfg.Now()
	if exp, ok := number(item, AttrExpiresAt); ok && exp <= now.Unix() {
		return false
	}
	if text(item, AttrState) != StateInProgress {
		return true
	}
	until, ok := number(item, AttrLeaseUntil)
	return !ok || until > now.UnixMilli()
}

// held reads the live item that refused a claim of digest: a
// *MismatchError when both have a digest and they differ, else a
// *DeliveredError or a *HeldError, or an *Error when the item is not one
// Claim or Delivered wrote.
func held(op, digest string, item map[string]types.AttributeValue) error {
	state := text(item, AttrState)
	if theirs := text(item, AttrDigest); digest != "" && theirs != "" && theirs != digest &&
		(state == StateDelivered || state == StateInProgress) {
		var at time.Time
		if v, ok := number(item, AttrUpdatedAt); ok && v > 0 {
			at = time.UnixMilli(v)
		}
		return &MismatchError{State: state, At: at}
	}
	switch state {
	case StateDelivered:
		var at time.Time // unknown, without updated_at
		if v, ok := number(item, AttrUpdatedAt); ok && v > 0 {
			at = time.UnixMilli(v)
		}
		return &DeliveredError{At: at}
	case StateInProgress:
		if until, ok := number(item, AttrLeaseUntil); ok && until > 0 {
			return &HeldError{Until: time.UnixMilli(until)}
		}
	}
	return &Error{Op: op, Err: fmt.Errorf("the item that refused the claim is not a delivery record (state %q, lease_until %v)", text(item, AttrState), item[AttrLeaseUntil] != nil)}
}

// Delivered records l's notification as delivered, remembered for the
// window: one PutItem over the lease item. It returns an *Error when the
// call fails; the lease then ends at its Until, and a copy after that is
// sent again (docs/reliability.md, the crash window).
func (s *Store) Delivered(ctx context.Context, l Lease) error {
	now := s.cfg.Now()
	item := deliveryKey(l.channel, l.id)
	item[AttrType] = str(typeDelivery)
	item[AttrState] = str(StateDelivered)
	item[AttrOwner] = str(l.owner)
	item[AttrUpdatedAt] = ms(now)
	if l.digest != "" {
		item[AttrDigest] = str(l.digest)
	}
	item[AttrExpiresAt] = seconds(now.Add(s.cfg.Window))
	if _, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.cfg.Table), Item: item}); err != nil {
		return &Error{Op: fmt.Sprintf("record %s %s delivered", l.channel, l.id), Err: err}
	}
	return nil
}

// Release gives l up after a failed attempt, so that the next copy is sent
// at once: one DeleteItem, conditional on l still being the holder (a lease
// that ended and was taken by another attempt is left to it). It returns an
// *Error when the call fails; the lease then ends at its Until.
func (s *Store) Release(ctx context.Context, l Lease) error {
	_, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.cfg.Table),
		Key:                       deliveryKey(l.channel, l.id),
		ConditionExpression:       aws.String("#owner = :owner AND #state = :in_progress"),
		ExpressionAttributeNames:  map[string]string{"#owner": AttrOwner, "#state": AttrState},
		ExpressionAttributeValues: map[string]types.AttributeValue{":owner": str(l.owner), ":in_progress": str(StateInProgress)},
	})
	var ccf *types.ConditionalCheckFailedException
	if err == nil || errors.As(err, &ccf) {
		return nil
	}
	return &Error{Op: fmt.Sprintf("release %s %s", l.channel, l.id), Err: err}
}
