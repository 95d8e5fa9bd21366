package deadletter

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// sqsWire is an httptest server speaking SQS's AWS JSON 1.0 protocol for
// the calls of this package, with a simulated clock so that visibility
// timeouts run out without sleeping: each ReceiveMessage that returns
// messages takes receiveCost of simulated time, an empty one its
// WaitTimeSeconds. A received message is hidden for the request's
// VisibilityTimeout and then received again with a new receipt handle, as
// SQS does; a receipt handle stops working once a newer one is issued.
// With fifo set it returns no message of a message group while an earlier
// one of that group is hidden, as a FIFO queue does ("Using the message
// group ID with Amazon SQS FIFO queues"); each message's group is its
// index modulo groups. It refuses what SQS refuses: VisibilityTimeout over
// 43,200 and more than 10 messages or batch entries.
type sqsWire struct {
	srv *httptest.Server

	mu          sync.Mutex
	now         time.Time
	receiveCost time.Duration
	msgs        []*wireMsg
	receives    int
	// failDelete makes DeleteMessage fail with an SQS-side error.
	failDelete bool
	fifo       bool
	groups     int
	sent       []string
}

type wireMsg struct {
	id, body, handle string
	group            int
	hiddenUntil      time.Time
	deleted          bool
}

func newSQSWire(bodies ...string) (*sqsWire, *sqs.Client) {
	w := &sqsWire{now: time.Unix(1_800_000_000, 0), receiveCost: 200 * time.Millisecond}
	for i, b := range bodies {
		w.msgs = append(w.msgs, &wireMsg{id: fmt.Sprintf("dl-%03d", i), body: b, group: i})
	}
	w.srv = httptest.NewServer(http.HandlerFunc(w.serve))
	client := sqs.New(sqs.Options{
		BaseEndpoint:     aws.String(w.srv.URL),
		Region:           "us-east-1",
		Credentials:      aws.AnonymousCredentials{},
		RetryMaxAttempts: 1,
	})
	return w, client
}

func (w *sqsWire) Close() { w.srv.Close() }

func fault(rw http.ResponseWriter, status int, code, msg string) {
	rw.Header().Set("x-amzn-query-error", code+";Sender")
	rw.WriteHeader(status)
	fmt.Fprintf(rw, `{"__type":"com.amazonaws.sqs#%s","message":%q}`, code, msg)
}

func (w *sqsWire) serve(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch r.Header.Get("X-Amz-Target") {
	case "AmazonSQS.ReceiveMessage":
		var in struct {
			MaxNumberOfMessages int
			VisibilityTimeout   int
			WaitTimeSeconds     int
		}
		_ = json.Unmarshal(body, &in)
		if in.MaxNumberOfMessages > 10 || in.VisibilityTimeout > 43200 {
			fault(rw, 400, "InvalidParameterValue", "out of range")
			return
		}
		w.receives++
		type msg struct{ MessageId, ReceiptHandle, MD5OfBody, Body string }
		out := struct{ Messages []msg }{Messages: []msg{}}
		blocked := map[int]bool{}
		for _, m := range w.msgs {
			if w.fifo && !m.deleted && w.now.Before(m.hiddenUntil) {
				blocked[m.group%w.groups] = true
			}
		}
		for _, m := range w.msgs {
			if len(out.Messages) == max(in.MaxNumberOfMessages, 1) {
				break
			}
			if m.deleted || w.now.Before(m.hiddenUntil) || (w.fifo && blocked[m.group%w.groups]) {
				continue
			}
			m.handle = fmt.Sprintf("rh-%s-%d", m.id, w.receives)
			m.hiddenUntil = w.now.Add(time.Duration(in.VisibilityTimeout) * time.Second)
			sum := md5.Sum([]byte(m.body))
			out.Messages = append(out.Messages, msg{m.id, m.handle, hex.EncodeToString(sum[:]), m.body})
		}
		if len(out.Messages) == 0 {
			w.now = w.now.Add(time.Duration(in.WaitTimeSeconds) * time.Second)
		} else {
			w.now = w.now.Add(w.receiveCost)
		}
		_ = json.NewEncoder(rw).Encode(out)
	case "AmazonSQS.GetQueueAttributes":
		visible, hidden := w.counts()
		_ = json.NewEncoder(rw).Encode(map[string]any{"Attributes": map[string]string{
			"ApproximateNumberOfMessages": strconv.Itoa(visible), "ApproximateNumberOfMessagesNotVisible": strconv.Itoa(hidden),
		}})
	case "AmazonSQS.ChangeMessageVisibilityBatch":
		var in struct {
			Entries []struct {
				Id, ReceiptHandle string
				VisibilityTimeout int
			}
		}
		_ = json.Unmarshal(body, &in)
		if len(in.Entries) > 10 {
			fault(rw, 400, "TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10.")
			return
		}
		type entry struct{ Id string }
		type failed struct {
			Id, Code, Message string
			SenderFault       bool
		}
		out := struct {
			Successful []entry
			Failed     []failed
		}{[]entry{}, []failed{}}
		for _, e := range in.Entries {
			if m := w.byHandle(e.ReceiptHandle); m != nil {
				m.hiddenUntil = w.now.Add(time.Duration(e.VisibilityTimeout) * time.Second)
				out.Successful = append(out.Successful, entry{e.Id})
				continue
			}
			out.Failed = append(out.Failed, failed{e.Id, "ReceiptHandleIsInvalid", "The input receipt handle is invalid.", true})
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
		if w.failDelete {
			rw.Header().Set("x-amzn-query-error", "InternalError;Receiver")
			rw.WriteHeader(500)
			fmt.Fprint(rw, `{"__type":"com.amazonaws.sqs#InternalError","message":"We encountered an internal error."}`)
			return
		}
		m := w.byHandle(in.ReceiptHandle)
		if m == nil {
			fault(rw, 400, "ReceiptHandleIsInvalid", "The input receipt handle is invalid.")
			return
		}
		m.deleted = true
		_, _ = rw.Write([]byte("{}"))
	default:
		fault(rw, 400, "InvalidAction", "unexpected "+r.Header.Get("X-Amz-Target"))
	}
}

func (w *sqsWire) byHandle(h string) *wireMsg {
	for _, m := range w.msgs {
		if !m.deleted && m.handle == h {
			return m
		}
	}
	return nil
}

// state returns how many messages are visible and hidden now, and not deleted.
func (w *sqsWire) state() (visible, hidden int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts()
}

// counts is state for a caller that holds w.mu.
func (w *sqsWire) counts() (visible, hidden int) {
	for _, m := range w.msgs {
		switch {
		case m.deleted:
		case w.now.Before(m.hiddenUntil):
			hidden++
		default:
			visible++
		}
	}
	return visible, hidden
}
