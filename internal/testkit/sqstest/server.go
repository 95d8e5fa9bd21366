// Package sqstest is an httptest server speaking SQS's AWS JSON 1.0 wire
// protocol (X-Amz-Target "AmazonSQS.<Action>", application/x-amz-json-1.0),
// for unit tests that need the real AWS SDK v2 client to serialize requests
// and parse answers, including faults LocalStack cannot be made to give.
//
// It holds queues and messages in memory and answers SendMessage,
// SendMessageBatch, ReceiveMessage (long polling when a test asks for it:
// [Server.LongPoll]), DeleteMessage, DeleteMessageBatch,
// ChangeMessageVisibilityBatch, GetQueueAttributes (the queue's
// attributes, and ApproximateNumberOfMessages and
// ApproximateNumberOfMessagesNotVisible counted now), GetQueueUrl (the
// queue whose URL's last path segment is the name), PurgeQueue (every
// message, visible or in flight, deleted at once), CreateQueue (a queue at
// the server's URL, path /AccountID/name) and DeleteQueue. On a FIFO queue a
// receive returns no message of a message group while an earlier one of
// that group is in flight ("Using the message group ID with Amazon SQS FIFO
// queues", SQS Developer Guide). Like SQS it rejects what SQS rejects (Amazon SQS API
// Reference and Developer Guide, "Amazon SQS quotas"):
//   - a batch with no entries (EmptyBatchRequest), more than 10 entries
//     (TooManyEntriesInBatchRequest), duplicate entry ids
//     (BatchEntryIdsNotDistinct) or an id that is not 1–80 alphanumeric,
//     hyphen or underscore characters (InvalidBatchEntryId); a
//     SendMessageBatch of more than 1 MiB in all (BatchRequestTooLong), and
//     each of its entries as SendMessage (the entry Failed);
//   - a CreateQueue of a name that is not 1–80 alphanumeric, hyphen or
//     underscore characters, or whose ".fifo" ending does not match
//     FifoQueue; an attribute CreateQueue does not know
//     (InvalidAttributeName) or a number out of its range
//     (InvalidAttributeValue); a RedrivePolicy whose dead-letter target is
//     not a queue or whose maxReceiveCount is not 1–1000; a name in use
//     with other attributes (QueueAlreadyExists) or deleted less than 60 s
//     before (QueueDeletedRecently);
//   - a visibility timeout outside 0–43,200 s, or one that would end more
//     than 12 hours after the message's receive (InvalidParameterValue);
//   - an empty receipt handle, or one of a message no longer in flight
//     (ReceiptHandleIsInvalid);
//   - MaxNumberOfMessages outside 1–10, WaitTimeSeconds outside 0–20;
//   - a message over the queue's MaximumMessageSize (body plus attribute
//     names, types and values; 1 MiB by default), an empty body, characters
//     outside the allowed set in the body or a String or Number
//     attribute's value, more than 10 message attributes;
//   - on a FIFO queue, a send without MessageGroupId or without
//     MessageDeduplicationId (no content-based deduplication here), and on
//     a standard queue a MessageDeduplicationId;
//   - a queue URL or name it does not hold (QueueDoesNotExist);
//   - a PurgeQueue of a queue purged less than 60 s before
//     (PurgeQueueInProgress, HTTP 403).
//
// Its clock is the wall clock unless a test sets one: [Server.SetNow], or
// [Server.SetReceiveClock], a simulated clock that stands still except that
// each ReceiveMessage moves it on, so visibility timeouts run out without
// sleeping. [Server.OnSend] runs a test's hook before each SendMessage.
//
// Each message stored in a FIFO queue gets a SequenceNumber, growing with
// each message stored, returned by the send and by ReceiveMessage. Faults
// after the messages are stored give an answer the caller cannot trust:
// [Server.GarbleDigest] (a wrong MD5OfMessageBody), [Server.CutAfterStore]
// (the connection closed, no answer) and [Server.StallAfterStore] (no
// answer before the caller's deadline).
//
// Receipt handles the server did not issue (a test's hand-made
// events.SQSMessage) are accepted for visibility changes and deletes as long
// as they are not empty, so processor tests need not receive first.
package sqstest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/testkit/awstest"
)

// SQS limits the server enforces (Amazon SQS Developer Guide, "Amazon SQS
// quotas", and the API Reference of each action).
const (
	MaxBatchEntries           = 10
	MaxVisibilityTimeout      = 43200 // seconds
	MaxWaitTimeSeconds        = 20
	MaxMessageAttributes      = 10
	DefaultMaximumMessageSize = 1 << 20 // bytes, since 2025
	defaultVisibilityTimeout  = 30      // seconds
)

// PurgeInterval is how often SQS allows a PurgeQueue of one queue (API
// Reference, PurgeQueue).
const PurgeInterval = 60 * time.Second

