package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of a pace item (package doc).
const (
	AttrNext  = "next"
	AttrUntil = "until"
)

// typePace is a pace item's kind, in AttrType.
const typePace = "chat_pace"

// maxPaceTries bounds UpdatePace's compare-and-swap loop. Each environment
// sending to the webhook can come first once; more than that many
// environments at one instant cost a send a store error, and the sender
// then paces it alone.
const maxPaceTries = 5

// Pace is one chat webhook's pace shared by every execution environment
// (package chat's pacer): the generic cell rate algorithm's theoretical
// arrival time and the end of the service's last hold. The zero Pace of a
// key is one nothing is known of: the next send may go at once.
type Pace struct {
	// Key is the webhook's destination key (chat.Destination): a digest,
	// never its URL.
	Key string
	// Next is the theoretical arrival time of the next send; Until is when
	// a 429 or an empty bucket stops holding the webhook. Zero when none.
	// The item keeps both to the millisecond, rounded up (UpdatePace).
	Next, Until time.Time
	// Expires is when the item may be forgotten: the writer sets it past
	// Next and Until. Zero: HealthRetention after the write.
	Expires time.Time
	// version counts the item's writes, for the compare and swap.
	version int64
}

func paceKey(key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrPK: str("chat#" + key), AttrSK: str("pace")}
}

// parsePace reads a pace item; an absent or expired one is the zero Pace
// but for its version, which the next write must match.
func (s *Store) parsePace(key string, item map[string]types.AttributeValue) Pace {
	p := Pace{Key: key}
	if item == nil {
		return p
	}
	p.version, _ = number(item, AttrVersion)
	if exp, ok := number(item, AttrExpiresAt); ok && exp <= s.cfg.Now().Unix() {
		return p
	}
	p.Next, p.Until = msTime(item, AttrNext), msTime(item, AttrUntil)
	if exp, ok := number(item, AttrExpiresAt); ok {
		p.Expires = time.Unix(exp, 0)
	}
	return p
}

// UpdatePace applies change to p, the caller's latest copy of the
// webhook's pace (the zero Pace of its key at first), and writes the
// result with one PutItem conditional on the item being as p was read:
// absent for version 0, else at p's version. When another writer came
// first, the condition's failure returns the item it left
// (ReturnValuesOnConditionCheckFailure), change is applied to it and the
// write tried again, at most 5 times in all: no read is made, but for a
// store that answers a failed condition without the item (emulators,
// older compatible stores), where one consistent GetItem reads it. change
// returns false to write nothing; UpdatePace then returns the pace it was
// applied to and false. It returns the pace written and true, or an *Error
// when a call failed or every try met another writer.
//
// Cost: one write unit (an item under 1 KB) per call when this environment
// was the last writer, one more per other environment that came first.
func (s *Store) UpdatePace(ctx context.Context, p Pace, change func(*Pace) bool) (Pace, bool, error) {
	for range maxPaceTries {
		next := p
		if !change(&next) {
			return p, false, nil
		}
		next.version = p.version + 1
		// The item keeps milliseconds: a turn or hold is rounded up, never
		// down, so that no writer that reads it gets a turn early (an
		// interval of 1.43 ms rounded down each time is 1 ms).
		next.Next, next.Until = ceilMS(next.Next), ceilMS(next.Until)
		now := s.cfg.Now()
		if next.Expires.IsZero() {
			next.Expires = now.Add(HealthRetention)
		}
		item := paceKey(p.Key)
		item[AttrType] = str(typePace)
		item[AttrVersion] = &types.AttributeValueMemberN{Value: strconv.FormatInt(next.version, 10)}
		item[AttrExpiresAt] = seconds(next.Expires.Add(time.Second - 1)) // rounded up
		for name, t := range map[string]time.Time{AttrNext: next.Next, AttrUntil: next.Until} {
			if !t.IsZero() {
				item[name] = ms(t)
			}
		}
		in := &dynamodb.PutItemInput{
			TableName:                           aws.String(s.cfg.Table),
			Item:                                item,
			ConditionExpression:                 aws.String("attribute_not_exists(#pk)"),
			ExpressionAttributeNames:            map[string]string{"#pk": AttrPK},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}
		if p.version > 0 {
			in.ConditionExpression = aws.String("#version = :version")
			in.ExpressionAttributeNames = map[string]string{"#version": AttrVersion}
			in.ExpressionAttributeValues = map[string]types.AttributeValue{":version": &types.AttributeValueMemberN{Value: strconv.FormatInt(p.version, 10)}}
		}
		_, err := s.api.PutItem(ctx, in)
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			next.Expires = time.Unix(next.Expires.Add(time.Second-1).Unix(), 0)
			return next, true, nil
		case errors.As(err, &ccf) && ccf.Item != nil:
			p = s.parsePace(p.Key, ccf.Item)
		case errors.As(err, &ccf):
			// A store that answers without the item (emulators, older
			// compatible stores): read it, as every conditional write here does.
			out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
				TableName: aws.String(s.cfg.Table), Key: paceKey(p.Key), ConsistentRead: aws.Bool(true)})
			if err != nil {
				return p, false, &Error{Op: "read pace of " + p.Key, Err: err}
			}
			p = s.parsePace(p.Key, out.Item)
		default:
			return p, false, &Error{Op: "write pace of " + p.Key, Err: err}
		}
	}
	return p, false, &Error{Op: "write pace of " + p.Key, Err: contendedError{maxPaceTries}}
}

// ceilMS is t rounded up to the millisecond, the item's unit; the zero
// time stays zero.
func ceilMS(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Add(time.Millisecond - 1).Truncate(time.Millisecond)
}
