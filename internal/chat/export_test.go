package chat

import (
	"context"
	"time"

	"github.com/heraldhq/herald/notification"
)

// SetSleep makes s wait with sleep instead of a timer (tests drive a fake
// clock with it).
func SetSleep(s *Sender, sleep func(ctx context.Context, d time.Duration) error) { s.sleep = sleep }

// TeamsBody is the request body the Sender posts to Teams for c.
func TeamsBody(c *notification.Chat) ([]byte, error) { return teams.body(c) }
