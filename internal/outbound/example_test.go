package outbound_test

import (
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/outbound"
)

func ExampleParseRetryAfter() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, v := range []string{"120", "Thu, 01 Jan 2026 00:05:00 GMT", "86400", "soon"} {
		d, ok := outbound.ParseRetryAfter(v, now)
		fmt.Println(d, ok)
	}
	// Output:
	// 2m0s true
	// 5m0s true
	// 12h0m0s true
	// 0s false
}
