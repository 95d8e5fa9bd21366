// Package store is herald's memory between invocations: one Amazon
// DynamoDB table that the deliver function writes to deliver each
// notification once, to read each webhook origin's key versions and to
// keep each destination origin's health.
//
// # The table
//
// One table, single-table design, on-demand capacity, encrypted, with time
// to live on ExpiresAt (template.yaml, StoreTable). Every item has a string
// partition key [AttrPK] and a string sort key [AttrSK] and names its kind
// in [AttrType]:
//
//	item      pk                          sk          attributes
//	delivery  notification#<channel>#<id> delivery    state, owner, lease_until, batch, seq, digest, updated_at, expires_at
//	confirm   batch#<batch>               delivery_batch  delivered, updated_at, expires_at
//	keys      origin#<scheme://host[:port]> keys      version, previous_until, updated_at
//	health    origin#<scheme://host[:port]> health    failures, failing_since, last_success, last_failure,
//	          origin#chat:<service>:<digest>          failure_class, probe_until, owner, disabled_at,
//	                                                  disabled_by, pending_events, version, updated_at,
//	                                                  expires_at
//	pace      chat#chat:<service>:<digest>  pace      next, until, version, expires_at
//	endpoint  endpoint#<ep_id>            endpoint    (package endpoint)
//	failure   endpoint#<ep_id>            failure#<ms>#<message id>  (package endpoint)
//
// # Registered endpoints
//
// Endpoint items (type "endpoint") and their failure items (type
// "endpoint_failure") are package endpoint's: it reads and writes them,
// and docs/endpoints.md "Item shapes" gives their attributes. They are
// the only items with attributes gsi1pk and gsi1sk, the keys of the
// table's global secondary index tenant-index (endpoints by tenant,
// projecting event_types, disabled_at and kind); their secrets, header
// values and chat URLs are sealed with the stack's EndpointKey, never in
// a plain attribute.
//
// A delivery item is a notification's delivered-once record (see
// [Store.Claim]):
//   - state is "in_progress" for a lease, "delivered" once recorded so by
//     [Store.Delivered]; a lease of a batch stays "in_progress" and is
//     delivered when its batch's confirm item lists its seq;
//   - batch and seq, for a lease of a batch ([Store.NewBatch]), name the
//     batch's confirm item and the lease's number in it (from 1);
//   - owner is the random token of the attempt that holds the lease;
//   - lease_until is when that lease ends, Unix milliseconds: the end of the
//     invocation that took it;
//   - digest is the notification's fingerprint, base64url SHA-256 of the
//     content every copy shares (package processor, docs/delivery.md
//     "Duplicates"); a claim with another digest is a *MismatchError;
//     absent in items of herald before it, which match any;
//   - updated_at is the last write, Unix milliseconds (for a delivered item,
//     when it was delivered);
//   - expires_at is the time-to-live attribute, Unix seconds: a delivered
//     item is kept for the delivered-once window, an abandoned lease for
//     the window after its end.
//
// A confirm item (type "delivery_batch") records one invocation's
// deliveries with one write ([Store.Confirm]): delivered is the number set
// of the seq of each delivered lease of the batch; updated_at, Unix
// milliseconds, when they were confirmed; expires_at, Unix seconds, the
// window after the latest lease's end. A lease whose batch's confirm item
// does not list it was not delivered (failed leases are deleted) or its
// invocation died after the send and before the confirm: the crash
// window. So a delivered notification costs one write of its own and a
// share of its batch's one (docs/reliability.md "Delivered once").
//
// A keys item is a webhook origin's key versions (see [Store.Rotate]);
// the origin is webhook.Origin's form:
//   - version is the current key version, ≥ 2 (an origin without the item
//     is at version 1, the key derived before versions existed);
//   - previous_until is when version-1 stops signing, Unix milliseconds;
//   - updated_at is the last rotation, Unix milliseconds.
//   - rotation_id is a random id of the last rotation's write, so that a
//     rotation whose answer was lost (and whose retry then failed its
//     condition) knows its own write.
//
// It has no expires_at: it holds for as long as the origin is used.
//
// A health item (type "origin_health") is a webhook origin's or a chat
// webhook's health (a chat webhook is keyed by chat.Destination's key, a
// digest that holds no token) (see [Store.UpdateHealth]; the circuit's rules are package
// processor's, docs/operations.md "Destination states"); <origin> is
// webhook.Origin's form, as for keys items:
//   - failures is the number of consecutive failures that said the origin
//     is down; failing_since, Unix milliseconds, is when the first of them
//     was written, absent when failures is 0 (a run of failures ends at a
//     success, or for the deliver function after 24 h without a failure:
//     processor.FailureRunGap);
//   - last_success, last_failure are Unix milliseconds, absent when none;
//     failure_class is last_failure's class;
//   - probe_until ends the probe lease, Unix milliseconds, and owner is its
//     holder's random token; both absent when nobody holds it;
//   - disabled_at, Unix milliseconds, is when the origin was disabled and
//     disabled_by who did ("herald" or "operator"); both absent while it
//     is enabled (see [Store.SetDisabled]);
//   - pending_events is a JSON array of the EventBridge events announcing
//     a change of the origin (destination.disabled, destination.recovered)
//     not published yet, written with the change and removed once
//     published (package announce, Pending); absent when none;
//   - version counts the item's writes: each write is a PutItem
//     conditional on the version it read (compare and swap);
//   - expires_at is updated_at + [HealthRetention] (30 days), Unix seconds;
//     absent while the origin is disabled, which lasts until it is enabled.
//
// A pace item (type "chat_pace") is one chat webhook's pace, shared by
// every execution environment (see [Store.UpdatePace]; the pacing rules
// are package chat's):
//   - next is the generic cell rate algorithm's theoretical arrival time
//     of the next post, Unix milliseconds;
//   - until is when the service's last hold (a 429, an empty Discord
//     bucket) ends, Unix milliseconds; absent when none;
//   - version counts the item's writes (compare and swap, as for health);
//   - expires_at is a minute after the later of next and until, Unix
//     seconds: an idle webhook's item goes.
//
// A conditional write refused by a store that does not return the item
// (ReturnValuesOnConditionCheckFailure is from June 2023; emulators and
// older compatible stores ignore it) reads the item back with one strongly
// consistent GetItem.
//
// DynamoDB deletes expired items within a few days of expires_at, not at
// once, and the local stack's DynamoDB (moto) never does; so every read
// and condition here treats an item past its expires_at as absent.
//
// The deliver function needs dynamodb:PutItem, dynamodb:DeleteItem and
// dynamodb:GetItem (keys items, cached per origin; health items, cached
// 5 s per origin) on the table, nothing else of this package (package
// endpoint adds dynamodb:Query on tenant-index and kms:Decrypt); `herald secret rotate`
// writes keys items, `herald destinations enable|disable` health items,
// and `herald destinations ls` reads the table with Scan ([Store.Healths]).
//
// See https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
// and https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html.
package store
