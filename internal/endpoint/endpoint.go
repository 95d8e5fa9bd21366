// Package endpoint is herald's register of subscribers: the endpoints an
// application registers for its customers (tenants), each with its own
// URL, signing secret, event-type filter, state and limits.
//
// This file holds the data and its rules only (no AWS). The table's item
// shapes, the sealing of secrets with the stack's KMS key and the store's
// operations live beside it (docs/endpoints.md).
package endpoint

import (
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// Kind is what an endpoint is: a Standard Webhooks receiver or a chat
// service's incoming webhook.
type Kind string

// The kinds of endpoint.
const (
	KindWebhook Kind = "webhook"
	KindSlack   Kind = "slack"
	KindDiscord Kind = "discord"
	KindTeams   Kind = "teams"
)

// Kinds are the kinds of endpoint, in the order the API lists them.
var Kinds = []Kind{KindWebhook, KindSlack, KindDiscord, KindTeams}

// IDPrefix starts every endpoint id: "ep_" and 26 characters of Crockford
// base32 (a ULID's length), so ids sort by creation time.
const IDPrefix = "ep_"

// Limits of an endpoint's fields (one home; the OpenAPI document and the
// JSON Schema repeat them and a test keeps them equal).
const (
	// MaxTenantChars: a tenant id is 1–128 characters of A-Z a-z 0-9 . _ : -
	// (the notification id's alphabet).
	MaxTenantChars = 128
	// MaxDescriptionChars is the longest description, in characters.
	MaxDescriptionChars = 512
	// MaxEventTypes is the most entries of an event-type filter.
	MaxEventTypes = 64
	// MaxEventTypeChars: an event type is 1–128 characters of
	// A-Z a-z 0-9 . _ - ; a filter entry may end in ".*" (a prefix wildcard).
	MaxEventTypeChars = 128
	// MaxHeaders is the most custom request headers; their names and
	// values together at most MaxHeaderBytes.
	MaxHeaders     = 20
	MaxHeaderBytes = 4096
	// MaxMetadataEntries, MaxMetadataKeyChars, MaxMetadataValueChars bound
	// an endpoint's metadata.
	MaxMetadataEntries    = 16
	MaxMetadataKeyChars   = 64
	MaxMetadataValueChars = 512
	// MinRateLimit and MaxRateLimit bound a rate limit, requests per
	// second (0 is no limit of its own): at least one request per 1,000 s
	// (a turn further apart than that outlasts every invocation, 15 min
	// at most, so each delivery but one per turn would spend a receive
	// waiting), at most 100: each request is one conditional write of the
	// endpoint's pace item, one item takes at most 1,000 writes a second
	// (DynamoDB's per-partition throughput) and writes that lose a race
	// are repeated, so a limit near 1,000 would be throttled and each
	// environment would pace alone; 100 leaves the store room for the
	// retries of contention. An endpoint that needs more has no limit of
	// its own (0) and is bounded by the deliver function's concurrency.
	MinRateLimit = 0.001
	MaxRateLimit = 100
	// MaxSecretVersions is how many signing secrets an endpoint keeps: the
	// current one and those still in their grace period.
	MaxSecretVersions = 3
	// MaxGrace is the longest grace period of a rotated secret.
	MaxGrace = 7 * 24 * time.Hour
	// DefaultGrace is the grace period of a rotation that names none.
	DefaultGrace = 24 * time.Hour
)

// Endpoint is one registered endpoint.
type Endpoint struct {
	// ID is "ep_" + 26 characters ([IDPrefix]), set at creation.
	ID string `json:"id"`
	// Tenant is the application's customer id the endpoint belongs to.
	Tenant string `json:"tenant"`
	Kind   Kind   `json:"kind"`
	// URL is the absolute https URL deliveries are posted to. For a chat
	// kind it is the incoming webhook's URL, itself a credential: sealed at
	// rest and never returned whole by the API after creation.
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	// EventTypes is the filter: exact event types, or prefixes written
	// "invoice.*"; empty means every type.
	EventTypes []string `json:"event_types,omitempty"`
	// Headers are custom request headers (name → value), values sealed at
	// rest. Hop-by-hop, signature and herald's own headers are refused.
	Headers map[string]string `json:"headers,omitempty"`
	// RateLimit is the most requests per second to the endpoint, across
	// every execution environment; 0 means no limit of its own.
	RateLimit float64 `json:"rate_limit,omitempty"`
	// Metadata is the application's own data about the endpoint.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Disabled is set while the endpoint is disabled.
	Disabled *Disabled `json:"disabled,omitempty"`
	// Secrets are the signing secrets, newest first; only the store and the
	// deliver function see their keys (never the API after creation or
	// rotation, never a log or a dead letter).
	Secrets []Secret `json:"-"`
	// Version counts the endpoint's writes; an update names the version it
	// read (optimistic concurrency; a mismatch is *ConflictError).
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// LogValue logs what an operator needs to know the endpoint by: id,
// tenant, kind, host and version; never its URL's path or query (a chat
// URL is a credential), header values or secrets.
func (e Endpoint) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", e.ID), slog.String("tenant", e.Tenant), slog.String("kind", string(e.Kind)),
		slog.String("host", e.host()), slog.Int64("version", e.Version), slog.Bool("disabled", e.Disabled != nil))
}

// Format prints what LogValue logs, whatever the verb, so that an
// endpoint printed by mistake shows no credential.
func (e Endpoint) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "endpoint %s (tenant %s, %s %s, version %d)", e.ID, e.Tenant, e.Kind, e.host(), e.Version)
}

func (e Endpoint) host() string {
	if u, err := url.Parse(e.URL); err == nil {
		return u.Hostname()
	}
	return ""
}

// Disabled says why and since when an endpoint is disabled.
type Disabled struct {
	// Reason is the operator's words, or the error class that made herald
	// disable it (for example "http_410").
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	// By is "operator" or "herald".
	By string `json:"by"`
}

// Secret is one version of an endpoint's signing secret.
type Secret struct {
	// Version counts from 1.
	Version int `json:"version"`
	// Key is the HMAC-SHA256 key, 24–64 bytes (written "whsec_" + base64
	// to people, Standard Webhooks "Signature scheme").
	Key       []byte    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	// Until is when a rotated-out secret stops signing; zero for the
	// current one.
	Until time.Time `json:"until,omitempty"`
}

// FieldError is bad input: Field is the JSON path of the field at fault
// ("url", "headers.Connection", "event_types[2]"), Reason says what is
// wrong without quoting a secret.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }

// ErrNotFound is returned for an endpoint that does not exist (or was
// deleted).
var ErrNotFound = errors.New("endpoint not found")

// ConflictError is an update or delete that named a version other than the
// stored one.
type ConflictError struct {
	ID      string
	Want    int64 // the version the caller read
	Current int64 // the stored version
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("endpoint %s: version %d is not the current version %d", e.ID, e.Want, e.Current)
}

// DeliveryID is the id of the delivery of event eventID to endpoint
// endpointID: "msg_" and 26 characters of lower-case base32 of the SHA-256
// of both, so that every fan-out of one event makes the same id for one
// endpoint (the webhook-id the receiver deduplicates on, and herald's
// delivered-once key) and different ids for different endpoints.
func DeliveryID(eventID, endpointID string) string {
	h := sha256.New()
	h.Write([]byte(eventID))
	h.Write([]byte{0})
	h.Write([]byte(endpointID))
	return "msg_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h.Sum(nil)))[:26]
}
