// Package localenv holds what the demo and the integration tests share about
// the local stack: queue pairs with a redrive policy, a TLS webhook receiver
// that records what it gets, and the SES v2 emulator's sent-mail store.
package localenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/heraldhq/herald/notification"
)

// Queues is a notification queue and its dead-letter queue.
type Queues struct {
	URL, ARN       string
	DLQURL, DLQARN string
}

// CreateQueues creates name and name-dlq, the first with a redrive policy of
// maxReceive receives and the given visibility timeout.
func CreateQueues(ctx context.Context, c *sqs.Client, name string, maxReceive int, visibility time.Duration) (Queues, error) {
	var q Queues
	var err error
	if q.DLQURL, q.DLQARN, err = createQueue(ctx, c, name+"-dlq", map[string]string{
		"MessageRetentionPeriod": "1209600",
		"MaximumMessageSize":     maxMessageSize,
	}); err != nil {
		return q, err
	}
	redrive, _ := json.Marshal(map[string]string{"deadLetterTargetArn": q.DLQARN, "maxReceiveCount": strconv.Itoa(maxReceive)})
	q.URL, q.ARN, err = createQueue(ctx, c, name, map[string]string{
		"VisibilityTimeout":      strconv.Itoa(int(visibility.Seconds())),
		"MessageRetentionPeriod": "345600",
		"RedrivePolicy":          string(redrive),
		"MaximumMessageSize":     maxMessageSize,
	})
	return q, err
}

// CreateFIFOQueues creates the FIFO pair name.fifo and name-dlq.fifo (SQS
// requires a FIFO queue's name to end in ".fifo", and a FIFO queue's
// dead-letter queue to be FIFO too), without content-based deduplication:
// producers give each message a MessageDeduplicationId. Otherwise as
// CreateQueues.
func CreateFIFOQueues(ctx context.Context, c *sqs.Client, name string, maxReceive int, visibility time.Duration) (Queues, error) {
	var q Queues
	var err error
	if q.DLQURL, q.DLQARN, err = createQueue(ctx, c, name+"-dlq.fifo", map[string]string{
		"FifoQueue": "true", "ContentBasedDeduplication": "false",
		"MessageRetentionPeriod": "1209600",
		"MaximumMessageSize":     maxMessageSize,
	}); err != nil {
		return q, err
	}
	redrive, _ := json.Marshal(map[string]string{"deadLetterTargetArn": q.DLQARN, "maxReceiveCount": strconv.Itoa(maxReceive)})
	q.URL, q.ARN, err = createQueue(ctx, c, name+".fifo", map[string]string{
		"FifoQueue": "true", "ContentBasedDeduplication": "false",
		"VisibilityTimeout":      strconv.Itoa(int(visibility.Seconds())),
		"MessageRetentionPeriod": "345600",
		"RedrivePolicy":          string(redrive),
		"MaximumMessageSize":     maxMessageSize,
	})
	return q, err
}

// maxMessageSize is both queues' MaximumMessageSize, as template.yaml sets it.
var maxMessageSize = strconv.Itoa(notification.SQSMaxMessageBytes)

func createQueue(ctx context.Context, c *sqs.Client, name string, attrs map[string]string) (url, arn string, err error) {
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", "", fmt.Errorf("create queue %s: %w", name, err)
	}
	a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: out.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", "", fmt.Errorf("queue %s arn: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), a.Attributes[string(types.QueueAttributeNameQueueArn)], nil
}

// Delete removes both queues.
func (q Queues) Delete(ctx context.Context, c *sqs.Client) {
	for _, u := range []string{q.URL, q.DLQURL} {
		if u != "" {
			_, _ = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		}
	}
}

