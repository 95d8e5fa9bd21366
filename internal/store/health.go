package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of a health item (package doc).
const (
	AttrFailures     = "failures"
	AttrLastSuccess  = "last_success"
	AttrLastFailure  = "last_failure"
	AttrFailureClass = "failure_class"
	AttrProbeUntil   = "probe_until"
	AttrFailingSince = "failing_since"
	AttrDisabledAt   = "disabled_at"
	AttrDisabledBy   = "disabled_by"
	// AttrPendingEvents holds the events announcing a change of the
	// origin that are not published yet (package announce, Pending).
	AttrPendingEvents = "pending_events"
)

// Who disabled an origin, in a health item's disabled_by.
const (
	// DisabledByHerald: the deliver function, after no success for the
	// disable-after setting.
	DisabledByHerald = "herald"
	// DisabledByOperator: `herald destinations disable`.
	DisabledByOperator = "operator"
)

// typeHealth is a health item's kind, in AttrType.
const typeHealth = "origin_health"

// HealthRetention is how long a health item is kept after its last write:
// an origin nobody sends to for that long is forgotten (a closed circuit).
const HealthRetention = 30 * 24 * time.Hour

// maxHealthTries bounds UpdateHealth's compare-and-swap loop: another
// execution environment's write in between costs one more try.
const maxHealthTries = 3

// Health is a destination origin's health as the table holds it (package
// doc). The zero Health of an origin is one nothing is known of: no
// failures, a closed circuit.
type Health struct {
	// Origin is the destination's origin as webhook.Origin writes it.
	Origin string
	// Failures is the number of consecutive failures that said the origin
	// is down (delivery.OriginDown).
	Failures int
	// LastSuccess and LastFailure are the last recorded delivery and
	// origin-down failure; zero when none.
	LastSuccess, LastFailure time.Time
	// FailureClass is LastFailure's class.
	FailureClass string
	// ProbeUntil is when the probe lease ends, zero when nobody holds it;
	// ProbeOwner is its holder's token.
	ProbeUntil time.Time
	ProbeOwner string
	// FailingSince is the first of the current run of consecutive
	// failures; zero when Failures is 0.
	FailingSince time.Time
	// DisabledAt is when the origin was disabled, zero while it is
	// enabled; DisabledBy says who did (DisabledByHerald,
	// DisabledByOperator).
	DisabledAt time.Time
	DisabledBy string
	// PendingEvents is the JSON array of the events announcing a change
	// of this origin that are not published yet (announce.Pending),
	// written with the change; "" when none.
	PendingEvents string
	// version counts the item's writes, for the compare-and-swap.
	version int64
}

// NewOwner returns a random token to hold a probe lease with.
func NewOwner() string { return token() }

func healthKey(origin string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: str("origin#" + origin),
		AttrSK: str("health"),
	}
}

// Version is the number of writes of the origin's item when h was read
// (0: none); the write UpdateHealth makes of a change is Version()+1.
// It grows with every write until the item is forgotten (HealthRetention
// without a write, an enabled origin only), then starts again.
func (h Health) Version() int64 { return h.version }

// Disabled reports whether the origin is disabled.
func (h Health) Disabled() bool { return !h.DisabledAt.IsZero() }

// Health reads origin's health with one strongly consistent GetItem; an
// absent or expired item is the zero Health. It returns an *Error when the
// call fails.
func (s *Store) Health(ctx context.Context, origin string) (Health, error) {
	return s.health(ctx, origin, true)
}

// RecentHealth reads origin's health as [Store.Health] does but with an
// eventually consistent GetItem: half the read request units of a
// consistent read (0.5 for an item up to 4 KB;
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html),
// and it may miss a write of the last second or so. For a reader that
// keeps its copy for seconds anyway (the circuit, 5 s): a write it makes
// from a stale copy is refused by UpdateHealth's condition and applied to
// the item as it is.
func (s *Store) RecentHealth(ctx context.Context, origin string) (Health, error) {
	return s.health(ctx, origin, false)
}

func (s *Store) health(ctx context.Context, origin string, consistent bool) (Health, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.cfg.Table),
		Key:            healthKey(origin),
		ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return Health{Origin: origin}, &Error{Op: "read health of " + origin, Err: err}
	}
	return s.parseHealth(origin, out.Item), nil
}

// parseHealth reads a health item; an absent one is the zero Health, an
// expired one too but for its version, which the next write must match.
func (s *Store) parseHealth(origin string, item map[string]types.AttributeValue) Health {
	h := Health{Origin: origin}
	if item == nil {
		return h
	}
	h.version, _ = number(item, AttrVersion)
	if exp, ok := number(item, AttrExpiresAt); ok && exp <= s.cfg.Now().Unix() {
		return h
	}
	failures, _ := number(item, AttrFailures)
	h.Failures = int(failures)
	h.LastSuccess = msTime(item, AttrLastSuccess)
	h.LastFailure = msTime(item, AttrLastFailure)
	h.FailureClass = text(item, AttrFailureClass)
	h.ProbeUntil = msTime(item, AttrProbeUntil)
	h.ProbeOwner = text(item, AttrOwner)
	h.FailingSince = msTime(item, AttrFailingSince)
	h.DisabledAt = msTime(item, AttrDisabledAt)
	h.DisabledBy = text(item, AttrDisabledBy)
	h.PendingEvents = text(item, AttrPendingEvents)
	return h
}

func msTime(item map[string]types.AttributeValue, name string) time.Time {
	if v, ok := number(item, name); ok && v > 0 {
		return time.UnixMilli(v)
	}
	return time.Time{}
}

