package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item kinds, in AttrType.
const (
	typeDelivery = "delivery"
	typeConfirm  = "delivery_batch"
)

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
	batch       string // "" for a lease of no batch
	seq         int64  // its number in its batch, from 1
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
// a lease of no batch that has ended. A lease of a batch that has ended may
// have been delivered (its batch's confirm item says): Claim reads that
// before it takes the lease over with takeOverCondition.
const claimCondition = "attribute_not_exists(#pk) OR #exp <= :now_s OR (#state = :in_progress AND #lease <= :now_ms AND attribute_not_exists(#batch))"

// takeOverCondition takes over the ended lease Claim read and found not
// delivered: still that owner's, still in progress, still ended.
const takeOverCondition = "#owner = :seen AND #state = :in_progress AND #lease <= :now_ms"

// maxClaimTries bounds Claim's conditional writes: a first one, one after
// a refusal by an item that then was no longer live, one taking over an
// ended lease.
const maxClaimTries = 3

// Batch is one invocation's delivered-once work ([Store.NewBatch]): its
// leases are recorded delivered together by one [Store.Confirm]. Safe for
// concurrent use.
type Batch struct {
	id  string
	seq atomic.Int64
}

// NewBatch starts a batch of leases under a new random id.
func (s *Store) NewBatch() *Batch { return &Batch{id: token()} }

// Claim takes the lease on the notification (channel, id) until until, with
// one conditional PutItem. digest is the notification's fingerprint
// (package processor's: the content a copy shares), kept with the record;
// "" keeps none and checks none. b, when not nil, is the batch whose
// [Store.Confirm] records the lease delivered; without one, [Store.Delivered]
// does.
//
// A refusal names the item that refused it
// (ReturnValuesOnConditionCheckFailure); from a store that answers without
// it (emulators, older DynamoDB-compatible stores), the item is read back
// with one strongly consistent GetItem, and when that finds no live item
// (it was released or ended in between) the claim is tried again. A lease
// of a batch is read against its batch's confirm item (one strongly
// consistent GetItem): delivered; else held while it lasts; else (its
// invocation died unconfirmed) taken over with a PutItem conditional on
// its owner.
// Errors:
//   - *DeliveredError: it was delivered within the window (not to be sent);
//   - *HeldError: another attempt's lease has not ended (retry after it);
//   - *MismatchError: the live record holds another digest (a record
//     without one, from an older herald, matches any);
//   - *Error: the call failed (DynamoDB's error inside), or the item that
//     refused the claim is not a delivery item this package wrote (no
//     state, or a lease without its end): never read as a lease that
//     ended in 1970.
func (s *Store) Claim(ctx context.Context, b *Batch, channel, id, digest string, until time.Time) (Lease, error) {
	op := fmt.Sprintf("claim %s %s", channel, id)
	seen := "" // the owner of an ended, unconfirmed lease to take over
	for range maxClaimTries {
		l, item, err := s.claim(ctx, b, channel, id, digest, until, seen)
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
		seen = ""
		if item == nil || !s.live(item) {
			continue
		}
		if !inBatch(item) {
			return Lease{}, held(op, digest, item)
		}
		at, delivered, err := s.confirmed(ctx, item)
		switch {
		case err != nil:
			return Lease{}, &Error{Op: op, Err: err}
		case delivered && mismatched(digest, item):
			return Lease{}, &MismatchError{State: StateDelivered, At: at}
		case delivered:
			return Lease{}, &DeliveredError{At: at}
		case !s.ended(item) || mismatched(digest, item):
			return Lease{}, held(op, digest, item)
		}
		seen = text(item, AttrOwner)
	}
	return Lease{}, &Error{Op: op, Err: fmt.Errorf("%d conditional writes met other writers", maxClaimTries)}
}

