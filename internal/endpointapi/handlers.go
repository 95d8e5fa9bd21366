package endpointapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/endpoints"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/notification"
)

// Limits of the API's own parameters (a list's page: endpoint.DefaultListLimit,
// endpoint.MaxListLimit).
const (
	// DefaultFailuresLimit and MaxFailuresLimit bound the failures listed.
	DefaultFailuresLimit = 20
	MaxFailuresLimit     = 100
	// MaxReasonChars bounds a disable's reason, in characters.
	MaxReasonChars = 256
)

func (h *Handler) create(ctx context.Context, c *call) (*answer, *problem) {
	var in endpoints.CreateInput
	if p := decodeBody(c.req, &in, true); p != nil {
		return nil, p
	}
	kind := endpoint.Kind(in.Kind)
	if in.Kind == "" {
		kind = endpoint.KindWebhook
	}
	e, err := h.cfg.Store.Create(ctx, endpoint.Endpoint{
		Tenant: in.Tenant, Kind: kind, URL: in.URL, Description: in.Description, EventTypes: in.EventTypes,
		Headers: in.Headers, RateLimit: in.RateLimit, Metadata: in.Metadata,
	})
	if err != nil {
		return nil, h.failed(ctx, "create", "", err)
	}
	h.log.InfoContext(ctx, "endpoint created", "endpoint", e.ID, "tenant", e.Tenant, "kind", string(e.Kind))
	return &answer{status: http.StatusCreated, etag: e.Version, location: "/v1/endpoints/" + e.ID, body: endpoints.WithSecret{Endpoint: view(e, true), Secret: currentSecret(e)}}, nil
}

func (h *Handler) list(ctx context.Context, c *call) (*answer, *problem) {
	q, p := query(c.req, "tenant", "event_type", "state", "limit", "cursor")
	if p != nil {
		return nil, p
	}
	lq := endpoint.ListQuery{Tenant: q["tenant"], EventType: q["event_type"], State: q["state"], Cursor: q["cursor"]}
	if lq.Tenant != "" {
		if err := validateTenant(lq.Tenant); err != nil {
			return nil, invalid("tenant", "%s", err)
		}
	}
	if lq.EventType != "" {
		if err := endpoint.ValidateEventType(lq.EventType); err != nil {
			return nil, invalid("event_type", "%s", err)
		}
	}
	if lq.State != "" && lq.State != endpoints.StateEnabled && lq.State != endpoints.StateDisabled {
		return nil, invalid("state", "%.40q: must be %s or %s", lq.State, endpoints.StateEnabled, endpoints.StateDisabled)
	}
	var ok bool
	if lq.Limit, ok = limit(q, "limit", endpoint.DefaultListLimit, endpoint.MaxListLimit); !ok {
		return nil, invalid("limit", "must be an integer from 1 to %d", endpoint.MaxListLimit)
	}
	page, err := h.cfg.Store.List(ctx, lq)
	if err != nil {
		return nil, h.failed(ctx, "list", "", err)
	}
	out := endpoints.Page{Data: []endpoints.Endpoint{}, NextCursor: page.Next}
	for _, e := range page.Endpoints {
		out.Data = append(out.Data, view(e, false))
	}
	return &answer{status: http.StatusOK, body: out}, nil
}

func (h *Handler) get(ctx context.Context, c *call) (*answer, *problem) {
	if p := checkID(c.id); p != nil {
		return nil, p
	}
	e, err := h.cfg.Store.Get(ctx, c.id)
	if err != nil {
		return nil, h.failed(ctx, "get", c.id, err)
	}
	return &answer{status: http.StatusOK, etag: e.Version, body: view(e, true)}, nil
}

func (h *Handler) update(ctx context.Context, c *call) (*answer, *problem) {
	if p := checkID(c.id); p != nil {
		return nil, p
	}
	version, given, p := ifMatch(c.req)
	if p != nil {
		return nil, p
	}
	if !given {
		return nil, newProblem(http.StatusPreconditionRequired, endpoints.CodeVersionRequired, "If-Match",
			"an update names the version it read: If-Match with the endpoint's ETag")
	}
	var in endpoints.Patch
	if p := decodeBody(c.req, &in, true); p != nil {
		return nil, p
	}
	patch := endpoint.Patch{URL: in.URL, Description: in.Description, EventTypes: in.EventTypes, Headers: in.Headers, Metadata: in.Metadata, RateLimit: in.RateLimit}
	if patch == (endpoint.Patch{}) {
		return nil, newProblem(http.StatusBadRequest, endpoints.CodeInvalidJSON, "", "the patch changes nothing: name at least one member")
	}
	e, err := h.cfg.Store.Update(ctx, c.id, version, patch)
	if err != nil {
		return nil, h.failed(ctx, "update", c.id, err)
	}
	h.log.InfoContext(ctx, "endpoint updated", "endpoint", e.ID, "version", e.Version)
	return &answer{status: http.StatusOK, etag: e.Version, body: view(e, true)}, nil
}