// Server is an in-memory SQS. Its exported fault fields may be set before
// or between calls; they are read under its lock.
type Server struct {
	srv *httptest.Server

	mu     sync.Mutex
	calls  map[string][]json.RawMessage
	queues map[string]*queue
	seq    int
	now    func() time.Time
	// simNow and receiveCost are the simulated clock of SetReceiveClock;
	// simulated is false while the clock is now.
	simulated   bool
	simNow      time.Time
	receiveCost time.Duration
	onSend      func()
	// longPoll makes an empty receive wait (LongPoll); sent is closed and
	// replaced at each message stored, to wake the receives waiting.
	longPoll bool
	sent     chan struct{}
	// deleted is when each deleted queue's name was deleted.
	deleted map[string]time.Time

	// FailAction makes each call of the named actions answer 500
	// InternalError.
	failAction map[string]bool
	// failHandle makes batch entries naming the receipt handle fail with
	// ReceiptHandleIsInvalid.
	failHandle map[string]bool
	// failMessage makes entries of an action for a stored message fail, by
	// action and message id.
	failMessage map[string]map[string]bool
	// afterStore is the fault of an action whose messages are stored but
	// whose answer cannot be trusted (GarbleDigest, CutAfterStore,
	// StallAfterStore).
	afterStore map[string]storedFault
	// failSend makes a SendMessage whose body holds one of these fail.
	failSend []string
}

// storedFault is what happens to the answer of a call whose messages were
// stored.
type storedFault struct {
	kind   string // "garble", "cut" or "stall"
	stored func() // for "stall": run once the messages are stored
}

type queue struct {
	url   string
	attrs map[string]string
	msgs  []*message
	// purgedAt is when PurgeQueue last emptied the queue; zero for never.
	purgedAt time.Time
}

type message struct {
	id, body      string
	handle        string // the current receipt handle; "" before any receive
	attrs         map[string]string
	msgAttrs      map[string]MessageAttribute
	visibleAt     time.Time
	receivedAt    time.Time
	receiveCount  int
	deduplication string
	group         string
}

// MessageAttribute is a message attribute on the wire.
type MessageAttribute struct {
	DataType    string
	StringValue *string `json:",omitempty"`
	BinaryValue []byte  `json:",omitempty"`
}

// New starts a server, closed when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		calls:      map[string][]json.RawMessage{},
		queues:     map[string]*queue{},
		now:        time.Now,
		failAction: map[string]bool{},
		failHandle: map[string]bool{},
		sent:       make(chan struct{}),
		deleted:    map[string]time.Time{},

		failMessage: map[string]map[string]bool{},
		afterStore:  map[string]storedFault{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Client returns a real SDK client for the server, without SDK retries so
// that each fault reaches the code under test once.
func (s *Server) Client() *sqs.Client {
	return sqs.NewFromConfig(awstest.Config(s.srv.URL))
}

// URL is the server's endpoint, for an aws.Config's BaseEndpoint.
func (s *Server) URL() string { return s.srv.URL }

// SetNow replaces the server's clock (visibility timeouts).
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// SetReceiveClock makes the server's clock a simulated one starting at
// start: it moves only when a ReceiveMessage is answered, by receiveCost
// when the receive returns messages and by the request's WaitTimeSeconds
// when it returns none (a long poll that waited its time out).
func (s *Server) SetReceiveClock(start time.Time, receiveCost time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.simulated, s.simNow, s.receiveCost = true, start, receiveCost
	s.now = func() time.Time { return s.simNow }
}

// Now is the server's clock.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now()
}

// LongPoll makes each later ReceiveMessage with a WaitTimeSeconds that
// finds no message wait, as SQS's long polling does, until a message is
// stored, its WaitTimeSeconds pass or the client gives up, and then look
// again. Off by default, so that a test's receive from an empty queue
// answers at once; not with SetReceiveClock, whose clock waits for no one.
func (s *Server) LongPoll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.longPoll = true
}

// OnSend sets hook to run before each SendMessage is answered, outside the
// server's lock (a test may cancel its context there); nil removes it.
func (s *Server) OnSend(hook func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onSend = hook
}

// AddQueue creates the queue url (a FIFO queue when it ends in ".fifo")
// with attrs over the defaults (QueueArn, VisibilityTimeout 30,
// MaximumMessageSize 1 MiB) and returns url.
func (s *Server) AddQueue(url string, attrs map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := url[strings.LastIndex(url, "/")+1:]
	q := &queue{url: url, attrs: map[string]string{
		"QueueArn":           "arn:aws:sqs:us-east-1:123456789012:" + name,
		"VisibilityTimeout":  strconv.Itoa(defaultVisibilityTimeout),
		"MaximumMessageSize": strconv.Itoa(DefaultMaximumMessageSize),
	}}
	if strings.HasSuffix(url, ".fifo") {
		q.attrs["FifoQueue"] = "true"
	}
	maps.Copy(q.attrs, attrs)
	s.queues[url] = q
	return url
}