// claim makes Claim's conditional PutItem, taking over seen's ended lease
// when seen is not empty; item is the item that refused it, when the answer
// carries it.
func (s *Store) claim(ctx context.Context, b *Batch, channel, id, digest string, until time.Time, seen string) (Lease, map[string]types.AttributeValue, error) {
	now := s.cfg.Now()
	l := Lease{channel: channel, id: id, owner: token(), digest: digest, Until: until}
	item := deliveryKey(channel, id)
	item[AttrType] = str(typeDelivery)
	item[AttrState] = str(StateInProgress)
	if b != nil {
		l.batch, l.seq = b.id, b.seq.Add(1)
		l.owner = b.id + "." + strconv.FormatInt(l.seq, 10)
		item[AttrBatch] = str(l.batch)
		item[AttrSeq] = &types.AttributeValueMemberN{Value: strconv.FormatInt(l.seq, 10)}
	}
	item[AttrOwner] = str(l.owner)
	item[AttrLeaseUntil] = ms(until)
	item[AttrUpdatedAt] = ms(now)
	if digest != "" {
		item[AttrDigest] = str(digest)
	}
	// An abandoned lease (the invocation died) is forgotten a window after
	// its end.
	item[AttrExpiresAt] = seconds(until.Add(s.cfg.Window))
	in := &dynamodb.PutItemInput{
		TableName:           aws.String(s.cfg.Table),
		Item:                item,
		ConditionExpression: aws.String(claimCondition),
		ExpressionAttributeNames: map[string]string{
			"#pk": AttrPK, "#exp": AttrExpiresAt, "#state": AttrState, "#lease": AttrLeaseUntil, "#batch": AttrBatch,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now_s":       seconds(now),
			":now_ms":      ms(now),
			":in_progress": str(StateInProgress),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if seen != "" {
		in.ConditionExpression = aws.String(takeOverCondition)
		in.ExpressionAttributeNames = map[string]string{"#owner": AttrOwner, "#state": AttrState, "#lease": AttrLeaseUntil}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":seen": str(seen), ":now_ms": ms(now), ":in_progress": str(StateInProgress)}
	}
	_, err := s.api.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return Lease{}, ccf.Item, err
	}
	return l, nil, err
}

// inBatch reports whether item is a lease of a batch, which its batch's
// confirm item may record delivered.
func inBatch(item map[string]types.AttributeValue) bool {
	_, seqOK := number(item, AttrSeq)
	return text(item, AttrState) == StateInProgress && text(item, AttrBatch) != "" && seqOK
}

// ended reports whether a lease item's lease has ended.
func (s *Store) ended(item map[string]types.AttributeValue) bool {
	until, ok := number(item, AttrLeaseUntil)
	return ok && until > 0 && until <= s.cfg.Now().UnixMilli()
}

// confirmed reads the confirm item of a lease's batch with one
// strongly consistent GetItem: whether it lists the lease, and when it was
// written.
func (s *Store) confirmed(ctx context.Context, lease map[string]types.AttributeValue) (time.Time, bool, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.cfg.Table),
		Key:            confirmKey(text(lease, AttrBatch)),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read the batch of the lease that refused the claim: %w", err)
	}
	seq, _ := number(lease, AttrSeq)
	ns, _ := out.Item[AttrDelivered].(*types.AttributeValueMemberNS)
	if ns == nil || !slices.Contains(ns.Value, strconv.FormatInt(seq, 10)) {
		return time.Time{}, false, nil
	}
	var at time.Time
	if v, ok := number(out.Item, AttrUpdatedAt); ok && v > 0 {
		at = time.UnixMilli(v)
	}
	return at, true, nil
}

// confirmKey is a batch's confirm item key.
func confirmKey(batch string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrPK: str("batch#" + batch), AttrSK: str(typeConfirm)}
}

// Confirm records the leases of b in ls as delivered, remembered for the
// window after the latest lease's end: one PutItem of b's confirm item
// listing their sequence numbers, whatever their number (a batch of 100
// lists under 400 bytes: one write request unit). Nothing is written for
// no leases. It returns an *Error when the call fails; the leases then end
// at their Until unconfirmed, and a copy after that is sent again
// (docs/reliability.md, the crash window).
func (s *Store) Confirm(ctx context.Context, b *Batch, ls []Lease) error {
	if len(ls) == 0 {
		return nil
	}
	seqs := make([]string, 0, len(ls))
	var last time.Time
	for _, l := range ls {
		if l.batch != b.id {
			return fmt.Errorf("store: confirm: lease %s %s is not of batch %s", l.channel, l.id, b.id)
		}
		seqs = append(seqs, strconv.FormatInt(l.seq, 10))
		if l.Until.After(last) {
			last = l.Until
		}
	}
	now := s.cfg.Now()
	item := confirmKey(b.id)
	item[AttrType] = str(typeConfirm)
	item[AttrDelivered] = &types.AttributeValueMemberNS{Value: seqs}
	item[AttrUpdatedAt] = ms(now)
	item[AttrExpiresAt] = seconds(last.Add(s.cfg.Window))
	if _, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.cfg.Table), Item: item}); err != nil {
		return &Error{Op: fmt.Sprintf("confirm %d deliveries", len(ls)), Err: err}
	}
	return nil
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
	if text(item, AttrBatch) != "" {
		return true // ended or not: claimCondition refuses it
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
	if mismatched(digest, item) {
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

// mismatched reports whether a delivered or in-progress item holds another
// digest than digest; an empty one on either side matches any.
func mismatched(digest string, item map[string]types.AttributeValue) bool {
	state := text(item, AttrState)
	theirs := text(item, AttrDigest)
	return digest != "" && theirs != "" && theirs != digest && (state == StateDelivered || state == StateInProgress)
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
