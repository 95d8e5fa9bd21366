package fanout

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/sqsbatch"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// SubscriberLister pages through a tenant's enabled endpoints whose filter
// matches an event type (endpoint.Table's Subscribers): up to limit after
// cursor ("" first), and the cursor after the last, "" at the end.
type SubscriberLister interface {
	Subscribers(ctx context.Context, tenant, eventType, cursor string, limit int) ([]endpoint.Subscriber, string, error)
}

// EndpointReader reads one endpoint (endpoint.Table or endpoint.Cache's
// Get), for an event that names it; endpoint.ErrNotFound when there is none.
type EndpointReader interface {
	Get(ctx context.Context, id string) (endpoint.Endpoint, error)
}

var (
	_ SubscriberLister = (*endpoint.Table)(nil)
	_ EndpointReader   = (*endpoint.Table)(nil)
	_ EndpointReader   = (*endpoint.Cache)(nil)
)

// Error classes of a fan-out (docs/operations.md, "Fix the cause").
var (
	// ClassInProgress: another copy of the event holds the fan-out's lease
	// (SQS handed the event over twice, or a copy died holding it); this
	// copy is retried after the lease ends, and then finds it done or goes
	// on from its cursor.
	ClassInProgress = delivery.NewClass("fanout_in_progress")
	// ClassEnqueueFailed: SQS did not take some deliveries of a batch
	// (SendMessageBatch failed, or kept failing entries): the event is
	// retried from the batch's start (docs/endpoints.md).
	ClassEnqueueFailed = delivery.NewClass("fanout_enqueue_failed")
	// ClassEventIDReused: an event arrived whose id was fanned out with
	// other content within the window: not fanned out, dead-lettered.
	ClassEventIDReused = delivery.NewClass("event_id_reused")
)

// Defaults of Config.
const (
	// DefaultLease is how long a claim or cursor write keeps the fan-out
	// this copy's: a copy that dies holding it delays the next copy by at
	// most this long. Each batch's cursor write extends it, and a batch
	// (one Query, one SendMessageBatch) takes far less.
	DefaultLease = 60 * time.Second
	// DefaultStopBefore is the time left in the invocation at which a
	// fan-out stops starting batches and hands the rest to a new copy of
	// the event: room for one more batch's calls at their slowest and the
	// put back on the queue.
	DefaultStopBefore = 10 * time.Second
)

// Config configures a Fanout.
type Config struct {
	// Subscribers lists each tenant's subscribers. Required.
	Subscribers SubscriberLister
	// Endpoints reads the endpoint an event names (event.endpoint).
	// Required.
	Endpoints EndpointReader
	// DB and Table hold the progress items: the stack's table (StoreTable).
	// Required.
	DB    TableAPI
	Table string
	// SQS sends the deliveries and the events put back. Required.
	SQS producer.API
	// WebhookQueueURL and ChatQueueURL are the queues of the deliveries to
	// webhook and to chat endpoints; EventQueueURL is the event queue,
	// where an event whose fan-out goes on in another invocation is put
	// back. Required.
	WebhookQueueURL, ChatQueueURL, EventQueueURL string
	// Lease is how long a claim holds the fan-out. Defaults to
	// DefaultLease.
	Lease time.Duration
	// StopBefore is the time left in the invocation (the context's
	// deadline) at which the fan-out hands on. Defaults to
	// DefaultStopBefore.
	StopBefore time.Duration
	// Window is how long a finished fan-out is remembered, so that a copy of
	// the event within it creates nothing. Defaults to store.DefaultWindow
	// (24 h), the delivered-once window.
	Window time.Duration
	// Logger receives one line per event and invocation. Defaults to
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock of the progress items' times. Defaults to time.Now.
	Now func() time.Time
}

// Fanout is the event channel's sender. It is safe for concurrent use.
type Fanout struct {
	cfg  Config
	send producer.Client
}

