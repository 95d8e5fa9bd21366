package endpointapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/endpoints"
)

// route is one operation of api/endpoints.openapi.yaml: its method, its
// path template ("{id}" matches one segment) and its operationId.
type route struct {
	method, path, operation string
	handle                  func(h *Handler, ctx context.Context, c *call) (*answer, *problem)
}

// routes are the API's operations; a test keeps them equal to the
// OpenAPI document's.
var routes = []route{
	{http.MethodPost, "/v1/endpoints", "createEndpoint", (*Handler).create},
	{http.MethodGet, "/v1/endpoints", "listEndpoints", (*Handler).list},
	{http.MethodGet, "/v1/endpoints/{id}", "getEndpoint", (*Handler).get},
	{http.MethodPatch, "/v1/endpoints/{id}", "updateEndpoint", (*Handler).update},
	{http.MethodDelete, "/v1/endpoints/{id}", "deleteEndpoint", (*Handler).delete},
	{http.MethodPost, "/v1/endpoints/{id}/enable", "enableEndpoint", (*Handler).enable},
	{http.MethodPost, "/v1/endpoints/{id}/disable", "disableEndpoint", (*Handler).disable},
	{http.MethodPost, "/v1/endpoints/{id}/rotate-secret", "rotateEndpointSecret", (*Handler).rotate},
	{http.MethodPost, "/v1/endpoints/{id}/test", "testEndpoint", (*Handler).test},
	{http.MethodGet, "/v1/endpoints/{id}/failures", "listEndpointFailures", (*Handler).failures},
}

// match reports whether path fits template, and the {id} segment.
func match(template, path string) (id string, ok bool) {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return "", false
	}
	for i, t := range ts {
		switch {
		case t == "{id}":
			if ps[i] == "" {
				return "", false
			}
			id = ps[i]
		case t != ps[i]:
			return "", false
		}
	}
	return id, true
}

// call is one request as the handlers see it.
type call struct {
	req *events.APIGatewayProxyRequest
	id  string // the {id} segment
}

// answer is a success: its status, ETag (0: none), Location ("": none)
// and body (nil: none).
type answer struct {
	status   int
	etag     int64
	location string
	body     any
}

// Config is what a Handler needs.
type Config struct {
	Store Store
	// Queue and EventQueueURL are where test events go (SendMessage).
	Queue         Queue
	EventQueueURL string
	// Logger gets one line per write and per failure (never a secret, a
	// URL or a header value). Defaults to discarding.
	Logger *slog.Logger
	// Now is the clock of test events' created_at. Defaults to time.Now.
	Now func() time.Time
}

// Handler serves the endpoints API.
type Handler struct {
	cfg Config
	log *slog.Logger
}

// New returns the handler; it returns an error when Store, Queue or
// EventQueueURL is missing.
func New(cfg Config) (*Handler, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("endpointapi: no store")
	case cfg.Queue == nil || cfg.EventQueueURL == "":
		return nil, errors.New("endpointapi: no event queue (HERALD_EVENT_QUEUE_URL)")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg, log: log}, nil
}

// Handle answers one API Gateway proxy request. It never returns an
// error: a failure of its own is a 500 answer with code "internal" (an
// error returned to API Gateway would be a bare 502).
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	var allowed []string
	for _, r := range routes {
		id, ok := match(r.path, req.Path)
		if !ok {
			continue
		}
		if r.method != req.HTTPMethod {
			allowed = append(allowed, r.method)
			continue
		}
		a, p := r.handle(h, ctx, &call{req: &req, id: id})
		if p != nil {
			return errorResponse(p), nil // a 500 was logged where it arose (failed, response)
		}
		return h.response(ctx, a), nil
	}
	if len(allowed) > 0 {
		resp := errorResponse(newProblem(http.StatusMethodNotAllowed, endpoints.CodeMethodNotAllowed, "",
			"%s is not a method of %s (allowed: %s)", req.HTTPMethod, req.Path, strings.Join(allowed, ", ")))
		resp.Headers["Allow"] = strings.Join(allowed, ", ")
		return resp, nil
	}
	return errorResponse(newProblem(http.StatusNotFound, endpoints.CodeNoRoute, "", "no route %.200q: the API's paths start /v1/endpoints", req.Path)), nil
}

// response writes a success.
func (h *Handler) response(ctx context.Context, a *answer) events.APIGatewayProxyResponse {
	resp := events.APIGatewayProxyResponse{StatusCode: a.status, Headers: map[string]string{}}
	if a.etag > 0 {
		resp.Headers["ETag"] = etag(a.etag)
	}
	if a.location != "" {
		resp.Headers["Location"] = a.location
	}
	if a.body == nil {
		return resp
	}
	b, err := json.Marshal(a.body)
	if err != nil {
		h.log.ErrorContext(ctx, "endpoints API: encode answer", "error", err)
		return errorResponse(internal())
	}
	resp.Headers["Content-Type"] = "application/json"
	resp.Body = string(b)
	return resp
}

func errorResponse(p *problem) events.APIGatewayProxyResponse {
	b, _ := json.Marshal(endpoints.ErrorBody{Error: &p.body})
	return events.APIGatewayProxyResponse{StatusCode: p.status, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(b)}
}

func internal() *problem {
	return newProblem(http.StatusInternalServerError, endpoints.CodeInternal, "", "herald failed; the function's log says why; safe to retry")
}

// failed is the answer to a store error: the store's own problem, or a
// logged 500.
func (h *Handler) failed(ctx context.Context, op, id string, err error) *problem {
	if p := storeProblem(id, err); p != nil {
		return p
	}
	h.log.ErrorContext(ctx, "endpoints API: store failed", "operation", op, "endpoint", id, "error", err.Error())
	return internal()
}