// Put stores a visible message in queue url as if sent at sentAt, with
// msgAttrs, and returns its message id.
func (s *Server) Put(url, body string, sentAt time.Time, msgAttrs map[string]MessageAttribute) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[url]
	if q == nil {
		panic("sqstest: Put to unknown queue " + url)
	}
	return s.put(q, body, sentAt, msgAttrs, "", "")
}

// PutInGroup stores a visible message of message group group in the FIFO
// queue url, as Put does, with its message id as deduplication id.
func (s *Server) PutInGroup(url, group, body string, sentAt time.Time, msgAttrs map[string]MessageAttribute) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[url]
	if q == nil || q.attrs["FifoQueue"] != "true" {
		panic("sqstest: PutInGroup to a queue that is not a FIFO queue: " + url)
	}
	id := s.put(q, body, sentAt, msgAttrs, group, "")
	q.msgs[len(q.msgs)-1].deduplication = id
	return id
}

func (s *Server) put(q *queue, body string, sentAt time.Time, msgAttrs map[string]MessageAttribute, group, dedup string) string {
	s.seq++
	m := &message{
		id:            fmt.Sprintf("00000000-0000-4000-8000-%012d", s.seq),
		body:          body,
		attrs:         map[string]string{"SentTimestamp": strconv.FormatInt(sentAt.UnixMilli(), 10)},
		msgAttrs:      msgAttrs,
		group:         group,
		deduplication: dedup,
	}
	if group != "" {
		m.attrs["MessageGroupId"] = group
	}
	if q.attrs["FifoQueue"] == "true" {
		m.attrs["SequenceNumber"] = sequenceNumber(s.seq)
	}
	q.msgs = append(q.msgs, m)
	close(s.sent)
	s.sent = make(chan struct{})
	return m.id
}

// sequenceNumber is the SequenceNumber of the n-th message stored: like
// SQS's, a 20-digit decimal that grows with each message stored in any
// queue ("large, non-consecutive number", SQS Developer Guide, "Amazon SQS
// FIFO queue key terms"; SQS numbers exceed 2^64, as these do).
func sequenceNumber(n int) string { return fmt.Sprintf("188494964600%08d", n) }

// Message is a stored message as a test sees it.
type Message struct {
	ID, Body     string
	Attributes   map[string]string
	MsgAttrs     map[string]MessageAttribute
	ReceiveCount int
	// VisibleAt is when the message can next be received.
	VisibleAt time.Time
}

// MoveByRedrivePolicy moves message id from queue from to queue to as a
// redrive policy does after maxReceiveCount receives: the same message id,
// body and message attributes; SentTimestamp kept on a standard queue and
// reset to now on a FIFO queue (SQS Developer Guide, "Setting-up
// dead-letter queue retention"); the system attribute
// DeadLetterQueueSourceArn set to from's ARN; visible, not yet received.
// On a FIFO queue the moved message is stored anew: a new SequenceNumber
// of the dead-letter queue, as LocalStack gives it (SQS documents that the
// deduplication id becomes the message id and that SentTimestamp is reset,
// and says nothing of the sequence number: herald's order does not rely on
// it being kept).
func (s *Server) MoveByRedrivePolicy(from, to, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	src, dst := s.queues[from], s.queues[to]
	i := slices.IndexFunc(src.msgs, func(m *message) bool { return m.id == id })
	if i < 0 {
		panic("sqstest: MoveByRedrivePolicy of a message not in " + from)
	}
	m := src.msgs[i]
	src.msgs = slices.Delete(src.msgs, i, i+1)
	attrs := map[string]string{"SentTimestamp": m.attrs["SentTimestamp"], "DeadLetterQueueSourceArn": src.attrs["QueueArn"]}
	if dst.attrs["FifoQueue"] == "true" {
		attrs["SentTimestamp"] = strconv.FormatInt(s.now().UnixMilli(), 10)
		attrs["MessageGroupId"] = m.group
		s.seq++
		attrs["SequenceNumber"] = sequenceNumber(s.seq)
	}
	dst.msgs = append(dst.msgs, &message{id: m.id, body: m.body, attrs: attrs, msgAttrs: m.msgAttrs, group: m.group, deduplication: m.deduplication})
}

// Counts returns how many of queue url's messages are visible and how many
// are in flight now.
func (s *Server) Counts(url string) (visible, inFlight int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts(s.queues[url])
}

func (s *Server) counts(q *queue) (visible, inFlight int) {
	now := s.now()
	for _, m := range q.msgs {
		if now.Before(m.visibleAt) {
			inFlight++
		} else {
			visible++
		}
	}
	return visible, inFlight
}

// Messages returns queue url's messages in send order.
func (s *Server) Messages(url string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.queues[url].msgs {
		out = append(out, Message{ID: m.id, Body: m.body, Attributes: maps.Clone(m.attrs), MsgAttrs: maps.Clone(m.msgAttrs), ReceiveCount: m.receiveCount, VisibleAt: m.visibleAt})
	}
	return out
}

