package announce

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/heraldhq/herald/internal/store"
)

// Pending is an event recorded in its origin's health item
// (store.Health.PendingEvents) in the same write as the change it
// announces, and removed once published: an event EventBridge refused, or
// that a crash or a deadline cut off, is published later by the next
// deliver function that reads the origin or the next `herald destinations`
// command that changes or re-runs on it (Finish). It is sent at least
// once, so a consumer deduplicates on origin and at (docs/alarms.md).
type Pending struct {
	DetailType string `json:"detail_type"`
	Detail     Event  `json:"detail"`
}

// MaxPending bounds the events an item keeps: the oldest goes when an
// 11th is added, and the oldest kept counts it (Event.DroppedBefore).
// Each is about 450 bytes and an origin at most about 2 KiB, so the list
// stays far below DynamoDB's 400 KB item; an origin changes that often
// only when an operator disables and enables it again and again while
// the bus refuses every event.
const MaxPending = 10

// AppendPending returns list (a JSON array of Pending, "" for none) with p
// added at its end, given an ID (Event.ID) when it has none. Beyond
// MaxPending the oldest are dropped and the oldest kept counts them, and
// those they counted, in DroppedBefore. An unreadable list is replaced.
func AppendPending(list string, p Pending) string {
	ps, _ := ParsePending(list)
	if p.Detail.ID == "" {
		p.Detail.ID = newID()
	}
	ps = append(ps, p)
	if n := len(ps) - MaxPending; n > 0 {
		dropped := 0
		for _, d := range ps[:n] {
			dropped += 1 + d.Detail.DroppedBefore
		}
		ps = ps[n:]
		ps[0].Detail.DroppedBefore += dropped
	}
	return encodePending(ps)
}

// Record adds p to h.PendingEvents (AppendPending) with its Sequence set
// to the version of the write being made of h: call it in the change
// function given to store.Store.UpdateHealth (or SetDisabled), which is
// applied again to another writer's item when that writer came first, so
// the event written carries the version written.
func Record(h *store.Health, p Pending) {
	p.Detail.Sequence = h.Version() + 1
	h.PendingEvents = AppendPending(h.PendingEvents, p)
}

// published reports whether p is one of done: the same ID (an event keeps
// it however the list around it changed, DroppedBefore included), or, for
// an event recorded before events had IDs, the same event.
func published(done []Pending, p Pending) bool {
	return slices.ContainsFunc(done, func(d Pending) bool {
		if p.Detail.ID != "" {
			return d.Detail.ID == p.Detail.ID
		}
		return d == p
	})
}

// newID returns 32 random hex digits.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// ParsePending reads list, a JSON array of Pending; "" is none.
func ParsePending(list string) ([]Pending, error) {
	if list == "" {
		return nil, nil
	}
	var ps []Pending
	if err := json.Unmarshal([]byte(list), &ps); err != nil {
		return nil, fmt.Errorf("pending events: %w", err)
	}
	return ps, nil
}

func encodePending(ps []Pending) string {
	if len(ps) == 0 {
		return ""
	}
	b, err := json.Marshal(ps)
	if err != nil { // cannot happen: strings and numbers
		panic(err)
	}
	return string(b)
}

// Publishing publishes one event (Publisher).
type Publishing interface {
	Publish(ctx context.Context, detailType string, e Event) error
}

var _ Publishing = (*Publisher)(nil)

// HealthWriter writes an origin's health (store.Store).
type HealthWriter interface {
	UpdateHealth(ctx context.Context, h store.Health, change func(*store.Health) bool) (store.Health, bool, error)
}

var _ HealthWriter = (*store.Store)(nil)

// Finish publishes h's pending events oldest first, stopping at the first
// that is not published, and removes the published ones (by ID) from the
// item with one conditional write: events another writer added in between
// stay, and one it removed stays removed. It returns the health as
// last written or read, and an error naming the event not published or
// the failed write: what was not removed stays pending. An unreadable
// list is removed, with an error.
func Finish(ctx context.Context, pub Publishing, st HealthWriter, h store.Health) (store.Health, error) {
	ps, perr := ParsePending(h.PendingEvents)
	sent := 0
	var err error
	for _, p := range ps {
		if err = pub.Publish(ctx, p.DetailType, p.Detail); err != nil {
			break
		}
		sent++
	}
	if sent == 0 && perr == nil {
		return h, err
	}
	done := ps[:sent]
	h2, _, werr := st.UpdateHealth(ctx, h, func(h *store.Health) bool {
		now, rerr := ParsePending(h.PendingEvents)
		if rerr != nil {
			h.PendingEvents = ""
			return true
		}
		left := slices.DeleteFunc(slices.Clone(now), func(p Pending) bool { return published(done, p) })
		if len(left) == len(now) {
			return false
		}
		h.PendingEvents = encodePending(left)
		return true
	})
	switch {
	case werr != nil:
		return h, fmt.Errorf("%d published event(s) of %s still recorded as pending: %w", sent, h.Origin, werr)
	case perr != nil:
		return h2, fmt.Errorf("removed unreadable %w", perr)
	}
	return h2, err
}
