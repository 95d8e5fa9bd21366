package localenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// RIE is the AWS Lambda Runtime Interface Emulator running one function's
// bootstrap on two free 127.0.0.1 ports, as the tests and make bench use it.
type RIE struct {
	cmd  *exec.Cmd
	url  string
	logs *SyncBuffer
}

// StartRIE runs bin (the aws-lambda-rie binary) with bootstrap (the command
// line of the function) and env added to this process's environment. The
// function's standard output and error are kept (Logs). The emulator is
// killed when this process ends, on Linux (dieWithParent).
func StartRIE(bin string, bootstrap []string, env []string) (*RIE, error) {
	api, err := FreePort()
	if err != nil {
		return nil, err
	}
	rt, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--runtime-interface-emulator-address", "127.0.0.1:" + api, "--runtime-api-address", "127.0.0.1:" + rt}, bootstrap...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	dieWithParent(cmd)
	r := &RIE{cmd: cmd, url: "http://127.0.0.1:" + api + "/2015-03-31/functions/function/invocations", logs: &SyncBuffer{}}
	cmd.Stdout, cmd.Stderr = r.logs, r.logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	return r, nil
}

// Invoke posts ev as the Lambda service would and decodes the partial batch
// response. It returns an error for a function error, with the log tail.
func (r *RIE) Invoke(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	payload, err := json.Marshal(ev)
	if err != nil {
		return resp, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(payload))
	if err != nil {
		return resp, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp, err
	}
	defer res.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(res.Body)
	if res.StatusCode != http.StatusOK || strings.Contains(raw.String(), "errorMessage") || json.Unmarshal(raw.Bytes(), &resp) != nil {
		logs := r.Logs()
		return resp, fmt.Errorf("invoke: %s %s; function logs:\n%s", res.Status, raw.String(), logs[max(0, len(logs)-2000):])
	}
	return resp, nil
}

// InvokeWhenUp invokes ev, retrying while the emulator does not listen yet,
// for at most wait. It returns how long the first answer took from the call.
func (r *RIE) InvokeWhenUp(ctx context.Context, ev events.SQSEvent, wait time.Duration) (events.SQSEventResponse, time.Duration, error) {
	t0 := time.Now()
	for {
		resp, err := r.Invoke(ctx, ev)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Since(t0) > wait {
			return resp, time.Since(t0), err
		}
		time.Sleep(time.Millisecond)
	}
}

// InvokeJSON posts payload, any event as JSON (an EventBridge event, …), as
// the Lambda service would, retrying while the emulator does not listen yet
// for at most wait, and returns the function's answer. A function error
// (HTTP status other than 200, or an errorMessage) is an error, with the
// log tail.
func (r *RIE) InvokeJSON(ctx context.Context, payload []byte, wait time.Duration) ([]byte, error) {
	t0 := time.Now()
	for {
		out, err := r.post(ctx, payload)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Since(t0) > wait {
			return out, err
		}
		time.Sleep(time.Millisecond)
	}
}

func (r *RIE) post(ctx context.Context, payload []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(res.Body)
	if res.StatusCode != http.StatusOK || strings.Contains(raw.String(), "errorMessage") {
		logs := r.Logs()
		return nil, fmt.Errorf("invoke: %s %s; function logs:\n%s", res.Status, raw.String(), logs[max(0, len(logs)-2000):])
	}
	return raw.Bytes(), nil
}

// Pid is the emulator's process id.
func (r *RIE) Pid() int { return r.cmd.Process.Pid }

// Logs returns what the emulator and the function wrote so far.
func (r *RIE) Logs() string { return r.logs.String() }

// Stop kills the emulator and its function.
func (r *RIE) Stop() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call.
func FreePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port, nil
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