func (h *Handler) delete(ctx context.Context, c *call) (*answer, *problem) {
	if p := checkID(c.id); p != nil {
		return nil, p
	}
	version, _, p := ifMatch(c.req)
	if p != nil {
		return nil, p
	}
	if p := decodeBody(c.req, &struct{}{}, false); p != nil {
		return nil, p
	}
	if err := h.cfg.Store.Delete(ctx, c.id, version); err != nil {
		return nil, h.failed(ctx, "delete", c.id, err)
	}
	h.log.InfoContext(ctx, "endpoint deleted", "endpoint", c.id)
	return &answer{status: http.StatusNoContent}, nil
}

func (h *Handler) enable(ctx context.Context, c *call) (*answer, *problem) {
	if p := checkID(c.id); p != nil {
		return nil, p
	}
	if p := decodeBody(c.req, &struct{}{}, false); p != nil {
		return nil, p
	}
	e, err := h.cfg.Store.SetDisabled(ctx, c.id, nil)
	if err != nil {
		return nil, h.failed(ctx, "enable", c.id, err)
	}
	h.log.InfoContext(ctx, "endpoint enabled", "endpoint", e.ID)
	return &answer{status: http.StatusOK, etag: e.Version, body: view(e, true)}, nil
}

func (h *Handler) disable(ctx context.Context, c *call) (*answer, *problem) {
	if p := checkID(c.id); p != nil {
		return nil, p
	}
	var in endpoints.DisableRequest
	if p := decodeBody(c.req, &in, true); p != nil {
		return nil, p
	}
	if n := utf8.RuneCountInString(in.Reason); n == 0 || n > MaxReasonChars || !printable(in.Reason) {
		return nil, invalid("reason", "required: 1–%d printable characters saying why", MaxReasonChars)
	}
	e, err := h.cfg.Store.SetDisabled(ctx, c.id, &endpoint.Disabled{Reason: in.Reason, At: h.cfg.Now().UTC(), By: "operator"})
	if err != nil {
		return nil, h.failed(ctx, "disable", c.id, err)
	}
	h.log.InfoContext(ctx, "endpoint disabled", "endpoint", e.ID)
	return &answer{status: http.StatusOK, etag: e.Version, body: view(e, true)}, nil
}

func (h *Handler) rotate(ctx context.Context, c *call) (*answer, *problem) {
	if p := checkID(c.id); p != nil {
		return nil, p
	}
	var in endpoints.RotateRequest
	if p := decodeBody(c.req, &in, false); p != nil {
		return nil, p
	}
	grace := endpoint.DefaultGrace
	if in.GraceSeconds != nil {
		if *in.GraceSeconds < 0 || *in.GraceSeconds > int64(endpoint.MaxGrace/time.Second) {
			return nil, invalid("grace_seconds", "must be from 0 to %d (%s)", int64(endpoint.MaxGrace/time.Second), endpoint.MaxGrace)
		}
		grace = time.Duration(*in.GraceSeconds) * time.Second
	}
	e, s, err := h.cfg.Store.RotateSecret(ctx, c.id, grace)
	if err != nil {
		return nil, h.failed(ctx, "rotate-secret", c.id, err)
	}
	h.log.InfoContext(ctx, "endpoint secret rotated", "endpoint", e.ID, "secret_version", s.Version, "grace", grace.String())
	return &answer{status: http.StatusOK, etag: e.Version, body: endpoints.WithSecret{Endpoint: view(e, true), Secret: s.String()}}, nil
}

func (h *Handler) test(ctx context.Context, c *call) (*answer, *problem) {
	if p := checkID(c.id); p != nil {
		return nil, p
	}
	var in endpoints.TestRequest
	if p := decodeBody(c.req, &in, false); p != nil {
		return nil, p
	}
	e, err := h.cfg.Store.Get(ctx, c.id)
	if err != nil {
		return nil, h.failed(ctx, "test", c.id, err)
	}
	if e.Disabled != nil {
		return nil, newProblem(http.StatusConflict, endpoints.CodeEndpointDisabled, "", "endpoint %s is disabled (%s): enable it first", e.ID, e.Disabled.Reason)
	}
	payload := in.Payload
	if len(payload) == 0 || string(payload) == "null" {
		payload = json.RawMessage(`{"test":true}`)
	}
	now := h.cfg.Now().UTC()
	m := notification.Message{
		Version: notification.Version, ID: newEventID(), Channel: notification.ChannelEvent, CreatedAt: &now,
		Event: &notification.Event{Tenant: e.Tenant, Type: endpoints.TestEventType, Payload: payload, Endpoint: e.ID},
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, h.failed(ctx, "test", c.id, fmt.Errorf("encode test event: %w", err))
	}
	if _, err := notification.Parse(body); err != nil { // the fan-out's own check, before anything is sent
		return nil, h.failed(ctx, "test", c.id, fmt.Errorf("test event: %w", err))
	}
	if _, err := h.cfg.Queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(h.cfg.EventQueueURL), MessageBody: aws.String(string(body))}); err != nil {
		return nil, h.failed(ctx, "test", c.id, fmt.Errorf("send test event: %w", err))
	}
	h.log.InfoContext(ctx, "endpoint test event queued", "endpoint", e.ID, "event", m.ID)
	return &answer{status: http.StatusAccepted, body: endpoints.TestQueued{EventID: m.ID, Type: endpoints.TestEventType, Endpoint: e.ID}}, nil
}