// New returns a Fanout, or an error naming the first missing field of cfg.
func New(cfg Config) (*Fanout, error) {
	switch {
	case cfg.Subscribers == nil:
		return nil, errors.New("fanout: Subscribers is required")
	case cfg.Endpoints == nil:
		return nil, errors.New("fanout: Endpoints is required")
	case cfg.DB == nil || cfg.Table == "":
		return nil, errors.New("fanout: DB and Table are required")
	case cfg.SQS == nil:
		return nil, errors.New("fanout: SQS is required")
	case cfg.WebhookQueueURL == "" || cfg.ChatQueueURL == "" || cfg.EventQueueURL == "":
		return nil, errors.New("fanout: WebhookQueueURL, ChatQueueURL and EventQueueURL are required")
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.StopBefore <= 0 {
		cfg.StopBefore = DefaultStopBefore
	}
	if cfg.Window <= 0 {
		cfg.Window = store.DefaultWindow
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Fanout{cfg: cfg, send: producer.Client{
		SQS: cfg.SQS,
		Queues: map[notification.Channel]string{
			notification.ChannelWebhook: cfg.WebhookQueueURL,
			notification.ChannelChat:    cfg.ChatQueueURL,
			notification.ChannelEvent:   cfg.EventQueueURL,
		},
		// On FIFO queues (QueueType Fifo) each endpoint's deliveries are
		// one message group: in order for that endpoint, no endpoint held
		// behind another's. An event put back keeps one group per event.
		GroupBy: groupOf,
	}.WithDefaults()}, nil
}

// groupOf is a message's FIFO group: its endpoint, else its id.
func groupOf(m *notification.Message) string {
	switch {
	case m.Webhook != nil && m.Webhook.Endpoint != "":
		return m.Webhook.Endpoint
	case m.Chat != nil && m.Chat.Endpoint != "":
		return m.Chat.Endpoint
	}
	return m.ID
}

// Outcomes of one invocation's work on an event (the line's "fanout").
const (
	// OutcomeFannedOut: the last delivery is enqueued.
	OutcomeFannedOut = "fanned_out"
	// OutcomeNoSubscribers: no endpoint asked for the event.
	OutcomeNoSubscribers = "no_subscribers"
	// OutcomeContinued: the time left ran short; the event is back on its
	// queue, to go on from the cursor.
	OutcomeContinued = "continued"
	// OutcomeAlreadyDone: a copy of an event fanned out before: nothing
	// sent.
	OutcomeAlreadyDone = "already_fanned_out"
)

// Send fans the event m out (see the package doc). It returns nil when the
// fan-out finished, was finished before, or goes on in a new copy of the
// event; otherwise a package delivery error: transient for the table's or
// SQS's failures and for another copy's lease, permanent for an event id
// reused with other content.
func (f *Fanout) Send(ctx context.Context, m *notification.Message) error {
	if m.Event == nil {
		return delivery.Permanent(delivery.ClassInvalidMessage, fmt.Errorf("%s: not an event (channel %q)", m.ID, m.Channel))
	}
	body, err := json.Marshal(m)
	if err != nil {
		return delivery.Permanent(delivery.ClassInvalidMessage, fmt.Errorf("event %s: %w", m.ID, err))
	}
	start := f.cfg.Now()
	p, err := f.claim(ctx, m, digest(m))
	if err != nil {
		return err
	}
	run := &run{f: f, m: m, p: p, body: body, start: start}
	if p.state == StateDone {
		run.log(ctx, OutcomeAlreadyDone)
		return nil
	}
	if m.Event.Endpoint != "" {
		err = run.one(ctx)
	} else {
		err = run.all(ctx)
	}
	if err != nil && !errors.Is(err, errLeaseLost) {
		// Give the lease up, the cursor where the last batch sent left
		// it, so that the retry need not wait for it; when the table is
		// what failed, this write fails too and the lease ends on its
		// own.
		_ = run.checkpoint(context.WithoutCancel(ctx), 0)
	}
	return err
}

// digest is the fingerprint of what every copy of event m shares: base64url
// SHA-256 of m without created_at, which the processor fills from the
// copy's SQS SentTimestamp when the producer left it out.
func digest(m *notification.Message) string {
	c := *m
	c.CreatedAt = nil
	b, _ := json.Marshal(&c) // a parsed message always marshals
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// run is one invocation's work on one event.
type run struct {
	f     *Fanout
	m     *notification.Message
	p     *progress
	body  []byte
	start time.Time
	// enqueued counts this invocation's deliveries.
	enqueued int
}

// PageSize is how many subscribers one listing asks for (one Query of the
// tenant index, about 1 KB read per 10 endpoints); they are enqueued in
// batches of sqsbatch.MaxEntries, the progress written after each.
const PageSize = 100

// all enqueues the deliveries to every subscriber from the progress on:
// the page that starts at its cursor, after the last endpoint enqueued
// (the listing is in id order), then the pages after it.
func (r *run) all(ctx context.Context) error {
	ev := r.m.Event
	for {
		subs, next, err := r.f.cfg.Subscribers.Subscribers(ctx, ev.Tenant, ev.Type, r.p.cursor, PageSize)
		if err != nil {
			return (&store.Error{Op: "list the subscribers of tenant " + ev.Tenant, Err: err}).Transient()
		}
		rest := subs
		for len(rest) > 0 && r.p.last != "" && rest[0].ID <= r.p.last {
			rest = rest[1:] // enqueued before
		}
		if len(rest) == 0 {
			if next == "" {
				return r.finish(ctx)
			}
			r.p.cursor, r.p.last = next, ""
			continue
		}
		for len(rest) > 0 {
			batch := rest[:min(sqsbatch.MaxEntries, len(rest))]
			rest = rest[len(batch):]
			if err := r.enqueue(ctx, batch); err != nil {
				return err
			}
			r.p.last = batch[len(batch)-1].ID
			if len(rest) == 0 {
				if next == "" {
					return r.finish(ctx)
				}
				r.p.cursor, r.p.last = next, ""
			}
			if r.short(ctx) {
				return r.handOn(ctx)
			}
			if err := r.checkpoint(ctx, r.f.cfg.Lease); err != nil {
				return err
			}
		}
	}
}

// one enqueues the delivery to the endpoint the event names, when it is
// the tenant's and enabled, whatever its filter.
func (r *run) one(ctx context.Context) error {
	ev := r.m.Event
	e, err := r.f.cfg.Endpoints.Get(ctx, ev.Endpoint)
	switch {
	case errors.Is(err, endpoint.ErrNotFound):
		return r.finish(ctx)
	case err != nil:
		return (&store.Error{Op: "read endpoint " + ev.Endpoint, Err: err}).Transient()
	case e.Tenant != ev.Tenant || e.Disabled != nil:
		// Another tenant's endpoint is not named in the line: it is not
		// this tenant's to know of.
		return r.finish(ctx)
	}
	if err := r.enqueue(ctx, []endpoint.Subscriber{{ID: e.ID, Kind: e.Kind}}); err != nil {
		return err
	}
	return r.finish(ctx)
}

// enqueue sends one delivery per subscriber (at most sqsbatch.MaxEntries)
// and counts them in the progress.
func (r *run) enqueue(ctx context.Context, subs []endpoint.Subscriber) error {
	if len(subs) == 0 {
		return nil
	}
	bodies := make([][]byte, 0, len(subs))
	for _, s := range subs {
		b, err := r.delivery(s)
		if err != nil {
			return err
		}
		bodies = append(bodies, b)
	}
	if _, err := r.f.send.SendBodies(ctx, bodies); err != nil {
		return delivery.Transient(ClassEnqueueFailed, fmt.Errorf("event %s: enqueue deliveries: %w", r.m.ID, err))
	}
	r.enqueued += len(subs)
	r.p.enqueued += int64(len(subs))
	return nil
}

// checkpoint writes the cursor, keeping the lease for lease more (0: given
// up).
func (r *run) checkpoint(ctx context.Context, lease time.Duration) error {
	err := r.f.write(ctx, r.p, false, lease)
	if errors.Is(err, errLeaseLost) {
		// This copy's lease ended while it worked (it was slower than
		// Lease between two writes): the batch just sent goes again
		// with the other copy, under the same ids.
		return &delivery.TransientError{Class: ClassInProgress, RetryAfter: r.f.cfg.Lease,
			Err: fmt.Errorf("event %s: %w after %d deliveries", r.m.ID, errLeaseLost, r.p.enqueued)}
	}
	return err
}

// finish records the fan-out done and writes its line.
func (r *run) finish(ctx context.Context) error {
	r.p.state = StateDone
	r.p.cursor, r.p.last = "", ""
	if err := r.checkpoint(ctx, 0); err != nil {
		return err
	}
	if r.p.enqueued == 0 {
		r.log(ctx, OutcomeNoSubscribers)
	} else {
		r.log(ctx, OutcomeFannedOut)
	}
	return nil
}

// short reports whether the invocation's time left (ctx's deadline) is at
// most StopBefore.
func (r *run) short(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) <= r.f.cfg.StopBefore
}

// handOn gives the lease up with the cursor written and puts the event back
// on its queue, as it came, for a new invocation to go on: a new message,
// so it starts with a receive count of 1 (a fan-out of many endpoints does
// not spend the redrive policy's receives). If the put fails the event is
// retried on its schedule, and goes on from the same cursor.
func (r *run) handOn(ctx context.Context) error {
	if err := r.checkpoint(ctx, 0); err != nil {
		return err
	}
	if _, err := r.f.send.SendBodies(ctx, [][]byte{r.body}); err != nil {
		return delivery.Transient(ClassEnqueueFailed, fmt.Errorf("event %s: put back on its queue after %d deliveries: %w", r.m.ID, r.p.enqueued, err))
	}
	r.log(ctx, OutcomeContinued)
	return nil
}
