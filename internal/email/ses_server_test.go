package email

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// sendEmailPath is the REST-JSON binding of SES v2 SendEmail:
// POST /v2/email/outbound-emails with the input as a JSON body.
const sendEmailPath = "/v2/email/outbound-emails"

// sesServer is an httptest server that speaks SES v2 SendEmail's wire format
// and records the bodies it receives.
type sesServer struct {
	*httptest.Server

	mu     sync.Mutex
	bodies [][]byte
}

// newSESServer starts a server whose SendEmail answers come from handler,
// after it has checked the method and path and recorded the body.
func newSESServer(t *testing.T, handler http.HandlerFunc) *sesServer {
	t.Helper()
	s := &sesServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Method != http.MethodPost || r.URL.Path != sendEmailPath {
			t.Errorf("SES server got %s %s (read error %v); want POST %s", r.Method, r.URL.Path, err, sendEmailPath)
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// received returns the bodies of the requests so far.
func (s *sesServer) received() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// sesOK answers like a successful SendEmail.
func sesOK(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-RequestId", "req-ok")
	fmt.Fprint(w, `{"MessageId":"0100018f-test-message-id"}`)
}

// sesError answers like SES failing with the exception code at HTTP status:
// the code in the X-Amzn-ErrorType header, the message in a JSON body.
func sesError(status int, code, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-ErrorType", code)
		w.Header().Set("x-amzn-RequestId", "req-1")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"message":%q}`, message)
	}
}

// newClient returns a real SES v2 client for endpoint that makes a single
// attempt, unless optFns say otherwise.
func newClient(endpoint string, optFns ...func(*sesv2.Options)) *sesv2.Client {
	return sesv2.New(sesv2.Options{
		BaseEndpoint:     aws.String(endpoint),
		Region:           "us-east-1",
		Credentials:      aws.AnonymousCredentials{},
		RetryMaxAttempts: 1,
	}, optFns...)
}

type testBundle struct {
	srv    *sesServer
	sender *Sender
}

// setup starts an SES server answering with handler and a Sender talking to
// it through a real *sesv2.Client.
func setup(t *testing.T, handler http.HandlerFunc, cfg Config, optFns ...func(*sesv2.Options)) *testBundle {
	t.Helper()
	srv := newSESServer(t, handler)
	sender, err := NewSender(newClient(srv.URL, optFns...), cfg)
	require.NoError(t, err)
	return &testBundle{srv: srv, sender: sender}
}

// parse returns the message of a contract v1 body, which must be valid.
func parse(t testing.TB, body string) *notification.Message {
	t.Helper()
	m, err := notification.Parse([]byte(body))
	require.NoError(t, err)
	return m
}

// simpleMessage is a valid email notification with id n-1.
const simpleMessage = `{"version":1,"id":"n-1","channel":"email","email":{
	"from":"shop@example.com","to":["rcpt@example.com"],
	"subject":"Secret subject","text":"secret body"}}`
