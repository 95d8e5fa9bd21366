package producer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/notification"
)

// SQS SendMessageBatch limits.
const (
	// MaxBatchEntries is the most entries of one SendMessageBatch call.
	MaxBatchEntries = 10
	// MaxBatchBytes is the most bytes of all bodies (and message attributes)
	// of one SendMessageBatch call: 1 MiB, the SQS message size limit since
	// 2026, which a batch's total shares.
	MaxBatchBytes = notification.SQSMaxMessageBytes
	// maxDeduplicationID is the SQS limit on MessageDeduplicationId.
	maxDeduplicationID = 128
)

// API is the part of the SQS API the producer calls.
type API interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

var _ API = (*sqs.Client)(nil)

// Client sends notifications to their channels' queues.
type Client struct {
	// SQS is the SQS client, usually sqs.NewFromConfig. Required.
	SQS API
	// Queues are the URLs of the channels' queues: each notification goes
	// to its channel's (a herald stack's outputs EmailQueueUrl,
	// WebhookQueueUrl, ChatQueueUrl, EventQueueUrl: [QueueOutput]). A channel without one
	// goes to QueueURL.
	Queues map[notification.Channel]string
	// QueueURL is a queue of every channel (the NotificationQueueUrl
	// output, herald's single queue before channel queues), for the
	// channels Queues does not name. Required unless Queues names every
	// channel sent.
	QueueURL string
	// GroupID is the MessageGroupId of every notification sent to a FIFO
	// queue. Required for a FIFO queue unless GroupBy is set; ignored on a
	// standard queue.
	GroupID string
	// GroupBy, when set, gives each notification's MessageGroupId on a FIFO
	// queue (for example one group per recipient, so that one recipient's
	// notifications keep their order and others' are not held behind
	// them); an empty result falls back to GroupID. SQS limits a group id
	// to 128 characters of alphanumerics and punctuation.
	GroupBy func(m *notification.Message) string
	// MaxAttempts is how many times an entry SQS failed on its side is sent
	// in all; below 1 it is DefaultMaxAttempts. Defaults to 3.
	MaxAttempts int
	// RetryDelay is the wait before the first retry of failed entries; it
	// doubles with each. Not above 0 it is DefaultRetryDelay. Defaults to
	// 200 ms.
	RetryDelay time.Duration
}

// Defaults of Client's retry fields.
const (
	DefaultMaxAttempts = 3
	DefaultRetryDelay  = 200 * time.Millisecond
)

// WithDefaults returns c with MaxAttempts and RetryDelay set to their
// defaults where they are not set (MaxAttempts below 1, RetryDelay not
// above 0). SendBodies applies it.
func (c Client) WithDefaults() Client {
	if c.MaxAttempts < 1 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	return c
}

// Result is what became of one notification.
type Result struct {
	// ID is the notification's id.
	ID string `json:"id"`
	// MessageID is the SQS message id, when it was sent.
	MessageID string `json:"sqs_message_id,omitempty"`
	// Err is why it was not sent, or, wrapping ErrOutcomeUnknown, why it
	// is not known whether it was; nil when it was sent.
	Err error `json:"-"`
}

// NotSentError is SendBodies' error when some valid notifications were not
// sent: SQS refused or kept failing them, or on a FIFO queue they wait
// behind one of their group that was not sent; or when the outcome of some
// is unknown (ErrOutcomeUnknown: SQS may hold them). Each one's Result.Err
// says why.
type NotSentError struct {
	// IDs are the notification ids not sent, in input order.
	IDs []string
	// Unknown are the ids whose send's outcome is unknown, in input order:
	// check before sending them again (their Result.Err says how).
	Unknown []string
	// Total is the number of notifications given.
	Total int
}

func (e *NotSentError) Error() string {
	var parts []string
	if len(e.IDs) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d notifications not sent: %s", len(e.IDs), e.Total, strings.Join(e.IDs, ", ")))
	}
	if len(e.Unknown) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d notifications of unknown outcome (SQS may hold them; check before sending again): %s", len(e.Unknown), e.Total, strings.Join(e.Unknown, ", ")))
	}
	return strings.Join(parts, "; ")
}

// ErrGroupBlocked is the Result.Err (wrapped, with the id it waits behind)
// of a notification not sent on a FIFO queue because an earlier one of its
// message group was not sent: sending it would put the group out of order.
var ErrGroupBlocked = errors.New("not sent: an earlier notification of its message group was not sent")

