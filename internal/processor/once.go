package processor

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/notification"
)

// OnceStore remembers which notifications were delivered, so that a copy
// SQS hands over again is not sent again (package store).
type OnceStore interface {
	// NewBatch starts an invocation's batch of leases.
	NewBatch() *store.Batch
	// Claim takes the notification's lease in batch b until until,
	// keeping its digest: a *store.DeliveredError when it was delivered,
	// a *store.HeldError when another attempt holds it, a
	// *store.MismatchError when the record holds another digest, a
	// *store.Error when the store failed.
	Claim(ctx context.Context, b *store.Batch, channel, id, digest string, until time.Time) (store.Lease, error)
	// Confirm records the delivered leases of b, with one write.
	Confirm(ctx context.Context, b *store.Batch, ls []store.Lease) error
	// Release gives the lease up after a failed attempt.
	Release(ctx context.Context, l store.Lease) error
}

var _ OnceStore = (*store.Store)(nil)

// ClassInProgress is the class of a copy not sent because another attempt
// holds the notification's lease: it may be sending it right now. The copy
// is retried after the lease ends.
var ClassInProgress = delivery.NewClass("delivery_in_progress")

// ClassIDReused is the class of a notification whose id was delivered, or
// is being delivered, with another digest (Digest): the producer reused
// the id for another destination, type or payload. It is dead-lettered at
// once, never sent under that id, and counted (DeadLetters with this
// error_class), as Powertools' idempotency utility refuses a changed
// payload (IdempotencyValidationError).
var ClassIDReused = delivery.NewClass("notification_id_reused")

// Digest is the fingerprint of the content every copy of m shares, kept
// with its delivered-once record: the SHA-256 of m as encoding/json writes
// it (struct fields in order, map keys sorted, raw JSON such as a webhook
// payload without its white space) without the fields that may differ
// between a producer's copies of one notification — created_at,
// expires_at and metadata — in base64url without padding (43 characters).
// Another destination, type, subject, payload or content is another
// digest; so is a payload whose keys come in another order.
func Digest(m *notification.Message) string {
	c := *m
	c.CreatedAt, c.ExpiresAt, c.Metadata = nil, nil, nil
	h := sha256.New()
	// A parsed Message always encodes: its raw members were checked JSON.
	_ = json.NewEncoder(h).Encode(&c)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// MaxLease is the lease an attempt takes when the invocation has no
// deadline: the longest a Lambda invocation can run (15 minutes).
const MaxLease = 15 * time.Minute

// leaseMargin is added to the invocation's deadline, for the clocks of two
// execution environments that differ by a little.
const leaseMargin = time.Second

// leaseUntil is when a lease taken in the invocation ctx ends: its
// deadline plus leaseMargin, or MaxLease from now without one.
func (p *Processor) leaseUntil(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d.Add(leaseMargin)
	}
	return p.cfg.Now().Add(MaxLease)
}

// claim asks the store, when there is one, whether r may be sent. It
// returns the lease to settle after the send, and whether to send: a copy
// of a delivered notification is settled as Duplicate, another
// notification under a delivered or leased id is dead-lettered
// (ClassIDReused), a copy whose lease
// another attempt holds is retried after the lease ends, and a store
// failure is retried later too, or sent without a lease when
// Config.SendOnStoreError is set.
func (p *Processor) claim(ctx, deliverCtx context.Context, r *record) (*store.Lease, bool) {
	if p.cfg.Once == nil || p.cfg.OnceChannels != nil && !slices.Contains(p.cfg.OnceChannels, r.n.Channel) {
		return nil, true
	}
	now := p.cfg.Now()
	l, err := p.cfg.Once.Claim(deliverCtx, r.once, string(r.n.Channel), r.n.ID, Digest(r.n), p.leaseUntil(ctx))
	var (
		done     *store.DeliveredError
		held     *store.HeldError
		mismatch *store.MismatchError
		se       *store.Error
	)
	switch {
	case err == nil:
		return &l, true
	case errors.As(err, &mismatch):
		p.deadLetter(ctx, r, delivery.Permanent(ClassIDReused, fmt.Errorf("not sent: %w", err)))
		return nil, false
	case errors.As(err, &done):
		r.outcome, r.deliveredAt = Duplicate, done.At
		return nil, false
	case errors.As(err, &held):
		p.fail(ctx, r, &delivery.TransientError{Class: ClassInProgress, RetryAfter: held.Until.Sub(now), Err: fmt.Errorf("not sent: %w", err)})
		return nil, false
	case errors.As(err, &se) && p.cfg.SendOnStoreError:
		r.storeErr = err
		return nil, true
	case errors.As(err, &se):
		r.storeErr = err
		p.fail(ctx, r, se.Transient())
		return nil, false
	default:
		r.storeErr = err
		p.fail(ctx, r, delivery.Transient(store.ClassUnavailable, err))
		return nil, false
	}
}

// settle records the attempt's end: a delivered lease is kept for
// confirm, a failed attempt's released at once so that the next copy is
// sent. The release uses ctx, the invocation's, not the deliveries'. A
// failed release is logged with the record (store_error) and counted
// (StoreErrors); the lease then ends at its Until.
func (p *Processor) settle(ctx context.Context, r *record, l *store.Lease, delivered bool) {
	if l == nil {
		return
	}
	if delivered {
		r.lease = l
		return
	}
	if err := p.cfg.Once.Release(ctx, *l); err != nil {
		r.storeErr = err
	}
}

// confirm records the batch's delivered leases with one write
// (OnceStore.Confirm), after every delivery of the batch. A failure is
// logged with each of those records (store_error) and counted
// (StoreErrors); their leases then end unconfirmed at their Until, and a
// copy after that is sent again (docs/reliability.md, the crash window).
func (p *Processor) confirm(ctx context.Context, b *store.Batch, recs []*record) {
	if b == nil {
		return
	}
	var ls []store.Lease
	for _, r := range recs {
		if r.lease != nil {
			ls = append(ls, *r.lease)
		}
	}
	if err := p.cfg.Once.Confirm(ctx, b, ls); err != nil {
		for _, r := range recs {
			if r.lease != nil && r.storeErr == nil {
				r.storeErr = err
			}
		}
	}
}