// Requests returns the JSON request bodies of action's calls, in order.
func (s *Server) Requests(action string) []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls[action])
}

// FailAction makes every later call of action answer 500 InternalError.
func (s *Server) FailAction(action string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAction[action] = true
}

// FailReceiptHandle makes every later batch entry naming handle fail with
// ReceiptHandleIsInvalid.
func (s *Server) FailReceiptHandle(handle string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failHandle[handle] = true
}

// FailMessage makes every later entry of action (DeleteMessageBatch or
// ChangeMessageVisibilityBatch) for the stored message id fail with
// InternalError, as SQS reports a server-side fault of one entry; for
// DeleteMessage the call answers 500 InternalError.
func (s *Server) FailMessage(action, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failMessage[action] == nil {
		s.failMessage[action] = map[string]bool{}
	}
	s.failMessage[action][id] = true
}

// FailSendContaining makes every later SendMessage whose message body
// contains part answer 500 InternalError, storing nothing; other sends go
// on.
func (s *Server) FailSendContaining(part string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failSend = append(s.failSend, part)
}

// sendBody is the MessageBody of a SendMessage request.
func sendBody(request []byte) string {
	var in struct{ MessageBody string }
	_ = json.Unmarshal(request, &in)
	return in.MessageBody
}

// GarbleDigest makes every later SendMessage or SendMessageBatch (action)
// store its messages and answer with an MD5OfMessageBody that is not the
// body's: the SDK then reports the call failed (checksum validation)
// although the queue holds the messages.
func (s *Server) GarbleDigest(action string) { s.setAfterStore(action, storedFault{kind: "garble"}) }

// CutAfterStore makes every later call of action store its messages and
// then close the connection without an answer, as a network cut after the
// request reached SQS does.
func (s *Server) CutAfterStore(action string) { s.setAfterStore(action, storedFault{kind: "cut"}) }

// StallAfterStore makes every later call of action store its messages,
// run stored (a test cancels its context there; nil for none), and give no
// answer until the client gives up: an answer later than the caller's
// deadline.
func (s *Server) StallAfterStore(action string, stored func()) {
	s.setAfterStore(action, storedFault{kind: "stall", stored: stored})
}

func (s *Server) setAfterStore(action string, f storedFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.afterStore[action] = f
}

// garbled is a send's answer out with each MD5OfMessageBody replaced by the
// digest of another body.
func garbled(out any) any {
	wrong := md5Hex("not the body sent")
	switch o := out.(type) {
	case map[string]string:
		o["MD5OfMessageBody"] = wrong
	default:
		b, _ := json.Marshal(out)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		if ok, _ := m["Successful"].([]any); ok != nil {
			for _, e := range ok {
				e.(map[string]any)["MD5OfMessageBody"] = wrong
			}
		}
		return m
	}
	return out
}

// apiError is an SQS error answer: code is the AWS JSON __type's shape name,
// query the awsQueryCompatible code the SDK reports as ErrorCode.
type apiError struct {
	status      int
	code, query string
	msg         string
}

func senderFault(code, query, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: code, query: query, msg: fmt.Sprintf(format, args...)}
}

func invalidParameter(format string, args ...any) *apiError {
	return senderFault("InvalidParameterValue", "InvalidParameterValue", format, args...)
}

func (s *Server) serve(rw http.ResponseWriter, r *http.Request) {
	action := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	body, _ := io.ReadAll(r.Body)
	rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
	s.mu.Lock()
	hook := s.onSend
	s.mu.Unlock()
	if action == "SendMessage" && hook != nil {
		hook()
	}
	s.mu.Lock()
	s.calls[action] = append(s.calls[action], body)
	out, aerr := s.do(action, body)
	if action == "ReceiveMessage" && aerr == nil && s.longPoll && !s.simulated {
		out = s.waitForMessages(r.Context(), action, body, out)
	}
	fault, faulty := s.afterStore[action]
	s.mu.Unlock()
	if faulty && aerr == nil {
		switch fault.kind {
		case "garble":
			out = garbled(out)
		case "cut":
			if conn, _, err := http.NewResponseController(rw).Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		case "stall":
			if fault.stored != nil {
				fault.stored()
			}
			<-r.Context().Done() // the client gave up: it never reads an answer
			return
		}
	}
	if aerr != nil {
		rw.Header().Set("x-amzn-query-error", aerr.query+";"+map[bool]string{true: "Sender", false: "Receiver"}[aerr.status < 500])
		rw.WriteHeader(aerr.status)
		_ = json.NewEncoder(rw).Encode(map[string]string{"__type": "com.amazonaws.sqs#" + aerr.code, "message": aerr.msg})
		return
	}
	_ = json.NewEncoder(rw).Encode(out)
}

