package localenv_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
)

// startFake runs this test binary as the emulator (fakeRIE) with the
// function mode and the extra environment.
func startFake(t *testing.T, mode string, env ...string) *localenv.RIE {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	r, err := localenv.StartRIE(exe, []string{mode, "--flag-of-the-function"}, append([]string{fakeRIEEnv + "=1"}, env...))
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	return r
}

var event = events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", Body: "{}"}, {MessageId: "m-2", Body: "{}"}}}

// TestStartRIERunsTheEmulatorOnLoopback: the emulator gets two distinct
// free 127.0.0.1 ports, the bootstrap's command line after them, this
// process's environment with env added; its output is kept in Logs, and
// InvokeWhenUp waits for it to listen and decodes the function's partial
// batch response.
func TestStartRIERunsTheEmulatorOnLoopback(t *testing.T) {
	t.Parallel()
	r := startFake(t, "batch", "LOCALENV_TEST_VAR=from-env", "LOCALENV_TEST_DELAY_MS=300")
	require.Positive(t, r.Pid())
	resp, took, err := r.InvokeWhenUp(context.Background(), event, 30*time.Second)
	require.NoError(t, err)
	require.GreaterOrEqual(t, took, 250*time.Millisecond, "it waited for the emulator to listen")
	require.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m-1"}}, resp.BatchItemFailures)

	logs := r.Logs()
	require.Contains(t, logs, "bootstrap=batch --flag-of-the-function")
	require.Contains(t, logs, "env=from-env")
	var api, rt string
	for _, f := range strings.Fields(logs) {
		if v, ok := strings.CutPrefix(f, "api="); ok {
			api = v
		}
		if v, ok := strings.CutPrefix(f, "runtime="); ok {
			rt = v
		}
	}
	apiHost, apiPort, err := net.SplitHostPort(api)
	require.NoError(t, err)
	rtHost, rtPort, err := net.SplitHostPort(rt)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", apiHost)
	require.Equal(t, "127.0.0.1", rtHost)
	require.NotEqual(t, apiPort, rtPort)

	out, err := r.InvokeJSON(context.Background(), []byte(`{}`), time.Second)
	require.NoError(t, err, "InvokeJSON answers the function's answer")
	require.JSONEq(t, `{"batchItemFailures":[]}`, string(out))
}

// TestInvokeReportsFunctionErrors: a handler error, an HTTP status other
// than 200 and an answer that is not a batch response are errors naming
// the answer, with the last 2,000 bytes of the function's logs.
func TestInvokeReportsFunctionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, want string }{
		{"error", `200 OK {"errorMessage":"boom","errorType":"errorString"}`},
		{"crash", "502 Bad Gateway"},
		{"timeout", "200 OK Task timed out after 1.00 seconds"},
	} {
		r := startFake(t, tc.mode, "LOCALENV_TEST_LOG_BYTES=5000")
		_, _, err := r.InvokeWhenUp(context.Background(), event, 30*time.Second)
		require.ErrorContains(t, err, "invoke: "+tc.want, tc.mode)
		_, tail, ok := strings.Cut(err.Error(), "function logs:\n")
		require.True(t, ok, tc.mode)
		require.Equal(t, strings.Repeat("x", 2000), tail, "%s: the last 2,000 bytes", tc.mode)

		_, err = r.InvokeJSON(context.Background(), []byte(`{"a":1}`), time.Second)
		if tc.mode == "timeout" {
			require.NoError(t, err, "InvokeJSON takes any answer of 200 without errorMessage")
			continue
		}
		require.ErrorContains(t, err, "invoke: "+tc.want, tc.mode)
		require.True(t, strings.HasSuffix(err.Error(), "function logs:\n"+strings.Repeat("x", 2000)), tc.mode)
	}

	r := startFake(t, "echo", "LOCALENV_TEST_LOG_BYTES=10")
	out, err := r.InvokeJSON(context.Background(), []byte(`{"detail":{"n":1}}`), 30*time.Second)
	require.NoError(t, err)
	require.Equal(t, `{"detail":{"n":1}}`, string(out))
	_, err = r.InvokeJSON(context.Background(), []byte(`{"errorMessage":"the payload's"}`), time.Second)
	require.ErrorContains(t, err, "function logs:\n", "an errorMessage in the answer is an error")
	require.True(t, strings.HasSuffix(err.Error(), "function logs:\n"+r.Logs()), "short logs whole")
}

// TestInvokeGivesUpOnAnEmulatorThatDoesNotListen: while nothing listens,
// the invocations retry for at most wait, then return the refused
// connection; a cancelled context ends them at once; Stop ends the
// emulator.
func TestInvokeGivesUpOnAnEmulatorThatDoesNotListen(t *testing.T) {
	t.Parallel()
	r := startFake(t, "echo", "LOCALENV_TEST_DELAY_MS=60000")
	_, took, err := r.InvokeWhenUp(context.Background(), event, 200*time.Millisecond)
	require.True(t, errors.Is(err, syscall.ECONNREFUSED), "%v", err)
	require.GreaterOrEqual(t, took, 200*time.Millisecond)
	require.Less(t, took, 20*time.Second)
	t0 := time.Now()
	_, err = r.InvokeJSON(context.Background(), []byte(`{}`), 200*time.Millisecond)
	require.True(t, errors.Is(err, syscall.ECONNREFUSED), "%v", err)
	require.GreaterOrEqual(t, time.Since(t0), 200*time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = r.InvokeWhenUp(ctx, event, time.Minute)
	require.ErrorIs(t, err, context.Canceled)
	_, err = r.InvokeJSON(ctx, []byte(`{}`), time.Minute)
	require.ErrorIs(t, err, context.Canceled)

	up := startFake(t, "echo")
	_, err = up.InvokeJSON(context.Background(), []byte(`{}`), 30*time.Second)
	require.NoError(t, err)
	up.Stop()
	_, err = up.InvokeJSON(context.Background(), []byte(`{}`), 0)
	require.Error(t, err, "stopped: nothing answers (refused, or EOF on a kept-alive connection)")
}

func TestStartRIEFailsWithoutTheBinary(t *testing.T) {
	t.Parallel()
	_, err := localenv.StartRIE("/nonexistent/aws-lambda-rie", []string{"bootstrap"}, nil)
	require.ErrorContains(t, err, "start /nonexistent/aws-lambda-rie")
}

func TestFreePortIsFreeOnLoopback(t *testing.T) {
	t.Parallel()
	port, err := localenv.FreePort()
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	require.NoError(t, err, "free: it can be listened on")
	require.NoError(t, l.Close())
}

func TestSyncBufferKeepsEveryWrite(t *testing.T) {
	t.Parallel()
	var b localenv.SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				n, err := b.Write([]byte("ab"))
				if n != 2 || err != nil {
					panic("short write")
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, strings.Repeat("ab", 800), b.String())
}
