// Package receiver is the Go receiver of docs/endpoints-guide.md: it
// verifies herald's webhooks with the endpoint's own secret through the
// Standard Webhooks reference library, and hands each event on once
// verified. The guide shows this file; its tests verify a real herald
// request with it.
package receiver

import (
	"encoding/json"
	"io"
	"net/http"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Event is the body herald posts: the event's type, when it was sent and
// its payload.
type Event struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Handler answers herald's webhooks: 401 when the signature does not verify
// with secret (the endpoint's whsec_…), else handle's answer: 204 when it
// returns nil (herald settles the delivery), 500 otherwise (herald retries).
// id is the webhook-id header, the same on every attempt: deduplicate on it.
func Handler(secret string, handle func(id string, e Event) error) (http.Handler, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || wh.Verify(body, r.Header) != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var e Event
		if err := json.Unmarshal(body, &e); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		// e.Type == r.Header.Get("herald-event-type")
		if err := handle(r.Header.Get("webhook-id"), e); err != nil {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}), nil
}
