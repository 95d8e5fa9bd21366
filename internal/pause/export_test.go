package pause

import (
	"context"
	"sync"
	"time"
)

// RecordWaits returns a context under which the waits between updates are
// recorded, not slept, and a function returning them in order.
func RecordWaits(ctx context.Context) (context.Context, func() []time.Duration) {
	return recordWaits(ctx, nil)
}

// EndAtFirstWait is RecordWaits with a context that ends with cause during
// the first wait, as an invocation's deadline would.
func EndAtFirstWait(ctx context.Context, cause error) (context.Context, func() []time.Duration) {
	ctx, cancel := context.WithCancelCause(ctx)
	return recordWaits(ctx, func() { cancel(cause) })
}

func recordWaits(ctx context.Context, during func()) (context.Context, func() []time.Duration) {
	var mu sync.Mutex
	var waits []time.Duration
	ctx = context.WithValue(ctx, waitsKey{}, func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		if during != nil {
			during()
		}
	})
	return ctx, func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), waits...)
	}
}

// BusyWait is the wait before the first retry of a refused update.
const BusyWait = busyWait

// BusyMargin is the time a pause leaves before its context's deadline.
const BusyMargin = busyMargin
