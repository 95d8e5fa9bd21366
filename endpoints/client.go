package endpoints

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// SigningService is the service name of API Gateway's AWS_IAM
// authorization in Signature Version 4.
const SigningService = "execute-api"

// maxAnswerBytes bounds what the client reads of an answer.
const maxAnswerBytes = 4 << 20

// Client calls the endpoints API at one base URL, signing each request.
type Client struct {
	base   *url.URL
	creds  aws.CredentialsProvider
	region string
	signer *v4.Signer
	// HTTP sends the requests. Defaults to a client with a 30 s timeout.
	HTTP *http.Client
	// Now is the signing time. Defaults to time.Now.
	Now func() time.Time
}

// New returns a client of the API at baseURL: the stage's URL, without
// "/v1" (the EndpointsApiUrl output, or the local stack's
// http://127.0.0.1:<port>/_aws/execute-api/<apiId>/api). It signs with
// cfg's credentials and Region; it returns an error for a baseURL that is
// not absolute http(s) or a cfg without Region or credentials.
func New(baseURL string, cfg aws.Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("endpoints API URL %q: must be an absolute http(s) URL", baseURL)
	}
	if cfg.Region == "" {
		return nil, errors.New("endpoints API: no AWS Region to sign for (AWS_REGION)")
	}
	if cfg.Credentials == nil {
		return nil, errors.New("endpoints API: no AWS credentials to sign with")
	}
	return &Client{base: u, creds: cfg.Credentials, region: cfg.Region, signer: v4.NewSigner(),
		HTTP: &http.Client{Timeout: 30 * time.Second}, Now: time.Now}, nil
}

// Create registers an endpoint; the answer carries its signing secret, the
// only time besides RotateSecret.
func (c *Client) Create(ctx context.Context, in CreateInput) (WithSecret, error) {
	var out WithSecret
	err := c.do(ctx, http.MethodPost, "/v1/endpoints", nil, nil, in, http.StatusCreated, &out)
	return out, err
}

// List returns one page of endpoints.
func (c *Client) List(ctx context.Context, q ListQuery) (Page, error) {
	v := url.Values{}
	for k, s := range map[string]string{"tenant": q.Tenant, "event_type": q.EventType, "state": q.State, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out Page
	err := c.do(ctx, http.MethodGet, "/v1/endpoints", v, nil, nil, http.StatusOK, &out)
	return out, err
}

// Get reads one endpoint.
func (c *Client) Get(ctx context.Context, id string) (Endpoint, error) {
	var out Endpoint
	err := c.do(ctx, http.MethodGet, path(id, ""), nil, nil, nil, http.StatusOK, &out)
	return out, err
}

// Update changes an endpoint read at version; another current version is
// an *Error with Code CodeVersionMismatch (HTTP 412).
func (c *Client) Update(ctx context.Context, id string, version int64, p Patch) (Endpoint, error) {
	var out Endpoint
	err := c.do(ctx, http.MethodPatch, path(id, ""), nil, ifMatch(version), p, http.StatusOK, &out)
	return out, err
}

// Delete deletes an endpoint; version 0 deletes whatever its version,
// another deletes only at that version (CodeVersionMismatch otherwise).
func (c *Client) Delete(ctx context.Context, id string, version int64) error {
	var h http.Header
	if version != 0 {
		h = ifMatch(version)
	}
	return c.do(ctx, http.MethodDelete, path(id, ""), nil, h, nil, http.StatusNoContent, nil)
}

// Enable clears an endpoint's disabled state.
func (c *Client) Enable(ctx context.Context, id string) (Endpoint, error) {
	var out Endpoint
	err := c.do(ctx, http.MethodPost, path(id, "/enable"), nil, nil, nil, http.StatusOK, &out)
	return out, err
}

// Disable stops deliveries to an endpoint, for reason.
func (c *Client) Disable(ctx context.Context, id, reason string) (Endpoint, error) {
	var out Endpoint
	err := c.do(ctx, http.MethodPost, path(id, "/disable"), nil, nil, DisableRequest{Reason: reason}, http.StatusOK, &out)
	return out, err
}

// RotateSecret makes a new signing secret; the previous one also signs for
// grace (whole seconds; negative: the API's default, a day).
func (c *Client) RotateSecret(ctx context.Context, id string, grace time.Duration) (WithSecret, error) {
	var body RotateRequest
	if grace >= 0 {
		s := int64(grace / time.Second)
		body.GraceSeconds = &s
	}
	var out WithSecret
	err := c.do(ctx, http.MethodPost, path(id, "/rotate-secret"), nil, nil, body, http.StatusOK, &out)
	return out, err
}

// Test sends the endpoint an event of type TestEventType with payload (nil:
// the API's default) through the event queue.
func (c *Client) Test(ctx context.Context, id string, payload json.RawMessage) (TestQueued, error) {
	var out TestQueued
	err := c.do(ctx, http.MethodPost, path(id, "/test"), nil, nil, TestRequest{Payload: payload}, http.StatusAccepted, &out)
	return out, err
}

// Failures lists the endpoint's most recent failed attempts, newest first
// (limit 0: the API's default, 20).
func (c *Client) Failures(ctx context.Context, id string, limit int) ([]Failure, error) {
	v := url.Values{}
	if limit != 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out FailureList
	err := c.do(ctx, http.MethodGet, path(id, "/failures"), v, nil, nil, http.StatusOK, &out)
	return out.Data, err
}

func path(id, tail string) string { return "/v1/endpoints/" + url.PathEscape(id) + tail }

func ifMatch(version int64) http.Header {
	return http.Header{"If-Match": {`"` + strconv.FormatInt(version, 10) + `"`}}
}

// do sends one signed request and decodes a want-status answer into out;
// any other status is an *Error.
func (c *Client) do(ctx context.Context, method, p string, query url.Values, header http.Header, in any, want int, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("%s %s: encode: %w", method, p, err)
		}
	}
	u := *c.base
	u.Path = c.base.Path + p
	u.RawPath = c.base.EscapedPath() + p
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, p, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("%s %s: AWS credentials: %w", method, p, err)
	}
	sum := sha256.Sum256(body)
	if err := c.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), SigningService, c.region, c.Now()); err != nil {
		return fmt.Errorf("%s %s: sign: %w", method, p, err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, p, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, p, err)
	}
	if resp.StatusCode != want {
		return answerError(resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: answer %d is not the documented JSON: %w", method, p, resp.StatusCode, err)
	}
	return nil
}

// answerError is the *Error of an answer with an unexpected status: the
// body's error object, or (an answer API Gateway made itself, such as 403
// {"message":"Missing Authentication Token"}) its message.
func answerError(status int, raw []byte) *Error {
	var b ErrorBody
	if json.Unmarshal(raw, &b) == nil && b.Error != nil && b.Error.Code != "" {
		b.Error.Status = status
		return b.Error
	}
	var gw struct {
		Message string `json:"message"`
	}
	msg := http.StatusText(status)
	if json.Unmarshal(raw, &gw) == nil && gw.Message != "" {
		msg = gw.Message
	}
	code := ""
	if status >= 500 {
		code = CodeInternal
	}
	return &Error{Status: status, Code: code, Message: msg}
}
