// Package once delivers each notification once, as a middleware around a
// send (Once.Wrap): river's job middleware and Powertools' idempotency
// wrapper around a handler (with its payload validation) are the model.
//
// Before each send the notification's lease is taken in the store (one
// conditional PutItem: store.Store.Claim), keyed by channel and id and
// holding the notification's Digest. A copy of a notification delivered
// within the store's window is not sent: its outcome is a
// *delivery.DeliveredError, which the processor settles as a duplicate. A
// copy whose lease another attempt holds is retried after the lease ends
// (ClassInProgress); another notification under a delivered or leased id
// is dead-lettered (ClassIDReused). A failed send gives its lease up (one
// DeleteItem), so that the next copy is sent at once.
//
// The delivered leases of a batch are recorded with one write after every
// send of the batch (store.Store.Confirm): Once is also a batch hook
// (StartBatch), whose end the processor calls beside the batch's
// visibility changes. A store failure retries the record later, or sends
// it without a lease with Config.SendOnStoreError; each failed call is
// noted on the record's attempt (delivery.Attempt.StoreFailed), logged
// with it and counted. See docs/reliability.md, "Delivered once".
package once