func (h *Handler) failures(ctx context.Context, c *call) (*answer, *problem) {
	if p := checkID(c.id); p != nil {
		return nil, p
	}
	q, p := query(c.req, "limit")
	if p != nil {
		return nil, p
	}
	n, ok := limit(q, "limit", DefaultFailuresLimit, MaxFailuresLimit)
	if !ok {
		return nil, invalid("limit", "must be an integer from 1 to %d", MaxFailuresLimit)
	}
	fs, err := h.cfg.Store.Failures(ctx, c.id, n)
	if err != nil {
		return nil, h.failed(ctx, "failures", c.id, err)
	}
	if len(fs) == 0 { // none, or no such endpoint: the store's failures do not say
		if _, err := h.cfg.Store.Get(ctx, c.id); err != nil {
			return nil, h.failed(ctx, "failures", c.id, err)
		}
	}
	out := endpoints.FailureList{Data: []endpoints.Failure{}}
	for _, f := range fs {
		out.Data = append(out.Data, endpoints.Failure{At: f.At.UTC(), MessageID: f.MessageID, EventID: f.EventID, Class: f.Class, Reason: f.Reason, Attempt: f.Attempt})
	}
	return &answer{status: http.StatusOK, body: out}, nil
}

// query returns the request's query parameters; a parameter the operation
// does not name, or one given twice, is 400 naming it.
func query(req *eventsRequest, names ...string) (map[string]string, *problem) {
	out := map[string]string{}
	for k, vs := range req.MultiValueQueryStringParameters {
		if !slices.Contains(names, k) {
			return nil, newProblem(http.StatusBadRequest, endpoints.CodeUnknownField, k, "unknown query parameter %.60q", k)
		}
		if len(vs) > 1 {
			return nil, invalid(k, "given %d times; give it once", len(vs))
		}
	}
	for k, v := range req.QueryStringParameters {
		if !slices.Contains(names, k) {
			return nil, newProblem(http.StatusBadRequest, endpoints.CodeUnknownField, k, "unknown query parameter %.60q", k)
		}
		if v == "" {
			return nil, invalid(k, "empty: leave the parameter out instead")
		}
		out[k] = v
	}
	return out, nil
}

// limit reads an integer parameter from 1 to max, def when absent.
func limit(q map[string]string, name string, def, max int) (int, bool) {
	s, ok := q[name]
	if !ok {
		return def, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= max && strconv.Itoa(n) == s
}

// checkID refuses an {id} that is not an endpoint id.
func checkID(id string) *problem {
	if !endpoint.ValidID(id) {
		return invalid("id", "%.60q is not an endpoint id (%s and 26 characters)", id, endpoint.IDPrefix)
	}
	return nil
}

// view is what the API shows of e: never a secret's key, a chat URL or a
// header value; full adds what only Get knows (header names, secrets).
func view(e endpoint.Endpoint, full bool) endpoints.Endpoint {
	v := endpoints.Endpoint{
		ID: e.ID, Tenant: e.Tenant, Kind: string(e.Kind), Description: e.Description, EventTypes: e.EventTypes,
		RateLimit: e.RateLimit, Metadata: e.Metadata, State: endpoints.StateEnabled,
		Version: e.Version, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(),
	}
	if u, err := url.Parse(e.URL); err == nil {
		v.URLHost = u.Hostname()
	}
	if e.Kind == endpoint.KindWebhook {
		v.URL = e.URL
	}
	if e.Disabled != nil {
		v.State = endpoints.StateDisabled
		v.Disabled = &endpoints.Disabled{Reason: e.Disabled.Reason, At: e.Disabled.At.UTC(), By: e.Disabled.By}
	}
	if !full {
		return v
	}
	v.HeaderNames = []string{}
	for name := range e.Headers {
		v.HeaderNames = append(v.HeaderNames, name)
	}
	slices.Sort(v.HeaderNames)
	v.Secrets = []endpoints.SecretVersion{}
	for _, s := range e.Secrets {
		sv := endpoints.SecretVersion{Version: s.Version, CreatedAt: s.CreatedAt.UTC()}
		if !s.Until.IsZero() {
			until := s.Until.UTC()
			sv.Until = &until
		}
		v.Secrets = append(v.Secrets, sv)
	}
	return v
}

// currentSecret is the newest secret of e, written for people.
func currentSecret(e endpoint.Endpoint) string {
	if len(e.Secrets) == 0 {
		return ""
	}
	return e.Secrets[0].String()
}

// printable reports whether s has no control characters.
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}
