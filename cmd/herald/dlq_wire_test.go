package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// dlqWire is an httptest server speaking SQS's AWS JSON 1.0 protocol for
// the calls of the dlq commands, holding one dead-letter queue ("/dlq") and
// recording what is sent to the main queue. Visibility is kept simply: a
// received message is hidden until released (visibility timeout 0) or
// deleted. onSend runs before each SendMessage is answered. With fifo the
// letters are one message group: none is returned while one is held, as a
// FIFO queue does.
type dlqWire struct {
	srv    *httptest.Server
	mu     sync.Mutex
	msgs   []*dlqMsg
	sent   []string
	onSend func()
	fifo   bool
}

type dlqMsg struct {
	id, body, handle string
	hidden, deleted  bool
	receives         int
}

func newDLQWire(t *testing.T, bodies ...string) *dlqWire {
	w := &dlqWire{}
	for i, b := range bodies {
		w.msgs = append(w.msgs, &dlqMsg{id: fmt.Sprintf("dl-%03d", i), body: b})
	}
	w.srv = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.srv.Close)
	// The SDK's default chain, as herald reads it, pointed at the fake.
	t.Setenv("AWS_ENDPOINT_URL", w.srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	return w
}

func (w *dlqWire) serve(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
	body, _ := io.ReadAll(r.Body)
	target := r.Header.Get("X-Amz-Target")
	if target == "AmazonSQS.SendMessage" && w.onSend != nil {
		w.onSend()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch target {
	case "AmazonSQS.ReceiveMessage":
		type msg struct{ MessageId, ReceiptHandle, MD5OfBody, Body string }
		out := struct{ Messages []msg }{Messages: []msg{}}
		if _, hidden := w.countsLocked(); w.fifo && hidden > 0 {
			_ = json.NewEncoder(rw).Encode(out)
			return
		}
		for _, m := range w.msgs {
			if len(out.Messages) == 10 {
				break
			}
			if m.hidden || m.deleted {
				continue
			}
			m.receives++
			m.hidden, m.handle = true, fmt.Sprintf("rh-%s-%d", m.id, m.receives)
			sum := md5.Sum([]byte(m.body))
			out.Messages = append(out.Messages, msg{m.id, m.handle, hex.EncodeToString(sum[:]), m.body})
		}
		_ = json.NewEncoder(rw).Encode(out)
	case "AmazonSQS.GetQueueAttributes":
		visible, hidden := w.countsLocked()
		_ = json.NewEncoder(rw).Encode(map[string]any{"Attributes": map[string]string{
			"ApproximateNumberOfMessages": fmt.Sprint(visible), "ApproximateNumberOfMessagesNotVisible": fmt.Sprint(hidden),
		}})
	case "AmazonSQS.ChangeMessageVisibilityBatch":
		var in struct {
			Entries []struct{ Id, ReceiptHandle string }
		}
		_ = json.Unmarshal(body, &in)
		type entry struct{ Id string }
		out := struct {
			Successful []entry
			Failed     []entry
		}{[]entry{}, []entry{}}
		for _, e := range in.Entries {
			for _, m := range w.msgs {
				if m.handle == e.ReceiptHandle && !m.deleted {
					m.hidden = false
				}
			}
			out.Successful = append(out.Successful, entry{e.Id})
		}
		_ = json.NewEncoder(rw).Encode(out)
	case "AmazonSQS.SendMessage":
		var in struct{ MessageBody string }
		_ = json.Unmarshal(body, &in)
		w.sent = append(w.sent, in.MessageBody)
		sum := md5.Sum([]byte(in.MessageBody))
		_ = json.NewEncoder(rw).Encode(map[string]string{"MessageId": fmt.Sprintf("new-%d", len(w.sent)), "MD5OfMessageBody": hex.EncodeToString(sum[:])})
	case "AmazonSQS.DeleteMessage":
		var in struct{ ReceiptHandle string }
		_ = json.Unmarshal(body, &in)
		for _, m := range w.msgs {
			if m.handle == in.ReceiptHandle {
				m.deleted = true
			}
		}
		_, _ = rw.Write([]byte("{}"))
	default:
		rw.Header().Set("x-amzn-query-error", "InvalidAction;Sender")
		rw.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(rw, `{"__type":"com.amazonaws.sqs#InvalidAction","message":"unexpected %s"}`, target)
	}
}

func (w *dlqWire) countsLocked() (visible, hidden int) {
	for _, m := range w.msgs {
		switch {
		case m.deleted:
		case m.hidden:
			hidden++
		default:
			visible++
		}
	}
	return visible, hidden
}

// heraldCtx is herald with a context of the test's.
func heraldCtx(ctx context.Context, args ...string) result {
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" },
		now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	code := execute(ctx, e, args)
	return result{code, out.String(), errOut.String()}
}

// Ctrl-C during a redrive stops before the next dead letter; the command
// must then not exit 0 as if the selection had been redriven.
func TestDLQRedriveInterruptedExitsNonZero(t *testing.T) {
	w := newDLQWire(t, `{"id":"a-1"}`, `{"id":"a-2"}`, `{"id":"a-3"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.onSend = cancel // the signal arrives while the first letter is sent
	r := heraldCtx(ctx, "dlq", "redrive", "--all", "--dlq-url", w.srv.URL+"/dlq", "--queue-url", w.srv.URL+"/q")
	require.Len(t, w.sent, 1, "%+v", r)
	require.Contains(t, r.stdout, "sent 1, skipped 2, failed 0")
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "interrupted")
	w.mu.Lock()
	visible, hidden := w.countsLocked()
	w.mu.Unlock()
	require.Equal(t, 2, visible, "the letters not redriven are visible again")
	require.Zero(t, hidden)
}

// A FIFO dead-letter queue returns no more of a message group while the
// scan holds some of it: with 13 letters in one group, ls and redrive see
// 10. They must say the view is partial and exit 1, not report it as all.
func TestDLQOnFIFOQueueSaysWhenItReadOnlyPart(t *testing.T) {
	var bodies []string
	for i := range 13 {
		bodies = append(bodies, fmt.Sprintf(`{"id":"f-%02d"}`, i))
	}
	w := newDLQWire(t, bodies...)
	w.fifo = true
	dlq, queue := "--dlq-url="+w.srv.URL+"/dlq.fifo", "--queue-url="+w.srv.URL+"/q.fifo"
	ctx := context.Background()

	r := heraldCtx(ctx, "dlq", "ls", dlq)
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stderr, "about 3 more")
	require.Contains(t, r.stderr, "10 of 10 dead letters shown")
	w.mu.Lock()
	visible, _ := w.countsLocked()
	w.mu.Unlock()
	require.Equal(t, 13, visible, "nothing consumed")

	r = heraldCtx(ctx, "dlq", "redrive", "--all", dlq, queue)
	require.Equal(t, exitFailed, r.code, "%+v", r)
	require.Contains(t, r.stdout, "sent 10, skipped 0, failed 0")
	require.Contains(t, r.stderr, "about 3 more")

	r = heraldCtx(ctx, "dlq", "redrive", "--all", dlq, queue)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "sent 3, skipped 0, failed 0")
	require.Len(t, w.sent, 13)
}
