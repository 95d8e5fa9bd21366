package localenv_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeRIEEnv, set in the environment of this test binary, makes it a
// stand-in for the aws-lambda-rie binary (see fakeRIE) instead of running
// the tests: StartRIE runs it as it runs the emulator.
const fakeRIEEnv = "LOCALENV_TEST_FAKE_RIE"

func TestMain(m *testing.M) {
	if os.Getenv(fakeRIEEnv) == "1" {
		fakeRIE(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

// fakeRIE plays the Runtime Interface Emulator as scripts/install-rie.sh
// describes it: it takes --runtime-interface-emulator-address and
// --runtime-api-address (then the bootstrap's command line), forwards its
// environment, and answers POST /2015-03-31/functions/function/invocations
// on the first address with the function's answer: HTTP 200 with the
// result, or with {"errorMessage","errorType"} for a handler error. The
// bootstrap's first word says which function it plays:
//
//	batch   answers a partial batch response failing the event's first record
//	        (none without records)
//	echo    answers the payload it got
//	error   answers a handler error
//	crash   answers HTTP 502
//	timeout answers "Task timed out after 1.00 seconds" (not JSON)
//
// It writes "api=…", "runtime=…", "bootstrap=…" and "env=$LOCALENV_TEST_VAR"
// to standard output, LOCALENV_TEST_LOG_BYTES bytes of "x" to standard
// error, and waits LOCALENV_TEST_DELAY_MS before it listens.
func fakeRIE(args []string) {
	var api, runtime string
	for len(args) >= 2 && strings.HasPrefix(args[0], "--") {
		switch args[0] {
		case "--runtime-interface-emulator-address":
			api = args[1]
		case "--runtime-api-address":
			runtime = args[1]
		}
		args = args[2:]
	}
	fmt.Printf("api=%s runtime=%s bootstrap=%s env=%s\n", api, runtime, strings.Join(args, " "), os.Getenv("LOCALENV_TEST_VAR"))
	var n int
	_, _ = fmt.Sscan(os.Getenv("LOCALENV_TEST_LOG_BYTES"), &n)
	fmt.Fprint(os.Stderr, strings.Repeat("x", n))
	var delay int
	_, _ = fmt.Sscan(os.Getenv("LOCALENV_TEST_DELAY_MS"), &delay)
	time.Sleep(time.Duration(delay) * time.Millisecond)
	l, err := net.Listen("tcp", api)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	mode := ""
	if len(args) > 0 {
		mode = args[0]
	}
	_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/2015-03-31/functions/function/invocations" {
			http.NotFound(w, r)
			return
		}
		payload, _ := io.ReadAll(r.Body)
		switch mode {
		case "batch":
			var ev struct {
				Records []struct {
					MessageID string `json:"messageId"`
				}
			}
			_ = json.Unmarshal(payload, &ev)
			if len(ev.Records) == 0 {
				_, _ = io.WriteString(w, `{"batchItemFailures":[]}`)
				return
			}
			_, _ = fmt.Fprintf(w, `{"batchItemFailures":[{"itemIdentifier":%q}]}`, ev.Records[0].MessageID)
		case "echo":
			_, _ = w.Write(payload)
		case "error":
			_, _ = io.WriteString(w, `{"errorMessage":"boom","errorType":"errorString"}`)
		case "crash":
			w.WriteHeader(http.StatusBadGateway)
		case "timeout":
			_, _ = io.WriteString(w, "Task timed out after 1.00 seconds")
		}
	}))
}