// InvalidError reports the bodies that are not valid notifications; when
// [Client.SendBodies] returns it, nothing was sent.
type InvalidError struct {
	// Items are the invalid bodies, in input order.
	Items []Invalid
}

// Invalid is one body that failed validation.
type Invalid struct {
	// Index is the body's position in the input, from 0.
	Index int
	// ID is the body's id, when it has a readable one.
	ID string
	// Err is notification.Parse's error, an *notification.InvalidError
	// naming each field path that breaks the contract (or field "id" for
	// an id repeated within one send).
	Err error
}

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Items))
	for i, it := range e.Items {
		parts[i] = fmt.Sprintf("notification %d: %v", it.Index+1, it.Err)
	}
	return fmt.Sprintf("%d invalid notification(s), nothing sent: %s", len(e.Items), strings.Join(parts, "; "))
}

// Validate parses each body with [notification.Parse] and returns an
// *InvalidError listing the invalid ones, or nil. Also invalid: a body
// above notification.MaxMessageBytes (the deliver function would
// dead-letter it unattempted as message_too_large), and a valid body whose
// id an earlier valid body has (a *notification.InvalidError for field
// "id"): the id is the notification's identity, so SQS drops the
// repeat on a FIFO queue (it is the deduplication id) and receivers drop
// it on any queue, while the send would report it sent.
func Validate(bodies [][]byte) error {
	_, err := validate(bodies)
	return err
}

// validate is Validate, returning each valid body's channel.
func validate(bodies [][]byte) ([]notification.Channel, error) {
	channels := make([]notification.Channel, len(bodies))
	var bad []Invalid
	first := map[string]int{}
	for i, b := range bodies {
		if len(b) > notification.MaxMessageBytes {
			// The only message attribute the producer sends, traceparent,
			// is left off a body that leaves no room for it: the body is
			// then the message as the deliver function measures it.
			bad = append(bad, Invalid{Index: i, ID: notification.IDOf(b), Err: &notification.InvalidError{Problems: []notification.Problem{
				{Message: fmt.Sprintf("the message is %d bytes, above %d (notification.MaxMessageBytes: the SQS maximum less the room of a dead letter's reason); the deliver function would dead-letter it unattempted as message_too_large", len(b), notification.MaxMessageBytes)},
			}}})
			continue
		}
		m, err := notification.Parse(b)
		if err != nil {
			bad = append(bad, Invalid{Index: i, ID: notification.IDOf(b), Err: err})
			continue
		}
		if j, seen := first[m.ID]; seen {
			bad = append(bad, Invalid{Index: i, ID: m.ID, Err: &notification.InvalidError{Problems: []notification.Problem{
				{Field: "id", Message: fmt.Sprintf("repeats notification %d's id: one id, one notification", j+1)},
			}}})
			continue
		}
		first[m.ID] = i
		channels[i] = m.Channel
	}
	if len(bad) > 0 {
		return nil, &InvalidError{Items: bad}
	}
	return channels, nil
}

// Send marshals and sends msgs: [Client.SendBodies] of their JSON.
func (c *Client) Send(ctx context.Context, msgs ...*notification.Message) ([]Result, error) {
	bodies := make([][]byte, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("marshal notification %d: %w", i+1, err)
		}
		bodies[i] = b
	}
	return c.SendBodies(ctx, bodies)
}

