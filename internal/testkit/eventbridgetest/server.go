// Package eventbridgetest is an httptest server speaking Amazon
// EventBridge's PutEvents over its AWS JSON 1.1 wire protocol (X-Amz-Target
// "AWSEvents.PutEvents", application/x-amz-json-1.1), for unit tests that
// need the real AWS SDK v2 client. Like EventBridge (API Reference,
// PutEvents) it rejects a request with no entry or more than 10
// (ValidationException) or whose entries total more than 256 KB, sized as
// EventBridge sizes them (ValidationException), and refuses an entry (FailedEntryCount, with
// ErrorCode) without Source, DetailType or Detail (InvalidArgument), whose
// Detail is not a JSON object (MalformedDetail) or whose bus it does not
// hold (ResourceNotFoundException, as EventBridge answers per entry).
// [Server.Refuse] makes it refuse entries one by one with the codes
// EventBridge gives a caller to retry (ThrottlingException,
// InternalFailure: API Reference, PutEventsResultEntry), the other entries
// of the call accepted.
package eventbridgetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/heraldhq/herald/internal/testkit/awstest"
)

// MaxEntries and MaxRequestBytes are PutEvents' limits (API Reference,
// PutEvents: "Entries ... Maximum number of 10 items"; "The maximum size for
// a PutEvents event entry is 256 KB"), the entries' size counted as the
// User Guide's "Calculating PutEvents event entry size" counts it: 14 bytes
// for a Time, the UTF-8 bytes of Source, DetailType, Detail and each of the
// Resources.
const (
	MaxEntries      = 10
	MaxRequestBytes = 256 * 1024
)

// Event is one accepted entry.
type Event struct {
	Bus, Source, DetailType string
	Detail                  map[string]any
}

// Server holds the events put on its buses ("default" always exists).
type Server struct {
	srv *httptest.Server

	mu     sync.Mutex
	buses  map[string]bool
	events []Event
	fail   int
	refuse []string // ErrorCodes for the next entries, "" to accept one
	calls  int
}

// Retryable ErrorCodes of a refused entry (API Reference,
// PutEventsResultEntry, "Retryable errors include").
const (
	CodeThrottling      = "ThrottlingException"
	CodeInternalFailure = "InternalFailure"
)

// New starts a server with the default bus, closed when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{buses: map[string]bool{"default": true}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Client returns a real SDK client for the server, without retries.
func (s *Server) Client() *eventbridge.Client {
	return eventbridge.NewFromConfig(awstest.Config(s.srv.URL))
}

// URL is the server's endpoint (AWS_ENDPOINT_URL_EVENTBRIDGE).
func (s *Server) URL() string { return s.srv.URL }

// AddBus creates an event bus.
func (s *Server) AddBus(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buses[name] = true
}

// Fail makes the next n calls answer 500 InternalException.
func (s *Server) Fail(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = n
}

// Refuse makes the next len(codes) entries, in the order they arrive
// across calls, answered one each: refused with that ErrorCode (and
// FailedEntryCount counting it), or accepted for "". Entries after them
// are accepted as usual.
func (s *Server) Refuse(codes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = append(s.refuse, codes...)
}

// Calls counts the PutEvents calls answered so far.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Events returns the accepted events so far.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

type entry struct {
	EventBusName, Source, DetailType, Detail *string
	Time                                     *float64 // epoch seconds on the wire
	Resources                                []string
}

// timeBytes is what a Time counts towards MaxRequestBytes.
const timeBytes = 14

type entryResult struct {
	EventId      string `json:",omitempty"`
	ErrorCode    string `json:",omitempty"`
	ErrorMessage string `json:",omitempty"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	body, _ := io.ReadAll(r.Body)
	fail := func(status int, code, msg string) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
	}
	if r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		fail(http.StatusBadRequest, "UnknownOperationException", "eventbridgetest answers only PutEvents")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.fail > 0 {
		s.fail--
		fail(http.StatusInternalServerError, "InternalException", "injected")
		return
	}
	var req struct{ Entries []entry }
	if err := json.Unmarshal(body, &req); err != nil {
		fail(http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	if n := len(req.Entries); n < 1 || n > MaxEntries {
		fail(http.StatusBadRequest, "ValidationException", fmt.Sprintf("1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to %d and greater than or equal to 1", MaxEntries))
		return
	}
	size := 0
	for _, e := range req.Entries {
		for _, v := range []*string{e.Source, e.DetailType, e.Detail} {
			size += len(aws.ToString(v))
		}
		for _, r := range e.Resources {
			size += len(r)
		}
		if e.Time != nil {
			size += timeBytes
		}
	}
	if size > MaxRequestBytes {
		fail(http.StatusBadRequest, "ValidationException", "Total size of the entries in the request is over the limit.")
		return
	}
	out := struct {
		FailedEntryCount int
		Entries          []entryResult
	}{}
	for i, e := range req.Entries {
		bus := aws.ToString(e.EventBusName)
		if bus == "" {
			bus = "default"
		}
		if strings.HasPrefix(bus, "arn:") { // arn:…:event-bus/NAME; without a "/", the whole ARN
			bus = bus[strings.LastIndex(bus, "/")+1:]
		}
		var detail map[string]any
		var res entryResult
		refusal := ""
		if len(s.refuse) > 0 {
			refusal, s.refuse = s.refuse[0], s.refuse[1:]
		}
		switch {
		case refusal != "":
			res = entryResult{ErrorCode: refusal, ErrorMessage: "injected: " + refusal}
		case aws.ToString(e.Source) == "", aws.ToString(e.DetailType) == "", aws.ToString(e.Detail) == "":
			res = entryResult{ErrorCode: "InvalidArgument", ErrorMessage: "Parameters Source, DetailType and Detail are required."}
		case json.Unmarshal([]byte(*e.Detail), &detail) != nil || detail == nil:
			res = entryResult{ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed."}
		case !s.buses[bus]:
			res = entryResult{ErrorCode: "ResourceNotFoundException", ErrorMessage: "Event bus " + bus + " does not exist."}
		default:
			s.events = append(s.events, Event{Bus: bus, Source: *e.Source, DetailType: *e.DetailType, Detail: detail})
			res = entryResult{EventId: fmt.Sprintf("event-%d-%d", len(s.events), i)}
		}
		if res.ErrorCode != "" {
			out.FailedEntryCount++
		}
		out.Entries = append(out.Entries, res)
	}
	_ = json.NewEncoder(w).Encode(out)
}
