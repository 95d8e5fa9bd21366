// Package pausetest is a fake of the Lambda API's event source mapping
// calls in their REST-JSON wire format, for the tests of package pause and
// of the commands built on it (herald resume). It rejects what Lambda
// rejects, so a test sees a wrong call fail.
package pausetest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// Lambda speaks ListEventSourceMappings (GET
// /2015-03-31/event-source-mappings/, paged by Marker/NextMarker) and
// UpdateEventSourceMapping (PUT /2015-03-31/event-source-mappings/{UUID},
// 202 with the mapping). It filters by FunctionName (name or ARN) and
// EventSourceArn as Lambda does, answers ResourceNotFoundException for an
// unknown UUID, InvalidParameterValueException for an update without
// Enabled, AccessDeniedException (403) for the UUIDs in Deny, and
// ResourceInUseException (400) for an update of a mapping in a
// transitional state (Creating, Enabling, Disabling, Updating, Deleting),
// as Lambda does while another update of it is in progress.
//
// An update it makes leaves the mapping Enabling or Disabling until the
// next ListEventSourceMappings, which sees it Enabled or Disabled: the
// update has finished by the time anyone looks again.
type Lambda struct {
	Mu       sync.Mutex
	Mappings []Mapping
	// PageSize is the page length of ListEventSourceMappings. Defaults to 100.
	PageSize int
	Deny     map[string]bool
	// Updates are the UUIDs updated, in order.
	Updates []string
	// BeforeUpdate, when set, runs with Mu held as an update of uuid
	// arrives, before the fake looks at the mapping: a test plays another
	// execution environment there with Transition. When it returns
	// "ResourceConflictException" the update is answered with that error
	// (409), as Lambda does while another operation is in progress.
	BeforeUpdate func(uuid string) (errorType string)

	settling map[string]bool
}

// Transition puts the mapping uuid in state (Enabling or Disabling) as an
// update in progress would; the next ListEventSourceMappings sees it
// finished. Call it with Mu held (from BeforeUpdate).
func (w *Lambda) Transition(uuid, state string) {
	for i := range w.Mappings {
		if w.Mappings[i].UUID == uuid {
			w.Mappings[i].State = state
			if w.settling == nil {
				w.settling = map[string]bool{}
			}
			w.settling[uuid] = true
		}
	}
}

// settled is where an update in progress leads.
var settled = map[string]string{"Enabling": "Enabled", "Disabling": "Disabled"}

// transitional are the states in which Lambda refuses an update.
var transitional = map[string]bool{"Creating": true, "Enabling": true, "Disabling": true, "Updating": true, "Deleting": true}

// Mapping is one event source mapping as the API returns it.
type Mapping struct {
	UUID           string `json:"UUID"`
	FunctionArn    string `json:"FunctionArn"`
	EventSourceArn string `json:"EventSourceArn"`
	State          string `json:"State"`
}

const base = "/2015-03-31/event-source-mappings/"

func (w *Lambda) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.Mu.Lock()
	defer w.Mu.Unlock()
	switch {
	case r.Method == http.MethodGet && strings.TrimSuffix(r.URL.Path, "/")+"/" == base:
		for i, m := range w.Mappings {
			if w.settling[m.UUID] && settled[m.State] != "" {
				w.Mappings[i].State = settled[m.State]
			}
		}
		w.settling = nil
		q := r.URL.Query()
		var match []Mapping
		for _, m := range w.Mappings {
			fn := q.Get("FunctionName")
			if fn != "" && fn != m.FunctionArn && !strings.HasSuffix(m.FunctionArn, ":function:"+fn) {
				continue
			}
			if src := q.Get("EventSourceArn"); src != "" && src != m.EventSourceArn {
				continue
			}
			match = append(match, m)
		}
		size := w.PageSize
		if size <= 0 {
			size = 100
		}
		start := 0
		if mk := q.Get("Marker"); mk != "" {
			n, err := strconv.Atoi(mk)
			if err != nil || n < 0 || n > len(match) {
				writeError(rw, http.StatusBadRequest, "InvalidParameterValueException", "invalid Marker")
				return
			}
			start = n
		}
		end := min(len(match), start+size)
		out := map[string]any{"EventSourceMappings": match[start:end]}
		if end < len(match) {
			out["NextMarker"] = strconv.Itoa(end)
		}
		writeJSON(rw, http.StatusOK, out)
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, base):
		uuid := strings.TrimPrefix(r.URL.Path, base)
		var in struct{ Enabled *bool }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Enabled == nil {
			writeError(rw, http.StatusBadRequest, "InvalidParameterValueException", "Enabled expected")
			return
		}
		if w.BeforeUpdate != nil && w.BeforeUpdate(uuid) == "ResourceConflictException" {
			writeError(rw, http.StatusConflict, "ResourceConflictException", "An update is already in progress for the event source mapping.")
			return
		}
		if w.Deny[uuid] {
			writeError(rw, http.StatusForbidden, "AccessDeniedException", "not authorized to perform lambda:UpdateEventSourceMapping")
			return
		}
		for i := range w.Mappings {
			if w.Mappings[i].UUID == uuid {
				if transitional[w.Mappings[i].State] {
					writeError(rw, http.StatusBadRequest, "ResourceInUseException",
						"Cannot update the event source mapping because it is in use. State: "+w.Mappings[i].State)
					return
				}
				w.Transition(uuid, map[bool]string{true: "Enabling", false: "Disabling"}[*in.Enabled])
				w.Updates = append(w.Updates, uuid)
				writeJSON(rw, http.StatusAccepted, w.Mappings[i])
				return
			}
		}
		writeError(rw, http.StatusNotFound, "ResourceNotFoundException", "The resource you requested does not exist.")
	default:
		http.Error(rw, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
	}
}

func writeError(rw http.ResponseWriter, status int, typ, msg string) {
	rw.Header().Set("X-Amzn-ErrorType", typ)
	writeJSON(rw, status, map[string]string{"Message": msg})
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(v)
}

// Client serves w on a test server and returns a Lambda client for it,
// with static credentials and no retries.
func Client(t testing.TB, w *Lambda) *lambda.Client {
	t.Helper()
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return lambda.New(lambda.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	})
}
