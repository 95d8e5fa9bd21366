package chat

import (
	"context"
	"time"
)

// SetSleep makes s wait with sleep instead of a timer (tests drive a fake
// clock with it).
func SetSleep(s *Sender, sleep func(ctx context.Context, d time.Duration) error) { s.sleep = sleep }