// SendBodies validates every body first and, when one is invalid, returns an
// *InvalidError and sends nothing. Otherwise it sends each to its channel's
// queue (Queues, else QueueURL) in batches and returns one Result per body,
// in input order. The error is a *NotSentError when any body was not sent
// or of unknown outcome (each Result's Err says why; one wrapping
// ErrOutcomeUnknown names the queue and how to check before sending it
// again), or names what is missing from c (a channel
// with no queue, a FIFO queue without a group): then nothing is sent.
//
// On a FIFO queue the order of each message group is kept whatever SQS
// fails: a batch holds at most one notification of a group, the group's
// next one goes only after it was sent, and once one of a group is not
// sent (refused, attempts exhausted, the call failed) none of the group's
// later ones is sent (ErrGroupBlocked). Notifications of other groups go
// on. SQS does not promise that a batch entry it fails stops the same
// group's later entries of that batch, so one per group per batch is the
// only way to keep the order; a single group sends one notification per
// call.
//
// When ctx carries an OpenTelemetry span, each message carries it for the
// deliver function's spans to link to: as SQS's AWSTraceHeader system
// attribute (X-Ray format, not counted in the message's size) and as a
// W3C traceparent message attribute (72 bytes of the message's size; left
// off a body within 72 bytes of notification.MaxMessageBytes). Without a
// span, no attribute is sent.
func (c *Client) SendBodies(ctx context.Context, bodies [][]byte) ([]Result, error) {
	if c.SQS == nil || (c.QueueURL == "" && len(c.Queues) == 0) {
		return nil, errors.New("producer: SQS and Queues or QueueURL are required")
	}
	channels, err := validate(bodies)
	if err != nil {
		return nil, err
	}
	// Each queue's bodies, in input order; queues in order of first use.
	var order []string
	byQueue := map[string][]int{}
	for i, ch := range channels {
		url, err := c.QueueOf(ch)
		if err != nil {
			return nil, err
		}
		if _, seen := byQueue[url]; !seen {
			order = append(order, url)
		}
		byQueue[url] = append(byQueue[url], i)
	}
	groups := make(map[string][]string, len(order))
	for _, url := range order {
		if !IsFIFO(url) {
			continue
		}
		if c.GroupID == "" && c.GroupBy == nil {
			return nil, fmt.Errorf("producer: queue %s is a FIFO queue: a GroupID or GroupBy is required", url)
		}
		if groups[url], err = c.groups(subset(bodies, byQueue[url])); err != nil {
			return nil, err
		}
	}
	results := make([]Result, len(bodies))
	for i, b := range bodies {
		results[i].ID = notification.IDOf(b)
	}
	for _, url := range order {
		idx := byQueue[url]
		sub := subset(bodies, idx)
		subResults := subset(results, idx)
		if IsFIFO(url) {
			c.sendFIFO(ctx, url, sub, groups[url], subResults)
		} else {
			for _, chunk := range Chunks(sub, MaxBatchEntries, traceOf(ctx).batchBytes()) {
				c.sendChunk(ctx, url, sub, chunk, subResults)
			}
		}
		for k, i := range idx {
			results[i] = subResults[k]
		}
	}
	var notSent, unknown []string
	for i, r := range results {
		if r.MessageID == "" && r.Err == nil {
			results[i].Err = fmt.Errorf("not sent: %w", context.Cause(ctx))
		}
		switch {
		case errors.Is(results[i].Err, ErrOutcomeUnknown):
			unknown = append(unknown, r.ID)
		case results[i].Err != nil:
			notSent = append(notSent, r.ID)
		}
	}
	if len(notSent) > 0 || len(unknown) > 0 {
		return results, &NotSentError{IDs: notSent, Unknown: unknown, Total: len(bodies)}
	}
	return results, nil
}

// subset returns the elements of all at idx, in that order.
func subset[T any](all []T, idx []int) []T {
	out := make([]T, len(idx))
	for k, i := range idx {
		out[k] = all[i]
	}
	return out
}

// QueueOf returns the URL of the queue a notification of channel ch goes
// to: Queues[ch], else QueueURL. It returns an error naming the stack
// output and the variable to set when there is none.
func (c *Client) QueueOf(ch notification.Channel) (string, error) {
	if url := c.Queues[ch]; url != "" {
		return url, nil
	}
	if c.QueueURL != "" {
		return c.QueueURL, nil
	}
	return "", fmt.Errorf("producer: no queue for channel %s: give its queue's URL (stack output %s, variable %s)", ch, QueueOutput(ch), QueueURLEnv(ch))
}

// QueueOutput is the name of the herald stack output holding channel ch's
// queue URL: the channel's name with a capital first letter, then
// "QueueUrl" (EmailQueueUrl, WebhookQueueUrl, ChatQueueUrl, EventQueueUrl; template.yaml,
// Outputs). Producers in other languages read these outputs.
func QueueOutput(ch notification.Channel) string {
	name := string(ch)
	if name == "" {
		return "QueueUrl"
	}
	return strings.ToUpper(name[:1]) + name[1:] + "QueueUrl"
}

