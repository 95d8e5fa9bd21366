package delivery

import (
	"context"

	"github.com/heraldhq/herald/notification"
)

// DestinationKeyer is a sender that names each message's destination
// itself, for a circuit and health of its own (package circuit): package
// chat keys each chat webhook by its identity (chat.Destination), since
// every Discord webhook shares discord.com. "" leaves the message to its
// URL's origin. A middleware around such a sender keeps the method
// (KeepDestinationKey), so the key reaches the circuit through any number
// of them.
type DestinationKeyer interface {
	DestinationKey(m *notification.Message) string
}

// KeepDestinationKey returns s with from's DestinationKey when from is a
// DestinationKeyer, else s itself: a middleware wrapping from returns
// KeepDestinationKey(its sender, from). Each package that wraps a sender
// declares its own port of the one method Send; the result is assignable
// to it.
func KeepDestinationKey(s interface {
	Send(ctx context.Context, m *notification.Message) error
}, from any) interface {
	Send(ctx context.Context, m *notification.Message) error
} {
	if k, ok := from.(DestinationKeyer); ok {
		return keyed{sends: s, DestinationKeyer: k}
	}
	return s
}

// sends is the one method every sender and middleware has.
type sends interface {
	Send(ctx context.Context, m *notification.Message) error
}

type keyed struct {
	sends
	DestinationKeyer
}
