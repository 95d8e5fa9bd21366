package once

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/notification"
)

// Sender is what Once wraps and what it returns: a channel's sender, or
// another middleware around it. It returns nil when the notification was
// delivered, or an error classified by package delivery.
type Sender interface {
	Send(ctx context.Context, m *notification.Message) error
}

// Store remembers which notifications were delivered, so that a copy SQS
// hands over again is not sent again (package store).
type Store interface {
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

var _ Store = (*store.Store)(nil)

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

// Config configures Once.
type Config struct {
	// Store keeps the leases and delivered records. Required.
	Store Store
	// Channels are the channels Once applies to; a copy of another
	// channel's notification is sent again. Defaults to nil: every channel.
	Channels []notification.Channel
	// SendOnStoreError sends a notification whose lease the store could not
	// take (it failed or throttled) without one, instead of retrying it
	// later. Defaults to false: nothing is sent that might have been sent.
	SendOnStoreError bool
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

// Once is delivered-once as a middleware (Wrap) with a hook per batch
// (StartBatch). It is safe for concurrent use.
type Once struct {
	cfg Config
}

// New returns Once, or an error when cfg has no Store.
func New(cfg Config) (*Once, error) {
	if cfg.Store == nil {
		return nil, errors.New("once: Store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Once{cfg: cfg}, nil
}

// batch is one batch's leases: taken in one store.Batch, the delivered
// ones confirmed together at its end.
type batch struct {
	b  *store.Batch
	mu sync.Mutex
	// delivered are the leases of the sends that delivered, with their
	// attempts, to note a failed confirm on.
	delivered []kept
}

type kept struct {
	lease   store.Lease
	attempt *delivery.Attempt
}

type batchKey struct{ o *Once }

// StartBatch starts a batch of leases: the sends in the returned context
// take their leases in it, and end records the delivered ones with one
// write (Store.Confirm), to be called once every send of the batch has
// returned. A failed confirm is noted on each of those sends' attempts
// that noted no store failure yet (logged with each record as
// store_error, counted in StoreErrors); their leases then end unconfirmed
// at their Until, and a copy after that is sent again (docs/reliability.md,
// the crash window).
func (o *Once) StartBatch(ctx context.Context) (context.Context, func(context.Context)) {
	bt := &batch{b: o.cfg.Store.NewBatch()}
	return context.WithValue(ctx, batchKey{o}, bt), func(ctx context.Context) { o.confirm(ctx, bt) }
}

func (o *Once) confirm(ctx context.Context, bt *batch) {
	bt.mu.Lock()
	delivered := slices.Clone(bt.delivered)
	bt.mu.Unlock()
	ls := make([]store.Lease, 0, len(delivered))
	for _, k := range delivered {
		ls = append(ls, k.lease)
	}
	if err := o.cfg.Store.Confirm(ctx, bt.b, ls); err != nil {
		for _, k := range delivered {
			if k.attempt.StoreError() == nil {
				k.attempt.StoreFailed(err)
			}
		}
	}
}

// Wrap returns next sending each notification of Config.Channels once.
// The result keeps next's DestinationKey (delivery.KeepDestinationKey).
func (o *Once) Wrap(next Sender) Sender {
	return delivery.KeepDestinationKey(&sender{o: o, next: next}, next)
}

type sender struct {
	o    *Once
	next Sender
}

// Send takes m's lease, sends m with next and keeps the lease for the
// batch's confirm when it was delivered, or releases it. Outside a batch
// (a context StartBatch did not return) the lease is taken in a batch of
// its own, confirmed right after the send. Its errors are next's, or,
// unsent: a *delivery.DeliveredError (a copy of a delivered
// notification), a permanent ClassIDReused, a transient ClassInProgress
// retried when the other attempt's lease ends, or the store's transient
// class (store.Error.Transient) when the store failed.
func (s *sender) Send(ctx context.Context, m *notification.Message) error {
	o := s.o
	if o.cfg.Channels != nil && !slices.Contains(o.cfg.Channels, m.Channel) {
		return s.next.Send(ctx, m)
	}
	bt, inBatch := ctx.Value(batchKey{o}).(*batch)
	if !inBatch {
		var end func(context.Context)
		ctx, end = o.StartBatch(ctx)
		bt = ctx.Value(batchKey{o}).(*batch)
		defer func() {
			after, cancel := delivery.AfterSend(ctx)
			defer cancel()
			end(after)
		}()
	}
	attempt := delivery.AttemptFrom(ctx)
	now := o.cfg.Now()
	l, err := o.cfg.Store.Claim(ctx, bt.b, string(m.Channel), m.ID, Digest(m), delivery.LeaseUntil(ctx, now))
	var (
		done     *store.DeliveredError
		held     *store.HeldError
		mismatch *store.MismatchError
		se       *store.Error
	)
	switch {
	case err == nil:
	case errors.As(err, &mismatch):
		return delivery.Permanent(ClassIDReused, fmt.Errorf("not sent: %w", err))
	case errors.As(err, &done):
		return &delivery.DeliveredError{At: done.At, Err: err}
	case errors.As(err, &held):
		return &delivery.TransientError{Class: ClassInProgress, RetryAfter: held.Until.Sub(now), Err: fmt.Errorf("not sent: %w", err)}
	case errors.As(err, &se) && o.cfg.SendOnStoreError:
		attempt.StoreFailed(err)
		return s.next.Send(ctx, m)
	case errors.As(err, &se):
		attempt.StoreFailed(err)
		return se.Transient()
	default:
		attempt.StoreFailed(err)
		return delivery.Transient(store.ClassUnavailable, err)
	}
	sendErr := s.next.Send(ctx, m)
	if sendErr == nil {
		bt.mu.Lock()
		bt.delivered = append(bt.delivered, kept{lease: l, attempt: attempt})
		bt.mu.Unlock()
		return nil
	}
	// A failed attempt's lease is released at once so that the next copy
	// is sent; a failed release leaves it to end at its Until.
	after, cancel := delivery.AfterSend(ctx)
	defer cancel()
	if err := o.cfg.Store.Release(after, l); err != nil {
		attempt.StoreFailed(err)
	}
	return sendErr
}