// DeadLetterQueueOutput is the name of the stack output holding the URL of
// channel ch's dead-letter queue (EmailDeadLetterQueueUrl, …).
func DeadLetterQueueOutput(ch notification.Channel) string {
	return strings.TrimSuffix(QueueOutput(ch), "QueueUrl") + "DeadLetterQueueUrl"
}

// QueueURLEnv is the environment variable holding channel ch's queue URL,
// for the deliver function, the herald command and the local stack's
// herald.env: HERALD_<CHANNEL>_QUEUE_URL (HERALD_EMAIL_QUEUE_URL, …).
func QueueURLEnv(ch notification.Channel) string {
	return "HERALD_" + strings.ToUpper(string(ch)) + "_QUEUE_URL"
}

// DeadLetterQueueURLEnv is the environment variable holding the URL of
// channel ch's dead-letter queue: HERALD_<CHANNEL>_DLQ_URL.
func DeadLetterQueueURLEnv(ch notification.Channel) string {
	return "HERALD_" + strings.ToUpper(string(ch)) + "_DLQ_URL"
}

// groups returns each body's MessageGroupId.
func (c *Client) groups(bodies [][]byte) ([]string, error) {
	out := make([]string, len(bodies))
	for i, b := range bodies {
		out[i] = c.GroupID
		if c.GroupBy == nil {
			continue
		}
		m, err := notification.Parse(b) // valid: Validate passed
		if err != nil {
			return nil, fmt.Errorf("notification %d: %w", i+1, err)
		}
		if g := c.GroupBy(m); g != "" {
			out[i] = g
		}
		if out[i] == "" {
			return nil, fmt.Errorf("producer: notification %d (%s) has no message group: GroupBy gave none and GroupID is empty", i+1, m.ID)
		}
	}
	return out, nil
}

// Chunks splits indexes 0…len(bodies)-1 into runs of at most maxEntries
// whose bodies add up to at most maxBytes (a body larger than maxBytes
// alone gets a run of its own, for SQS to refuse).
func Chunks(bodies [][]byte, maxEntries, maxBytes int) [][]int {
	var out [][]int
	var cur []int
	size := 0
	for i, b := range bodies {
		if len(cur) > 0 && (len(cur) == maxEntries || size+len(b) > maxBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, i)
		size += len(b)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// sendChunk sends one batch to a standard queue, retrying the entries SQS
// failed on its side.
func (c *Client) sendChunk(ctx context.Context, queueURL string, bodies [][]byte, idx []int, results []Result) {
	pending := idx // never empty: a chunk has an entry, and a retry too
	delay := c.retryDelay()
	tr := traceOf(ctx)
	for attempt := 1; ; attempt++ {
		entries := make([]types.SendMessageBatchRequestEntry, len(pending))
		for k, i := range pending {
			entries[k] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(bodies[i]))}
			tr.apply(&entries[k], bodies[i])
		}
		if ctx.Err() != nil {
			return // not sent: SendBodies says why
		}
		out, err := c.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries}, RetryKnownOutcomesOnly)
		var retry []int
		if err != nil {
			// The SDK has already retried what it retries; the call as a
			// whole failed, or its answer cannot be trusted.
			for _, i := range pending {
				results[i].Err = callError(err, queueURL, results[i].ID)
			}
			return
		}
		for _, s := range out.Successful {
			if i, ok := entryIndex(s.Id, pending); ok {
				results[i].MessageID, results[i].Err = aws.ToString(s.MessageId), nil
			}
		}
		for _, f := range out.Failed {
			i, ok := entryIndex(f.Id, pending)
			if !ok {
				continue
			}
			results[i].Err = fmt.Errorf("SQS %s: %s", aws.ToString(f.Code), aws.ToString(f.Message))
			if !f.SenderFault {
				retry = append(retry, i)
			}
		}
		// An entry SQS named neither successful nor failed did not go.
		for _, i := range pending {
			if results[i].MessageID == "" && results[i].Err == nil {
				results[i].Err = errors.New("SQS answered neither success nor failure for this entry")
			}
		}
		if len(retry) == 0 || attempt >= c.maxAttempts() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay *= 2
		pending = retry
	}
}

