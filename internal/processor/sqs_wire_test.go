package processor_test

import (
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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// sqsWire is an httptest server speaking SQS's AWS JSON 1.0 protocol for the
// two calls the processor makes, so the real SDK client serializes requests
// and parses answers, including faults LocalStack cannot be made to give.
type sqsWire struct {
	srv *httptest.Server

	mu       sync.Mutex
	calls    map[string][]json.RawMessage // by action
	failSend bool                         // SendMessage answers 500
	// maxSendBytes, when set, makes SendMessage refuse larger requests as
	// SQS refuses a message over the queue's MaximumMessageSize.
	maxSendBytes int
	// maxMessageBytes, when set, makes SendMessage refuse a message whose
	// body and attributes (names, types, values) exceed it, as SQS counts
	// against MaximumMessageSize.
	maxMessageBytes int
	// failEntry makes ChangeMessageVisibilityBatch report the entries whose
	// receipt handle it names as failed.
	failEntry map[string]bool
	// failVisibility makes the whole ChangeMessageVisibilityBatch call
	// answer 500.
	failVisibility bool
	// queueAttrs answers GetQueueAttributes by queue URL.
	queueAttrs map[string]map[string]string
}

func newSQSWire(t *testing.T) (*sqsWire, *sqs.Client) {
	t.Helper()
	w := &sqsWire{calls: map[string][]json.RawMessage{}, failEntry: map[string]bool{}}
	w.srv = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.srv.Close)
	client := sqs.New(sqs.Options{
		BaseEndpoint:     aws.String(w.srv.URL),
		Region:           "us-east-1",
		Credentials:      aws.AnonymousCredentials{},
		RetryMaxAttempts: 1,
	})
	return w, client
}

func (w *sqsWire) serve(rw http.ResponseWriter, r *http.Request) {
	action := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	w.calls[action] = append(w.calls[action], body)
	failSend, maxSend, failVis, maxMessage := w.failSend, w.maxSendBytes, w.failVisibility, w.maxMessageBytes
	w.mu.Unlock()
	rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
	switch action {
	case "SendMessage":
		if failSend {
			rw.Header().Set("x-amzn-query-error", "InternalError;Receiver")
			rw.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(rw, `{"__type":"com.amazonaws.sqs#InternalError","message":"injected"}`)
			return
		}
		if maxSend > 0 && len(body) > maxSend {
			rw.Header().Set("x-amzn-query-error", "InvalidParameterValue;Sender")
			rw.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(rw, `{"__type":"com.amazonaws.sqs#InvalidParameterValue","message":"One or more parameters are invalid. Reason: Message must be shorter than 262144 bytes."}`)
			return
		}
		var in struct {
			MessageBody       string
			MessageAttributes map[string]struct{ DataType, StringValue string }
		}
		_ = json.Unmarshal(body, &in)
		size := len(in.MessageBody)
		for name, a := range in.MessageAttributes {
			size += len(name) + len(a.DataType) + len(a.StringValue)
		}
		if maxMessage > 0 && size > maxMessage {
			rw.Header().Set("x-amzn-query-error", "InvalidParameterValue;Sender")
			rw.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(rw, `{"__type":"com.amazonaws.sqs#InvalidParameterValue","message":"One or more parameters are invalid. Reason: Message must be shorter than %d bytes."}`, maxMessage)
			return
		}
		sum := md5.Sum([]byte(in.MessageBody))
		fmt.Fprintf(rw, `{"MessageId":"dlq-%d","MD5OfMessageBody":"%s"}`, len(body), hex.EncodeToString(sum[:]))
	case "ChangeMessageVisibilityBatch":
		if failVis {
			rw.Header().Set("x-amzn-query-error", "InternalError;Receiver")
			rw.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(rw, `{"__type":"com.amazonaws.sqs#InternalError","message":"injected"}`)
			return
		}
		var in struct {
			Entries []struct{ Id, ReceiptHandle string }
		}
		_ = json.Unmarshal(body, &in)
		type entry struct {
			Id          string
			Code        string `json:",omitempty"`
			Message     string `json:",omitempty"`
			SenderFault bool   `json:",omitempty"`
		}
		out := struct{ Successful, Failed []entry }{Successful: []entry{}, Failed: []entry{}}
		w.mu.Lock()
		for _, e := range in.Entries {
			if w.failEntry[e.ReceiptHandle] {
				out.Failed = append(out.Failed, entry{Id: e.Id, Code: "ReceiptHandleIsInvalid", Message: "injected", SenderFault: true})
			} else {
				out.Successful = append(out.Successful, entry{Id: e.Id})
			}
		}
		w.mu.Unlock()
		_ = json.NewEncoder(rw).Encode(out)
	case "GetQueueAttributes":
		var in struct{ QueueUrl string }
		_ = json.Unmarshal(body, &in)
		w.mu.Lock()
		attrs, ok := w.queueAttrs[in.QueueUrl]
		w.mu.Unlock()
		if !ok {
			rw.Header().Set("x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender")
			rw.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(rw, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`)
			return
		}
		_ = json.NewEncoder(rw).Encode(map[string]any{"Attributes": attrs})
	default:
		rw.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(rw, `{"__type":"com.amazonaws.sqs#InvalidAction","message":"unexpected %s"}`, action)
	}
}

func (w *sqsWire) requests(action string) []json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]json.RawMessage(nil), w.calls[action]...)
}
