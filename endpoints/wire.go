package endpoints

import (
	"encoding/json"
	"fmt"
	"time"
)

// The shapes on the wire of api/endpoints.openapi.yaml (components.schemas),
// shared by this client and the API's handlers; a test validates the
// handlers' answers against the document.

// Kinds of endpoint (schema Kind).
const (
	KindWebhook = "webhook"
	KindSlack   = "slack"
	KindDiscord = "discord"
	KindTeams   = "teams"
)

// States of an endpoint (schema State), also the list filter's values.
const (
	StateEnabled  = "enabled"
	StateDisabled = "disabled"
)

// TestEventType is the type of the event Client.Test sends.
const TestEventType = "herald.test"

// Endpoint is a registered endpoint as the API shows it (schema Endpoint):
// never its secrets' keys, a chat endpoint's URL or header values.
type Endpoint struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	Kind   string `json:"kind"`
	// URL is a webhook endpoint's URL; empty for a chat kind, whose URL is
	// itself a credential and is shown only as URLHost.
	URL         string   `json:"url,omitempty"`
	URLHost     string   `json:"url_host"`
	Description string   `json:"description,omitempty"`
	EventTypes  []string `json:"event_types,omitempty"`
	// HeaderNames are the custom headers' names, sorted (never their
	// values); Get shows them, List leaves them out.
	HeaderNames []string          `json:"header_names,omitempty"`
	RateLimit   float64           `json:"rate_limit,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	// State is StateEnabled or StateDisabled; Disabled says why and since
	// when.
	State    string    `json:"state"`
	Disabled *Disabled `json:"disabled,omitempty"`
	// Secrets are the signing secrets' versions, newest first (never their
	// keys); Get shows them, List leaves them out.
	Secrets []SecretVersion `json:"secrets,omitempty"`
	// Version counts the endpoint's writes: what Update and Delete name.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Disabled says why, since when and by whom ("operator" or "herald") an
// endpoint is disabled.
type Disabled struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	By     string    `json:"by"`
}

// SecretVersion is one version of an endpoint's signing secret, without
// its key. Until is set on a rotated-out version still signing.
type SecretVersion struct {
	Version   int        `json:"version"`
	CreatedAt time.Time  `json:"created_at"`
	Until     *time.Time `json:"until,omitempty"`
}

// CreateInput is a new endpoint (schema EndpointCreate). Kind defaults to
// KindWebhook.
type CreateInput struct {
	Tenant      string            `json:"tenant"`
	Kind        string            `json:"kind,omitempty"`
	URL         string            `json:"url"`
	Description string            `json:"description,omitempty"`
	EventTypes  []string          `json:"event_types,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	RateLimit   float64           `json:"rate_limit,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// Patch changes the members that are not nil (schema EndpointPatch).
// Headers and Metadata replace the whole map; an empty EventTypes
// subscribes to every type.
type Patch struct {
	URL         *string            `json:"url,omitempty"`
	Description *string            `json:"description,omitempty"`
	EventTypes  *[]string          `json:"event_types,omitempty"`
	Headers     *map[string]string `json:"headers,omitempty"`
	RateLimit   *float64           `json:"rate_limit,omitempty"`
	Metadata    *map[string]string `json:"metadata,omitempty"`
}

// WithSecret is an endpoint with its new signing secret ("whsec_" and
// base64), as create and rotate-secret answer (schema EndpointWithSecret).
type WithSecret struct {
	Endpoint Endpoint `json:"endpoint"`
	Secret   string   `json:"secret"`
}

// ListQuery filters and pages a list; zero members are left out (Limit 0:
// the API's default, 50; at most 100).
type ListQuery struct {
	Tenant, EventType, State string
	Limit                    int
	Cursor                   string
}

// Page is one page of a list (schema EndpointList); NextCursor is empty on
// the last page.
type Page struct {
	Data       []Endpoint `json:"data"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// Failure is one failed attempt of a delivery to an endpoint (schema
// Failure).
type Failure struct {
	At        time.Time `json:"at"`
	MessageID string    `json:"message_id"`
	EventID   string    `json:"event_id,omitempty"`
	Class     string    `json:"class"`
	Reason    string    `json:"reason"`
	Attempt   int       `json:"attempt"`
}

// FailureList is the answer of the failures route (schema FailureList).
type FailureList struct {
	Data []Failure `json:"data"`
}

// DisableRequest is the body of disable (schema DisableRequest).
type DisableRequest struct {
	Reason string `json:"reason"`
}

// RotateRequest is the body of rotate-secret (schema RotateRequest).
type RotateRequest struct {
	GraceSeconds *int64 `json:"grace_seconds,omitempty"`
}

// TestRequest is the body of test (schema TestRequest).
type TestRequest struct {
	Payload json.RawMessage `json:"payload,omitempty"`
}

// TestQueued is the answer of test (schema TestQueued): the event put on
// the event queue.
type TestQueued struct {
	EventID  string `json:"event_id"`
	Type     string `json:"type"`
	Endpoint string `json:"endpoint"`
}

// Error codes of the API (schema Error), each with its HTTP status.
const (
	CodeInvalidField         = "invalid_field"          // 400: Field names the member, parameter or header
	CodeUnknownField         = "unknown_field"          // 400: Field names the member the operation does not know
	CodeInvalidJSON          = "invalid_json"           // 400: the body is not one JSON object
	CodeNotFound             = "not_found"              // 404: no such endpoint
	CodeNoRoute              = "no_route"               // 404: no such path
	CodeMethodNotAllowed     = "method_not_allowed"     // 405
	CodeEndpointDisabled     = "endpoint_disabled"      // 409: a test event to a disabled endpoint
	CodeVersionMismatch      = "version_mismatch"       // 412: If-Match is not the current version
	CodeVersionRequired      = "version_required"       // 428: no If-Match
	CodeBodyTooLarge         = "body_too_large"         // 413
	CodeUnsupportedMediaType = "unsupported_media_type" // 415: a body that is not application/json
	CodeInternal             = "internal"               // 500
)

// Error is a failure the API answered: its HTTP status and the body's
// error object ({"error":{"code":…,"field":…,"message":…}}).
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s, HTTP %d)", e.Field, e.Message, e.Code, e.Status)
	}
	return fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Code, e.Status)
}

// ErrorBody is the JSON body of every error answer.
type ErrorBody struct {
	Error *Error `json:"error"`
}
