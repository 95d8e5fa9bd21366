package webhook_test

import (
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/webhook"
)

// The Standard Webhooks reference vector: what a receiver's library must
// accept.
func ExampleSign() {
	key, err := webhook.DecodeSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		panic(err)
	}
	ts := time.Unix(1614265330, 0)
	fmt.Println(webhook.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, []byte(`{"test": 2432232314}`)))
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, v := range []string{"120", "Thu, 01 Jan 2026 00:05:00 GMT", "86400", "soon"} {
		d, ok := webhook.ParseRetryAfter(v, now)
		fmt.Println(d, ok)
	}
	// Output:
	// 2m0s true
	// 5m0s true
	// 12h0m0s true
	// 0s false
}