// waitForMessages is a long poll: while the receive's answer out has no
// message and its WaitTimeSeconds have not passed, it waits for a message
// to be stored and receives again. Called and returns with s.mu held.
func (s *Server) waitForMessages(ctx context.Context, action string, body []byte, out any) any {
	var in struct{ WaitTimeSeconds int }
	_ = json.Unmarshal(body, &in)
	timer := time.NewTimer(time.Duration(in.WaitTimeSeconds) * time.Second)
	defer timer.Stop()
	for len(out.(map[string]any)["Messages"].([]receivedMessage)) == 0 {
		sent := s.sent
		s.mu.Unlock()
		select {
		case <-sent:
		case <-timer.C:
			s.mu.Lock()
			return out
		case <-ctx.Done():
			s.mu.Lock()
			return out
		}
		s.mu.Lock()
		next, aerr := s.do(action, body)
		if aerr != nil {
			return out
		}
		out = next
	}
	return out
}

func (s *Server) do(action string, body []byte) (any, *apiError) {
	if s.failAction[action] || action == "SendMessage" && slices.ContainsFunc(s.failSend, func(part string) bool { return strings.Contains(sendBody(body), part) }) {
		return nil, &apiError{status: http.StatusInternalServerError, code: "InternalError", query: "InternalError", msg: "injected"}
	}
	var common struct{ QueueUrl, QueueName string }
	if err := json.Unmarshal(body, &common); err != nil {
		return nil, senderFault("InvalidParameterValue", "InvalidParameterValue", "malformed request: %v", err)
	}
	switch action {
	case "GetQueueUrl":
		return s.getQueueURL(common.QueueName)
	case "CreateQueue":
		return s.createQueue(body)
	}
	q := s.queues[common.QueueUrl]
	switch {
	case action != "SendMessage" && action != "SendMessageBatch" && action != "ReceiveMessage" && action != "DeleteMessage" && action != "DeleteMessageBatch" &&
		action != "ChangeMessageVisibilityBatch" && action != "GetQueueAttributes" && action != "PurgeQueue" && action != "DeleteQueue":
		return nil, senderFault("InvalidAction", "InvalidAction", "unsupported action %q", action)
	case q == nil:
		return nil, senderFault("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.")
	}
	switch action {
	case "SendMessage":
		return s.sendMessage(q, body)
	case "SendMessageBatch":
		return s.sendMessageBatch(q, body)
	case "DeleteQueue":
		return s.deleteQueue(q)
	case "ReceiveMessage":
		return s.receiveMessage(q, body)
	case "DeleteMessage":
		return s.deleteMessage(q, body)
	case "DeleteMessageBatch":
		return s.batch(q, body, false)
	case "ChangeMessageVisibilityBatch":
		return s.batch(q, body, true)
	case "GetQueueAttributes":
		return s.getQueueAttributes(q, body)
	case "PurgeQueue":
		return s.purgeQueue(q)
	}
	return nil, senderFault("InvalidAction", "InvalidAction", "unsupported action %q", action)
}

// sendInput is a SendMessage request, or an entry of a SendMessageBatch.
type sendInput struct {
	MessageBody            string
	MessageAttributes      map[string]MessageAttribute
	MessageGroupId         string
	MessageDeduplicationId string
	DelaySeconds           *int
}

func (s *Server) sendMessage(q *queue, body []byte) (any, *apiError) {
	var in sendInput
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, invalidParameter("malformed request: %v", err)
	}
	return s.send(q, in)
}