// UpdateHealth applies change to h, the caller's latest copy of the
// origin's health, and writes the result with one PutItem conditional on
// the item being unchanged since h was read. When another writer came
// first it applies change to the item that writer left and tries again, at
// most 3 times in all. change returns false to write nothing; UpdateHealth
// then returns the health it was applied to and false. It returns the
// health written and true, or an *Error when a call failed or every try
// met another writer.
func (s *Store) UpdateHealth(ctx context.Context, h Health, change func(*Health) bool) (Health, bool, error) {
	for range maxHealthTries {
		next := h
		if !change(&next) {
			return h, false, nil
		}
		next.version = h.version + 1
		now := s.cfg.Now()
		item := healthKey(h.Origin)
		item[AttrType] = str(typeHealth)
		item[AttrFailures] = &types.AttributeValueMemberN{Value: fmt.Sprint(next.Failures)}
		item[AttrVersion] = &types.AttributeValueMemberN{Value: fmt.Sprint(next.version)}
		item[AttrUpdatedAt] = ms(now)
		if !next.Disabled() {
			// A disabled origin stays disabled until enabled, however
			// long nothing is sent to it.
			item[AttrExpiresAt] = seconds(now.Add(HealthRetention))
		}
		for name, t := range map[string]time.Time{AttrLastSuccess: next.LastSuccess, AttrLastFailure: next.LastFailure,
			AttrProbeUntil: next.ProbeUntil, AttrFailingSince: next.FailingSince, AttrDisabledAt: next.DisabledAt} {
			if !t.IsZero() {
				item[name] = ms(t)
			}
		}
		for name, v := range map[string]string{AttrFailureClass: next.FailureClass, AttrOwner: next.ProbeOwner, AttrDisabledBy: next.DisabledBy,
			AttrPendingEvents: next.PendingEvents} {
			if v != "" {
				item[name] = str(v)
			}
		}
		cond, values := "attribute_not_exists(#pk)", map[string]types.AttributeValue(nil)
		if h.version > 0 {
			cond, values = "#version = :version", map[string]types.AttributeValue{":version": &types.AttributeValueMemberN{Value: fmt.Sprint(h.version)}}
		}
		names := map[string]string{"#pk": AttrPK}
		if h.version > 0 {
			names = map[string]string{"#version": AttrVersion}
		}
		_, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                           aws.String(s.cfg.Table),
			Item:                                item,
			ConditionExpression:                 aws.String(cond),
			ExpressionAttributeNames:            names,
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			return next, true, nil
		case errors.As(err, &ccf) && ccf.Item == nil:
			// A store that answers without the item (emulators): read it.
			if h, err = s.Health(ctx, h.Origin); err != nil {
				return h, false, err
			}
		case errors.As(err, &ccf):
			h = s.parseHealth(h.Origin, ccf.Item)
		default:
			return h, false, &Error{Op: "write health of " + h.Origin, Err: err}
		}
	}
	return h, false, &Error{Op: "write health of " + h.Origin, Err: contendedError{maxHealthTries}}
}

// SetDisabled disables (disabled true, by DisabledByOperator) or enables
// origin with UpdateHealth. Enabling also forgets the run of failures, so
// the circuit is closed and the origin is not disabled again before its
// next run of failures lasts the disable-after setting. Each of also, when
// given, is applied to the changed health in the same write, with the
// health before the change (to record the event announcing it). It
// returns the health as it now is and whether this call changed it, or an
// *Error.
func (s *Store) SetDisabled(ctx context.Context, origin string, disabled bool, also ...func(before Health, h *Health)) (Health, bool, error) {
	h, err := s.Health(ctx, origin)
	if err != nil {
		return h, false, err
	}
	now := s.cfg.Now()
	return s.UpdateHealth(ctx, h, func(h *Health) bool {
		if h.Disabled() == disabled {
			return false
		}
		before := *h
		if disabled {
			h.DisabledAt, h.DisabledBy = now, DisabledByOperator
		} else {
			h.DisabledAt, h.DisabledBy = time.Time{}, ""
			h.Failures, h.FailingSince = 0, time.Time{}
			h.ProbeUntil, h.ProbeOwner = time.Time{}, ""
		}
		for _, f := range also {
			f(before, h)
		}
		return true
	})
}

// Healths reads every origin's health with Scan, one page (up to 1 MB)
// per call, for the operator's `herald destinations ls`: the deliver
// function never scans. Expired items are left out. It returns them
// sorted by origin, or an *Error.
func (s *Store) Healths(ctx context.Context) ([]Health, error) {
	var out []Health
	var start map[string]types.AttributeValue
	for {
		page, err := s.api.Scan(ctx, &dynamodb.ScanInput{
			TableName:         aws.String(s.cfg.Table),
			ExclusiveStartKey: start,
			ConsistentRead:    aws.Bool(true),
		})
		if err != nil {
			return nil, &Error{Op: "scan origin health", Err: err}
		}
		for _, item := range page.Items {
			if text(item, AttrType) != typeHealth {
				continue
			}
			origin, ok := strings.CutPrefix(text(item, AttrPK), "origin#")
			if !ok {
				continue
			}
			h := s.parseHealth(origin, item)
			if exp, ok := number(item, AttrExpiresAt); ok && exp <= s.cfg.Now().Unix() {
				continue
			}
			out = append(out, h)
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		start = page.LastEvaluatedKey
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Origin < out[j].Origin })
	return out, nil
}