// sendFIFO sends bodies to a FIFO queue in rounds: each round's batch holds
// the next unsent notification of each group (in the order the groups
// first appear, within the batch limits). A sent one makes way for the
// next of its group; one SQS failed on its side is sent again in a later
// round, after a wait that doubles, up to MaxAttempts; one that is not sent
// for good blocks the rest of its group.
func (c *Client) sendFIFO(ctx context.Context, queueURL string, bodies [][]byte, groups []string, results []Result) {
	var order []string
	queue := map[string][]int{}
	for i, g := range groups {
		if _, ok := queue[g]; !ok {
			order = append(order, g)
		}
		queue[g] = append(queue[g], i)
	}
	block := func(i int, err error) {
		g := groups[i]
		results[i].Err = err
		for _, j := range queue[g][1:] {
			results[j].Err = fmt.Errorf("%w: behind %s", ErrGroupBlocked, results[i].ID)
		}
		queue[g] = nil
	}
	attempts := make([]int, len(bodies))
	delay := c.retryDelay()
	tr := traceOf(ctx)
	for ctx.Err() == nil {
		var batch []int
		size := 0
		for _, g := range order {
			if len(queue[g]) == 0 || len(batch) == MaxBatchEntries {
				continue
			}
			i := queue[g][0]
			if len(batch) > 0 && size+len(bodies[i]) > tr.batchBytes() {
				continue
			}
			batch, size = append(batch, i), size+len(bodies[i])
		}
		if len(batch) == 0 {
			return
		}
		entries := make([]types.SendMessageBatchRequestEntry, len(batch))
		for k, i := range batch {
			entries[k] = types.SendMessageBatchRequestEntry{
				Id:                     aws.String(strconv.Itoa(i)),
				MessageBody:            aws.String(string(bodies[i])),
				MessageGroupId:         aws.String(groups[i]),
				MessageDeduplicationId: aws.String(DeduplicationID(results[i].ID)),
			}
			tr.apply(&entries[k], bodies[i])
		}
		out, err := c.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries}, RetryKnownOutcomesOnly)
		if err != nil {
			// The SDK has already retried what it retries; the call as a
			// whole failed, or its answer cannot be trusted: either way the
			// group waits (were it stored, the next would still be in
			// order; were it not, the next would jump it).
			for _, i := range batch {
				block(i, callError(err, queueURL, results[i].ID))
			}
			continue
		}
		answered := map[int]bool{}
		for _, s := range out.Successful {
			if i, ok := entryIndex(s.Id, batch); ok {
				answered[i] = true
				results[i].MessageID, results[i].Err = aws.ToString(s.MessageId), nil
				queue[groups[i]] = queue[groups[i]][1:]
			}
		}
		retry := false
		for _, f := range out.Failed {
			i, ok := entryIndex(f.Id, batch)
			if !ok {
				continue
			}
			answered[i] = true
			attempts[i]++
			err := fmt.Errorf("SQS %s: %s", aws.ToString(f.Code), aws.ToString(f.Message))
			if f.SenderFault || attempts[i] >= c.maxAttempts() {
				block(i, err)
				continue
			}
			results[i].Err, retry = err, true
		}
		for _, i := range batch {
			if !answered[i] {
				block(i, errors.New("SQS answered neither success nor failure for this entry"))
			}
		}
		if !retry {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// callError is the Result.Err of a notification in a SendMessageBatch call
// that returned err: not sent when SQS answered with an error or the request
// never left, else unknown (OutcomeUnknown).
func callError(err error, queueURL, id string) error {
	if OutcomeUnknown(err) {
		return unknownError(err, queueURL, id)
	}
	return fmt.Errorf("send batch: %w", err)
}

func entryIndex(id *string, pending []int) (int, bool) {
	i, err := strconv.Atoi(aws.ToString(id))
	if err != nil {
		return 0, false
	}
	for _, p := range pending {
		if p == i {
			return i, true
		}
	}
	return 0, false
}

// DeduplicationID is the MessageDeduplicationId of a notification on a
// FIFO queue: its id, cut to the SQS limit of 128 characters (notification
// ids are at most 128, so it is the id itself).
func DeduplicationID(id string) string { return id[:min(len(id), maxDeduplicationID)] }

// IsFIFO reports whether queueURL names a FIFO queue: SQS requires their
// names to end in ".fifo".
func IsFIFO(queueURL string) bool { return strings.HasSuffix(queueURL, ".fifo") }

func (c *Client) maxAttempts() int { return c.WithDefaults().MaxAttempts }

func (c *Client) retryDelay() time.Duration { return c.WithDefaults().RetryDelay }
