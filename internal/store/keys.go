package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/heraldhq/herald/internal/webhook"
)

// typeKeys is the kind of a webhook origin's key record, in AttrType and
// its sort key.
const typeKeys = "keys"

// keysKey is a webhook origin's keys item key. origin is
// webhook.Origin's form, "scheme://host[:port]" (at most a few hundred
// bytes, far below DynamoDB's 2048-byte limit on a partition key).
func keysKey(origin string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: str("origin#" + origin),
		AttrSK: str(typeKeys),
	}
}

// OriginKeys is a webhook origin's key record: which versions of its
// per-destination key herald signs with (webhook.DeriveSecretVersion).
type OriginKeys struct {
	// Version is the current version, ≥ 1. An origin with no item is at
	// version 1: the key every receiver had before rotation existed.
	Version int
	// PreviousUntil is when version Version-1 stops signing; zero or past
	// when it no longer does.
	PreviousUntil time.Time
	// UpdatedAt is the last rotation; zero when there is no item.
	UpdatedAt time.Time
}

// ConflictError is Rotate's answer when another rotation of the origin
// wrote between its read and its write: nothing was changed.
type ConflictError struct{ Origin string }

func (e *ConflictError) Error() string {
	return "another rotation of " + e.Origin + " happened at the same time: nothing changed, try again"
}

// Keys reads origin's key record with one GetItem (eventually consistent:
// half the cost of a consistent read; a rotation reaches every reader
// within about a second). An origin without an item, or with one whose
// version is not a whole number ≥ 1, is at version 1. It returns an *Error when the
// call fails.
func (s *Store) Keys(ctx context.Context, origin string) (OriginKeys, error) {
	return s.keys(ctx, origin, false)
}

func (s *Store) keys(ctx context.Context, origin string, consistent bool) (OriginKeys, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.cfg.Table),
		Key:            keysKey(origin),
		ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return OriginKeys{}, &Error{Op: "read the keys of " + origin, Err: err}
	}
	return readKeys(out.Item), nil
}

func readKeys(item map[string]types.AttributeValue) OriginKeys {
	v, ok := number(item, AttrVersion)
	if !ok || v < 1 {
		return OriginKeys{Version: 1}
	}
	k := OriginKeys{Version: int(v)}
	if ms, ok := number(item, AttrPreviousUntil); ok {
		k.PreviousUntil = time.UnixMilli(ms)
	}
	if ms, ok := number(item, AttrUpdatedAt); ok {
		k.UpdatedAt = time.UnixMilli(ms)
	}
	return k
}

// Rotate starts origin's next key version: the current version n becomes
// the previous one, signing beside n+1 for grace (≥ 0), and a version
// before n, if still in its own grace period, stops at once. One consistent
// GetItem and one PutItem conditional on the version read (no item, or
// version n), so two rotations at once cannot both take n+1. The item has
// no time to live: it is the origin's key for as long as it is used.
//
// It returns the new record, a *ConflictError when another rotation wrote
// in between, or an *Error when a call fails.
func (s *Store) Rotate(ctx context.Context, origin string, grace time.Duration) (OriginKeys, error) {
	if grace < 0 {
		return OriginKeys{}, fmt.Errorf("store: rotate %s: grace %s is negative", origin, grace)
	}
	cur, err := s.keys(ctx, origin, true)
	if err != nil {
		return OriginKeys{}, err
	}
	now := s.cfg.Now()
	next := OriginKeys{Version: cur.Version + 1, PreviousUntil: now.Add(grace), UpdatedAt: now}
	item := keysKey(origin)
	item[AttrType] = str(typeKeys)
	item[AttrVersion] = &types.AttributeValueMemberN{Value: strconv.Itoa(next.Version)}
	item[AttrPreviousUntil] = ms(next.PreviousUntil)
	item[AttrUpdatedAt] = ms(now)
	id := rand.Text()
	item[AttrRotationID] = str(id)
	in := &dynamodb.PutItemInput{
		TableName:                aws.String(s.cfg.Table),
		Item:                     item,
		ExpressionAttributeNames: map[string]string{"#pk": AttrPK},
	}
	if cur.UpdatedAt.IsZero() { // no keys item yet
		in.ConditionExpression = aws.String("attribute_not_exists(#pk)")
	} else {
		in.ConditionExpression = aws.String("#version = :version")
		in.ExpressionAttributeNames = map[string]string{"#version": AttrVersion}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":version": &types.AttributeValueMemberN{Value: strconv.Itoa(cur.Version)}}
	}
	_, err = s.api.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return next, nil
	case errors.As(err, &ccf) && s.wroteRotation(ctx, origin, id):
		// The SDK retried a write that had gone through and whose answer
		// was lost: the retry's condition failed on this rotation's own item.
		return next, nil
	case errors.As(err, &ccf):
		return OriginKeys{}, &ConflictError{Origin: origin}
	default:
		return OriginKeys{}, &Error{Op: "rotate the keys of " + origin, Err: err}
	}
}

// wroteRotation reports whether origin's keys item holds the rotation id
// id, read consistently; a failed read reports false (a conflict, which
// changed nothing as far as the caller can tell).
func (s *Store) wroteRotation(ctx context.Context, origin, id string) bool {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.cfg.Table),
		Key:            keysKey(origin),
		ConsistentRead: aws.Bool(true),
	})
	return err == nil && text(out.Item, AttrRotationID) == id
}

var _ webhook.KeyVersionReader = (*Store)(nil)

// KeyVersions is [Store.Keys] as the webhook sender reads it: its error is
// a *delivery.TransientError of class [ClassThrottled] or
// [ClassUnavailable], so the record is retried later, never sent unsigned
// or with a key the receiver may not hold.
func (s *Store) KeyVersions(ctx context.Context, origin string) (webhook.KeyVersions, error) {
	k, err := s.Keys(ctx, origin)
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			return webhook.KeyVersions{}, se.Transient()
		}
		return webhook.KeyVersions{}, err
	}
	return webhook.KeyVersions{Version: k.Version, PreviousUntil: k.PreviousUntil}, nil
}