// send stores one message of a SendMessage or a SendMessageBatch entry and
// returns the answer's MessageId and MD5OfMessageBody.
func (s *Server) send(q *queue, in sendInput) (map[string]string, *apiError) {
	if in.MessageBody == "" {
		return nil, senderFault("MissingParameter", "MissingParameter", "The request must contain the parameter MessageBody.")
	}
	if !validChars(in.MessageBody) {
		return nil, senderFault("InvalidMessageContents", "InvalidMessageContents", "Invalid characters found.")
	}
	if len(in.MessageAttributes) > MaxMessageAttributes {
		return nil, invalidParameter("Number of message attributes [%d] exceeds the allowed maximum [%d].", len(in.MessageAttributes), MaxMessageAttributes)
	}
	size := len(in.MessageBody)
	for name, a := range in.MessageAttributes {
		if a.DataType == "" {
			return nil, invalidParameter("The message attribute '%s' must contain non-empty message attribute type.", name)
		}
		if strings.HasPrefix(a.DataType, "String") || strings.HasPrefix(a.DataType, "Number") {
			if a.StringValue == nil || *a.StringValue == "" {
				return nil, invalidParameter("The message attribute '%s' must contain a non-empty message attribute value.", name)
			}
			if !validChars(*a.StringValue) { // "the same restrictions on the content as the message body"
				return nil, invalidParameter("Message (user) attribute '%s' value contains invalid characters.", name)
			}
		}
		size += len(name) + len(a.DataType) + len(aws.ToString(a.StringValue)) + len(a.BinaryValue)
	}
	if limit, _ := strconv.Atoi(q.attrs["MaximumMessageSize"]); size > limit {
		return nil, invalidParameter("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", limit)
	}
	fifo := q.attrs["FifoQueue"] == "true"
	switch {
	case fifo && in.MessageGroupId == "":
		return nil, senderFault("MissingParameter", "MissingParameter", "The request must contain the parameter MessageGroupId.")
	case fifo && in.MessageDeduplicationId == "" && q.attrs["ContentBasedDeduplication"] != "true":
		return nil, invalidParameter("The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	case fifo && in.DelaySeconds != nil && *in.DelaySeconds != 0:
		return nil, invalidParameter("Value %d for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.", *in.DelaySeconds)
	case !fifo && in.MessageDeduplicationId != "":
		return nil, invalidParameter("Value %s for parameter MessageDeduplicationId is invalid. Reason: The request includes a parameter that is not valid for this queue type.", in.MessageDeduplicationId)
	case in.DelaySeconds != nil && (*in.DelaySeconds < 0 || *in.DelaySeconds > 900):
		return nil, invalidParameter("Value %d for parameter DelaySeconds is invalid.", *in.DelaySeconds)
	}
	if fifo {
		for _, m := range q.msgs {
			if m.deduplication == in.MessageDeduplicationId { // within the 5-minute interval: always, here
				// Accepted as sent: the digest is of this request's body,
				// which the SDK checks its answer against.
				return map[string]string{"MessageId": m.id, "MD5OfMessageBody": md5Hex(in.MessageBody), "SequenceNumber": m.attrs["SequenceNumber"]}, nil
			}
		}
	}
	id := s.put(q, in.MessageBody, s.now(), in.MessageAttributes, in.MessageGroupId, in.MessageDeduplicationId)
	out := map[string]string{"MessageId": id, "MD5OfMessageBody": md5Hex(in.MessageBody)}
	if fifo {
		out["SequenceNumber"] = q.msgs[len(q.msgs)-1].attrs["SequenceNumber"]
	}
	return out, nil
}

// validChars reports whether body holds only the characters SQS allows:
// #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.
func validChars(body string) bool {
	if !utf8.ValidString(body) {
		return false
	}
	for _, r := range body {
		switch {
		case r == 0x9 || r == 0xA || r == 0xD:
		case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (s *Server) receiveMessage(q *queue, body []byte) (any, *apiError) {
	var in struct {
		MaxNumberOfMessages         *int
		WaitTimeSeconds             *int
		VisibilityTimeout           *int
		MessageSystemAttributeNames []string
		AttributeNames              []string
		MessageAttributeNames       []string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, invalidParameter("malformed request: %v", err)
	}
	max := 1
	if in.MaxNumberOfMessages != nil {
		max = *in.MaxNumberOfMessages
	}
	if max < 1 || max > MaxBatchEntries {
		return nil, invalidParameter("Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", max)
	}
	if in.WaitTimeSeconds != nil && (*in.WaitTimeSeconds < 0 || *in.WaitTimeSeconds > MaxWaitTimeSeconds) {
		return nil, invalidParameter("Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", *in.WaitTimeSeconds)
	}
	vt, _ := strconv.Atoi(q.attrs["VisibilityTimeout"])
	if in.VisibilityTimeout != nil {
		vt = *in.VisibilityTimeout
	}
	if vt < 0 || vt > MaxVisibilityTimeout {
		return nil, invalidParameter("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200, if provided.", vt)
	}
	sysNames := append(slices.Clone(in.MessageSystemAttributeNames), in.AttributeNames...)
	now := s.now()
	// A FIFO queue returns nothing of a message group while an earlier
	// message of it is in flight (a FIFO message has no delay: one not
	// visible has been received).
	blocked := map[string]bool{}
	for _, m := range q.msgs {
		if m.group != "" && now.Before(m.visibleAt) {
			blocked[m.group] = true
		}
	}
	msgs := []receivedMessage{}
	for _, m := range q.msgs {
		if len(msgs) == max {
			break
		}
		if now.Before(m.visibleAt) || blocked[m.group] {
			continue
		}
		m.receiveCount++
		m.handle = fmt.Sprintf("issued-%d-%s", m.receiveCount, m.id) // new at each receive
		m.receivedAt = now
		m.visibleAt = now.Add(time.Duration(vt) * time.Second)
		m.attrs["ApproximateReceiveCount"] = strconv.Itoa(m.receiveCount)
		if _, ok := m.attrs["ApproximateFirstReceiveTimestamp"]; !ok {
			m.attrs["ApproximateFirstReceiveTimestamp"] = strconv.FormatInt(now.UnixMilli(), 10)
		}
		msgs = append(msgs, receivedMessage{
			MessageId: m.id, ReceiptHandle: m.handle, Body: m.body, MD5OfBody: md5Hex(m.body),
			Attributes:        pick(m.attrs, sysNames, false),
			MessageAttributes: pick(m.msgAttrs, in.MessageAttributeNames, true),
		})
	}
	if s.simulated {
		if len(msgs) > 0 {
			s.simNow = s.simNow.Add(s.receiveCost)
		} else if in.WaitTimeSeconds != nil {
			s.simNow = s.simNow.Add(time.Duration(*in.WaitTimeSeconds) * time.Second)
		}
	}
	return map[string]any{"Messages": msgs}, nil
}

// receivedMessage is a message in a ReceiveMessage answer.
type receivedMessage struct {
	MessageId, ReceiptHandle, Body, MD5OfBody string
	Attributes                                map[string]string           `json:",omitempty"`
	MessageAttributes                         map[string]MessageAttribute `json:",omitempty"`
}

// pick returns the entries of all that names asks for: "All", a name, or
// (message attributes) a prefix "name.*".
func pick[V any](all map[string]V, names []string, prefixes bool) map[string]V {
	out := map[string]V{}
	for k, v := range all {
		for _, n := range names {
			if n == "All" || n == k || prefixes && n == ".*" || prefixes && strings.HasSuffix(n, ".*") && strings.HasPrefix(k, strings.TrimSuffix(n, "*")) {
				out[k] = v
				break
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

var batchEntryID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

type batchEntry struct {
	Id                string
	ReceiptHandle     string
	VisibilityTimeout int
}

type batchResult struct {
	Id          string
	Code        string `json:",omitempty"`
	Message     string `json:",omitempty"`
	SenderFault bool   `json:",omitempty"`
}

// checkEntryIDs rejects a batch whose entry ids are empty, too many, not
// 1–80 alphanumeric, hyphen or underscore characters, or not distinct.
func checkEntryIDs(ids []string) *apiError {
	switch {
	case len(ids) == 0:
		return senderFault("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", "There should be at least one entry in the request.")
	case len(ids) > MaxBatchEntries:
		return senderFault("TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "Maximum number of entries per request are %d. You have sent %d.", MaxBatchEntries, len(ids))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !batchEntryID.MatchString(id) {
			return senderFault("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		if seen[id] {
			return senderFault("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "Id %s repeated.", id)
		}
		seen[id] = true
	}
	return nil
}

// sendMessageBatch answers SendMessageBatch: the batch rules of
// checkEntryIDs and a total payload (bodies and attributes) of at most
// DefaultMaximumMessageSize (BatchRequestTooLong); then each entry as a
// SendMessage, an entry SendMessage would refuse reported in Failed.
func (s *Server) sendMessageBatch(q *queue, body []byte) (any, *apiError) {
	var in struct {
		Entries []struct {
			Id string
			sendInput
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, invalidParameter("malformed request: %v", err)
	}
	ids := make([]string, len(in.Entries))
	total := 0
	for i, e := range in.Entries {
		ids[i] = e.Id
		total += len(e.MessageBody)
		for name, a := range e.MessageAttributes {
			total += len(name) + len(a.DataType) + len(aws.ToString(a.StringValue)) + len(a.BinaryValue)
		}
	}
	if aerr := checkEntryIDs(ids); aerr != nil {
		return nil, aerr
	}
	if total > DefaultMaximumMessageSize {
		return nil, senderFault("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", "Batch requests cannot be longer than %d bytes. You have sent %d bytes.", DefaultMaximumMessageSize, total)
	}
	type ok struct {
		Id, MessageId, MD5OfMessageBody string
		SequenceNumber                  string `json:",omitempty"`
	}
	out := struct {
		Successful []ok
		Failed     []batchResult
	}{Successful: []ok{}, Failed: []batchResult{}}
	for _, e := range in.Entries {
		res, aerr := s.send(q, e.sendInput)
		if aerr != nil {
			out.Failed = append(out.Failed, batchResult{Id: e.Id, Code: aerr.code, Message: aerr.msg, SenderFault: aerr.status < 500})
			continue
		}
		out.Successful = append(out.Successful, ok{Id: e.Id, MessageId: res["MessageId"], MD5OfMessageBody: res["MD5OfMessageBody"], SequenceNumber: res["SequenceNumber"]})
	}
	return out, nil
}

// batch answers DeleteMessageBatch, or ChangeMessageVisibilityBatch when
// visibility is set.
func (s *Server) batch(q *queue, body []byte, visibility bool) (any, *apiError) {
	var in struct{ Entries []batchEntry }
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, invalidParameter("malformed request: %v", err)
	}
	ids := make([]string, len(in.Entries))
	for i, e := range in.Entries {
		ids[i] = e.Id
	}
	if aerr := checkEntryIDs(ids); aerr != nil {
		return nil, aerr
	}
	out := struct{ Successful, Failed []batchResult }{Successful: []batchResult{}, Failed: []batchResult{}}
	now := s.now()
	for _, e := range in.Entries {
		fail := func(code, format string, args ...any) {
			out.Failed = append(out.Failed, batchResult{Id: e.Id, Code: code, Message: fmt.Sprintf(format, args...), SenderFault: true})
		}
		if e.ReceiptHandle == "" || s.failHandle[e.ReceiptHandle] {
			fail("ReceiptHandleIsInvalid", "The input receipt handle %q is not a valid receipt handle.", e.ReceiptHandle)
			continue
		}
		if visibility && (e.VisibilityTimeout < 0 || e.VisibilityTimeout > MaxVisibilityTimeout) {
			fail("InvalidParameterValue", "Value %d for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200.", e.VisibilityTimeout)
			continue
		}
		i := slices.IndexFunc(q.msgs, func(m *message) bool { return m.handle == e.ReceiptHandle })
		if i < 0 {
			if strings.HasPrefix(e.ReceiptHandle, "issued-") { // ours, but deleted or received again since
				fail("ReceiptHandleIsInvalid", "The receipt handle %q has expired.", e.ReceiptHandle)
			} else {
				out.Successful = append(out.Successful, batchResult{Id: e.Id})
			}
			continue
		}
		m := q.msgs[i]
		if s.failMessage[map[bool]string{true: "ChangeMessageVisibilityBatch", false: "DeleteMessageBatch"}[visibility]][m.id] {
			out.Failed = append(out.Failed, batchResult{Id: e.Id, Code: "InternalError", Message: "injected", SenderFault: false})
			continue
		}
		if !visibility {
			q.msgs = slices.Delete(q.msgs, i, i+1)
			out.Successful = append(out.Successful, batchResult{Id: e.Id})
			continue
		}
		if !now.Before(m.visibleAt) {
			fail("MessageNotInflight", "Message does not exist or is not available for visibility timeout change.")
			continue
		}
		until := now.Add(time.Duration(e.VisibilityTimeout) * time.Second)
		if until.Sub(m.receivedAt) > MaxVisibilityTimeout*time.Second {
			fail("InvalidParameterValue", "Value %d for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]", e.VisibilityTimeout)
			continue
		}
		m.visibleAt = until
		out.Successful = append(out.Successful, batchResult{Id: e.Id})
	}
	return out, nil
}

// deleteMessage answers DeleteMessage: the receipt handle must be the
// message's newest (ReceiptHandleIsInvalid otherwise); one the server did
// not issue is accepted, as in batch.
func (s *Server) deleteMessage(q *queue, body []byte) (any, *apiError) {
	var in struct{ ReceiptHandle string }
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, invalidParameter("malformed request: %v", err)
	}
	if in.ReceiptHandle == "" {
		return nil, senderFault("MissingParameter", "MissingParameter", "The request must contain the parameter ReceiptHandle.")
	}
	if s.failHandle[in.ReceiptHandle] {
		return nil, senderFault("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", "The input receipt handle %q is not a valid receipt handle.", in.ReceiptHandle)
	}
	i := slices.IndexFunc(q.msgs, func(m *message) bool { return m.handle == in.ReceiptHandle })
	if i < 0 {
		if strings.HasPrefix(in.ReceiptHandle, "issued-") {
			return nil, senderFault("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", "The receipt handle %q has expired.", in.ReceiptHandle)
		}
		return struct{}{}, nil
	}
	if s.failMessage["DeleteMessage"][q.msgs[i].id] {
		return nil, &apiError{status: http.StatusInternalServerError, code: "InternalError", query: "InternalError", msg: "injected"}
	}
	q.msgs = slices.Delete(q.msgs, i, i+1)
	return struct{}{}, nil
}

func (s *Server) getQueueAttributes(q *queue, body []byte) (any, *apiError) {
	var in struct{ AttributeNames []string }
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, invalidParameter("malformed request: %v", err)
	}
	attrs := maps.Clone(q.attrs)
	visible, inFlight := s.counts(q)
	attrs["ApproximateNumberOfMessages"] = strconv.Itoa(visible)
	attrs["ApproximateNumberOfMessagesNotVisible"] = strconv.Itoa(inFlight)
	return map[string]any{"Attributes": pick(attrs, in.AttributeNames, false)}, nil
}

// getQueueURL answers GetQueueUrl: the URL of the queue named name (its
// URL's last path segment).
func (s *Server) getQueueURL(name string) (any, *apiError) {
	for url := range s.queues {
		if url[strings.LastIndex(url, "/")+1:] == name {
			return map[string]string{"QueueUrl": url}, nil
		}
	}
	return nil, senderFault("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.")
}

// purgeQueue answers PurgeQueue: every message goes, visible or in flight;
// a second purge within PurgeInterval is refused, as SQS refuses it.
func (s *Server) purgeQueue(q *queue) (any, *apiError) {
	now := s.now()
	if !q.purgedAt.IsZero() && now.Sub(q.purgedAt) < PurgeInterval {
		return nil, &apiError{status: http.StatusForbidden, code: "PurgeQueueInProgress", query: "AWS.SimpleQueueService.PurgeQueueInProgress",
			msg: fmt.Sprintf("Only one PurgeQueue operation on %s is allowed every 60 seconds.", q.attrs["QueueArn"])}
	}
	q.purgedAt = now
	q.msgs = nil
	return struct{}{}, nil
}
