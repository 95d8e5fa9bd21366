package endpointapi

import (
	"strings"

	"github.com/heraldhq/herald/internal/endpoint"
)

// EventIDPrefix starts the id of a test event.
const EventIDPrefix = "evt_"

// newEventID is a test event's id: "evt_" and a ULID in lower-case
// Crockford base32, made as endpoint ids are (endpoint.NewID), so that ids
// sort by time.
func newEventID() string {
	return EventIDPrefix + strings.TrimPrefix(endpoint.NewID(), endpoint.IDPrefix)
}
