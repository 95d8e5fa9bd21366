package producer_test

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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/producer"
)

// sqsWire is an httptest server speaking SQS's AWS JSON 1.0 protocol for
// SendMessageBatch, so the real SDK client serializes the requests and
// checks the answers' MD5 digests. It refuses what SQS refuses: more than 10
// entries (TooManyEntriesInBatchRequest), none (EmptyBatchRequest), repeated
// entry ids (BatchEntryIdsNotDistinct), a total over 1 MiB
// (BatchRequestTooLong), and a FIFO entry without a group.
type sqsWire struct {
	srv *httptest.Server

	mu sync.Mutex
	// batches are the entries of each accepted call.
	batches [][]wireEntry
	// queues are the QueueUrl of each accepted call.
	queues []string
	// failTimes makes an entry whose body contains the key fail that many
	// times with an SQS-side error (SenderFault false).
	failTimes map[string]int
	// refuse makes an entry whose body contains the key fail as the
	// sender's fault.
	refuse map[string]bool
	// throttle makes the calls whose numbers (from 1) it holds fail as a
	// whole with ThrottlingException, as SQS does above its request rate.
	throttle map[int]bool
	calls    int
	// stored are the entries SQS accepted, in the order it stored them.
	stored []wireEntry
	next   int
}

type wireEntry struct {
	Id                     string
	MessageBody            string
	MessageGroupId         string `json:",omitempty"`
	MessageDeduplicationId string `json:",omitempty"`
	// MessageAttributes count in the batch's size; MessageSystemAttributes
	// (AWSTraceHeader) do not (SendMessageBatch).
	MessageAttributes       map[string]wireAttribute `json:",omitempty"`
	MessageSystemAttributes map[string]wireAttribute `json:",omitempty"`
}

type wireAttribute struct {
	DataType    string
	StringValue string
}

func newSQSWire() (*sqsWire, *sqs.Client) {
	w := &sqsWire{failTimes: map[string]int{}, refuse: map[string]bool{}, throttle: map[int]bool{}}
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

func (w *sqsWire) fault(rw http.ResponseWriter, code, msg string) {
	rw.Header().Set("x-amzn-query-error", code+";Sender")
	rw.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(rw, `{"__type":"com.amazonaws.sqs#%s","message":%q}`, code, msg)
}

func (w *sqsWire) serve(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if r.Header.Get("X-Amz-Target") != "AmazonSQS.SendMessageBatch" {
		w.fault(rw, "InvalidAction", "unexpected "+r.Header.Get("X-Amz-Target"))
		return
	}
	body, _ := io.ReadAll(r.Body)
	var in struct {
		QueueUrl string
		Entries  []wireEntry
	}
	if err := json.Unmarshal(body, &in); err != nil {
		w.fault(rw, "InvalidParameterValue", err.Error())
		return
	}
	total := 0
	ids := map[string]bool{}
	for _, e := range in.Entries {
		total += len(e.MessageBody)
		for name, a := range e.MessageAttributes {
			total += len(name) + len(a.DataType) + len(a.StringValue)
		}
		if ids[e.Id] {
			w.fault(rw, "BatchEntryIdsNotDistinct", "Id "+e.Id+" repeated")
			return
		}
		ids[e.Id] = true
		if strings.HasSuffix(in.QueueUrl, ".fifo") && e.MessageGroupId == "" {
			w.fault(rw, "MissingParameter", "The request must contain the parameter MessageGroupId.")
			return
		}
	}
	switch {
	case len(in.Entries) == 0:
		w.fault(rw, "EmptyBatchRequest", "There should be at least one SendMessageBatchRequestEntry in the request.")
		return
	case len(in.Entries) > producer.MaxBatchEntries:
		w.fault(rw, "TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10.")
		return
	case total > producer.MaxBatchBytes:
		w.fault(rw, "BatchRequestTooLong", "Batch requests cannot be longer than 1048576 bytes.")
		return
	}
	type ok struct{ Id, MessageId, MD5OfMessageBody string }
	type failed struct {
		Id, Code, Message string
		SenderFault       bool
	}
	out := struct {
		Successful []ok
		Failed     []failed
	}{Successful: []ok{}, Failed: []failed{}}
	w.mu.Lock()
	w.calls++
	if w.throttle[w.calls] {
		w.mu.Unlock()
		w.fault(rw, "ThrottlingException", "Rate exceeded")
		return
	}
	w.batches = append(w.batches, in.Entries)
	w.queues = append(w.queues, in.QueueUrl)
	for _, e := range in.Entries {
		if key := w.match(w.refuse, e.MessageBody); key != "" {
			out.Failed = append(out.Failed, failed{Id: e.Id, Code: "InvalidMessageContents", Message: "refused", SenderFault: true})
			continue
		}
		if key := w.matchCount(e.MessageBody); key != "" {
			w.failTimes[key]--
			out.Failed = append(out.Failed, failed{Id: e.Id, Code: "InternalError", Message: "try again"})
			continue
		}
		w.next++
		w.stored = append(w.stored, e)
		sum := md5.Sum([]byte(e.MessageBody))
		out.Successful = append(out.Successful, ok{Id: e.Id, MessageId: fmt.Sprintf("msg-%d", w.next), MD5OfMessageBody: hex.EncodeToString(sum[:])})
	}
	w.mu.Unlock()
	_ = json.NewEncoder(rw).Encode(out)
}

func (w *sqsWire) match(keys map[string]bool, body string) string {
	for k := range keys {
		if strings.Contains(body, k) {
			return k
		}
	}
	return ""
}

func (w *sqsWire) matchCount(body string) string {
	for k, n := range w.failTimes {
		if n > 0 && strings.Contains(body, k) {
			return k
		}
	}
	return ""
}

// groupOrder is the deduplication ids (notification ids) of each message
// group's stored messages, in the order SQS stored them.
func (w *sqsWire) groupOrder() map[string][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]string{}
	for _, e := range w.stored {
		out[e.MessageGroupId] = append(out[e.MessageGroupId], e.MessageDeduplicationId)
	}
	return out
}

func (w *sqsWire) sent() [][]wireEntry {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]wireEntry(nil), w.batches...)
}
