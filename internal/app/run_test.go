package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
)

// runtimeAPI is the Lambda Runtime API
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html) as a
// function's runtime client sees it: GET .../invocation/next hands over
// one event, then none (the request waits, as for an idle function); POST
// .../invocation/{id}/response and .../error take the answer.
type runtimeAPI struct {
	event   []byte
	answers chan string
	served  chan struct{}
}

func (a *runtimeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/2018-06-01/runtime/invocation/next":
		select {
		case a.served <- struct{}{}:
		default:
			<-r.Context().Done() // no second event
			return
		}
		w.Header().Set("Lambda-Runtime-Aws-Request-Id", "req-1")
		w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10))
		w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:herald-deliver")
		_, _ = w.Write(a.event)
	case r.Method == http.MethodPost:
		a.answers <- r.URL.Path + " " + string(body)
		w.WriteHeader(http.StatusAccepted)
	default:
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
	}
}

// TestRunServesTheHandler: Run hands the handler start built to the
// Lambda runtime client, which invokes it with the Runtime API's event and
// posts its answer. Run does not return: it is left waiting for the next
// event when the test ends.
func TestRunServesTheHandler(t *testing.T) { // t.Setenv: not parallel
	api := &runtimeAPI{event: []byte(`{"records":2}`), answers: make(chan string, 1), served: make(chan struct{}, 1)}
	srv := httptest.NewServer(api) // not closed: Run keeps polling it until the test binary exits
	t.Setenv("AWS_LAMBDA_RUNTIME_API", srv.Listener.Addr().String())
	go app.Run("deliver", func() (any, error) {
		return func(_ context.Context, ev json.RawMessage) (string, error) { return "handled " + string(ev), nil }, nil
	})
	select {
	case got := <-api.answers:
		require.Equal(t, `/2018-06-01/runtime/invocation/req-1/response "handled {\"records\":2}"`, got)
	case <-time.After(10 * time.Second):
		t.Fatal("no answer posted")
	}
}

// TestRunExitsWhenStartFails: the test binary runs itself with
// HERALD_TEST_RUN_START_FAILS set, and that child calls Run with a start
// that fails: one line on standard error naming the function and the
// error, nothing on standard output, exit status 1, no handler served.
func TestRunExitsWhenStartFails(t *testing.T) {
	if os.Getenv("HERALD_TEST_RUN_START_FAILS") == "1" {
		app.Run("deliver", func() (any, error) {
			return func(context.Context) error { return nil }, errors.New("configuration: HERALD_QUEUE_URL: required")
		})
		return // not reached: Run exits or serves forever
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunExitsWhenStartFails$")
	cmd.Env = append(os.Environ(), "HERALD_TEST_RUN_START_FAILS=1", "AWS_LAMBDA_RUNTIME_API=127.0.0.1:1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 1, exit.ExitCode())
	require.Equal(t, "herald deliver: configuration: HERALD_QUEUE_URL: required\n", stderr.String())
	require.Empty(t, stdout.String())
}
