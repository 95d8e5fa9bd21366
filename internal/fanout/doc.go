// Package fanout turns an event (channel "event") into one delivery per
// subscribed endpoint of its tenant: the rule of issue 29's fan-out.
//
// [Fanout] is the event channel's sender (processor.Sender): the fan-out
// function's processor parses each record of the event queue, drops an
// expired one, dead-letters an invalid one with its reason, and retries a
// failed one with the deliver function's backoff; Fanout.Send does the
// rest. For one event it
//
//  1. claims the event's progress item in the stack's table (pk
//     "event#<event id>", sk "fanout"; see [ProgressKey]): a lease of
//     [Config.Lease] for this copy, unless another copy holds one (then it
//     is retried after that lease, [ClassInProgress]) or the event is done
//     (then it is settled, nothing sent);
//  2. reads the tenant's enabled endpoints whose filter matches the type,
//     [PageSize] at a time, from the page and the last endpoint the item
//     holds (endpoint.Table's Subscribers: a Query of the tenant index, in
//     id order), or, for an event that names one endpoint, that endpoint
//     if it is the tenant's and enabled;
//  3. puts one delivery per endpoint on its channel's queue (webhook or
//     chat, by the endpoint's kind) with one SendMessageBatch of up to 10
//     (package producer: chunked by size, failed entries retried), each
//     with the id endpoint.DeliveryID(event id, endpoint id);
//  4. writes its progress after each batch (one PutItem, conditional on
//     this copy's lease): the page's cursor and the last endpoint
//     enqueued, so that a resumed fan-out skips by endpoint id, not by
//     position (an endpoint disabled or deleted meanwhile shifts
//     nothing); and "done" after the last;
//  5. when the invocation's time left falls to [Config.StopBefore], writes
//     the cursor with the lease given up and puts the event back on its
//     queue (one SendMessage): the new copy goes on from the cursor at
//     once, with a receive count of its own, and this copy is deleted.
//
// A fan-out that runs twice (a crash, SQS handing the event over again, two
// copies at once) makes no second delivery, but for one window: a batch
// sent whose cursor write did not happen (the invocation died between the
// two) is sent again by the next copy. Those copies carry the same ids and
// the same bodies (created_at is the one the first copy claimed with, kept
// in the progress item), so the deliver function's
// delivered-once settles a copy as a duplicate and a webhook receiver
// deduplicates it on webhook-id (docs/endpoints.md, "Events and fan-out").
//
// An event no endpoint asked for is settled as no_subscribers: counted
// (EventsWithoutSubscribers) and logged once, not an error.
package fanout
