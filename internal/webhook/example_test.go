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