// MaxReceiveCount reads the redrive policy's maxReceiveCount of queueURL.
func MaxReceiveCount(ctx context.Context, c *sqs.Client, queueURL string) (int, error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(queueURL), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy},
	})
	if err != nil {
		return 0, fmt.Errorf("redrive policy of %s: %w", queueURL, err)
	}
	var p struct {
		MaxReceiveCount json.Number `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(out.Attributes[string(types.QueueAttributeNameRedrivePolicy)]), &p); err != nil {
		return 0, fmt.Errorf("redrive policy of %s: %w", queueURL, err)
	}
	n, err := strconv.Atoi(p.MaxReceiveCount.String())
	if err != nil {
		return 0, fmt.Errorf("redrive policy of %s: maxReceiveCount %q", queueURL, p.MaxReceiveCount)
	}
	return n, nil
}

// DeadLetter is a message read from a dead-letter queue.
type DeadLetter struct {
	MessageID  string
	Body       string
	Attributes map[string]string // message attributes' string values
}

// ReceiveAll reads every visible message of queueURL once, hiding each for
// hide, and returns them. It stops at a receive that brings no new message
// once the queue also reports no visible message, or after MaxEmptyReceives
// such receives: an emulator under load may answer a receive empty while it
// still holds some, or hand a hidden message out again (so does any queue
// when hide is under a second).
func ReceiveAll(ctx context.Context, c *sqs.Client, queueURL string, hide time.Duration) ([]DeadLetter, error) {
	var all []DeadLetter
	seen := map[string]bool{}
	for empties := 0; ; {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			VisibilityTimeout: int32(hide.Seconds()), MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			return all, fmt.Errorf("receive from %s: %w", queueURL, err)
		}
		n := len(all)
		for _, m := range out.Messages {
			if seen[aws.ToString(m.MessageId)] {
				continue // an emulator under load can hand a hidden message out again
			}
			seen[aws.ToString(m.MessageId)] = true
			d := DeadLetter{MessageID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), Attributes: map[string]string{}}
			for k, v := range m.MessageAttributes {
				d.Attributes[k] = aws.ToString(v.StringValue)
			}
			all = append(all, d)
		}
		if len(all) > n {
			continue
		}
		empties++
		visible, err := visibleCount(ctx, c, queueURL)
		if err != nil {
			return all, err
		}
		if visible == 0 || empties >= MaxEmptyReceives {
			return all, nil
		}
	}
}

// MaxEmptyReceives is how many receives bringing no new message
// ReceiveAll makes before it gives up on messages the queue still reports
// visible.
const MaxEmptyReceives = 10

// Request is one request a Receiver got.
type Request struct {
	Path    string
	Header  http.Header
	Body    []byte
	At      time.Time
	Attempt int // 1 for the first request to Path
	Status  int // what the receiver answered
	// Late reports that the client had gone (timed out or cancelled) when
	// the receiver answered after its Response.Delay: the receiver may have
	// acted on a request the sender counts as failed.
	Late bool
}

// Response is how a Receiver answers one request.
type Response struct {
	Status int
	// Header is added to the answer, such as Retry-After. Optional.
	Header http.Header
	// Delay is how long the receiver waits before answering. Optional.
	Delay time.Duration
}

// Receiver is a local HTTPS webhook receiver. Respond decides the status of
// the attempt-th request to a path.
type Receiver struct {
	srv     *httptest.Server
	respond func(path string, attempt int) Response

	mu       sync.Mutex
	requests []Request
	attempts map[string]int
}

// NewReceiver starts a TLS receiver on 127.0.0.1.
func NewReceiver(respond func(path string, attempt int) int) *Receiver {
	return NewReceiverWith(func(path string, attempt int) Response { return Response{Status: respond(path, attempt)} })
}

// NewReceiverWith starts a TLS receiver on 127.0.0.1 whose answers may
// carry headers and come late. Every receiver serves the same test
// certificate, so one's TLSConfig trusts them all.
func NewReceiverWith(respond func(path string, attempt int) Response) *Receiver {
	r := &Receiver{respond: respond, attempts: map[string]int{}}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	r.attempts[req.URL.Path]++
	rec := Request{Path: req.URL.Path, Header: req.Header.Clone(), Body: body, At: time.Now(), Attempt: r.attempts[req.URL.Path]}
	resp := r.respond(rec.Path, rec.Attempt)
	rec.Status = resp.Status
	i := len(r.requests)
	r.requests = append(r.requests, rec)
	r.mu.Unlock()
	if resp.Delay > 0 {
		t := time.NewTimer(resp.Delay)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
		}
	}
	if req.Context().Err() != nil {
		r.mu.Lock()
		r.requests[i].Late = true
		r.mu.Unlock()
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Status)
}

// URL is the receiver's base URL, https://127.0.0.1:port.
func (r *Receiver) URL() string { return r.srv.URL }

// TLSConfig trusts the receiver's certificate.
func (r *Receiver) TLSConfig() *tls.Config {
	return r.srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
}

// Requests returns what the receiver got, in order.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// SentEmail is one email held by the SES v2 emulator (aws-ses-v2-local's
// GET /store).
type SentEmail struct {
	MessageID   string   `json:"messageId"`
	From        string   `json:"from"`
	ReplyTo     []string `json:"replyTo"`
	Destination struct {
		To  []string `json:"to"`
		Cc  []string `json:"cc"`
		Bcc []string `json:"bcc"`
	} `json:"destination"`
	Subject string `json:"subject"`
	Body    struct {
		Text string `json:"text"`
		HTML string `json:"html"`
	} `json:"body"`
	Headers []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers"`
	At int64 `json:"at"`
}

// SentEmails reads every email the SES v2 emulator at endpoint holds.
func SentEmails(ctx context.Context, endpoint string) ([]SentEmail, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/store", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read SES emulator store: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read SES emulator store: %s", resp.Status)
	}
	var store struct {
		Emails []SentEmail `json:"emails"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&store); err != nil {
		return nil, fmt.Errorf("read SES emulator store: %w", err)
	}
	return store.Emails, nil
}

// Certificate is the receiver's TLS certificate.
func (r *Receiver) Certificate() *x509.Certificate { return r.srv.Certificate() }

// visibleCount is the queue's ApproximateNumberOfMessages.
func visibleCount(ctx context.Context, c *sqs.Client, queueURL string) (int, error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages},
	})
	if err != nil {
		return 0, fmt.Errorf("attributes of %s: %w", queueURL, err)
	}
	return strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
}
