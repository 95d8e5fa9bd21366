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
// one conditional PutItem. Errors:
//   - *DeliveredError: it was delivered within the window (not to be sent);
//   - *HeldError: another attempt's lease has not ended (retry after it);
//   - *Error: the call failed (DynamoDB's error inside).
func (s *Store) Claim(ctx context.Context, channel, id string, until time.Time) (Lease, error) {
	now := s.cfg.Now()
	l := Lease{channel: channel, id: id, owner: token(), Until: until}
	item := deliveryKey(channel, id)
	item[AttrType] = str(typeDelivery)
	item[AttrState] = str(StateInProgress)
	item[AttrOwner] = str(l.owner)
	item[AttrLeaseUntil] = ms(until)
	item[AttrUpdatedAt] = ms(now)
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
	switch {
	case err == nil:
		return l, nil
	case errors.As(err, &ccf):
		return Lease{}, held(ccf.Item)
	default:
		return Lease{}, &Error{Op: fmt.Sprintf("claim %s %s", channel, id), Err: err}
	}
}

// held reads the live item that refused a claim.
func held(item map[string]types.AttributeValue) error {
	if text(item, AttrState) == StateDelivered {
		at, _ := number(item, AttrUpdatedAt)
		return &DeliveredError{At: time.UnixMilli(at)}
	}
	until, _ := number(item, AttrLeaseUntil)
	return &HeldError{Until: time.UnixMilli(until)}
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
