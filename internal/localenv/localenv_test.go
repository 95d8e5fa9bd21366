package localenv_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/sqstest"
	"github.com/heraldhq/herald/notification"
)

// created returns the CreateQueue requests s got, in order.
func created(t *testing.T, s *sqstest.Server) []createQueue {
	t.Helper()
	var out []createQueue
	for _, raw := range s.Requests("CreateQueue") {
		var in createQueue
		require.NoError(t, json.Unmarshal(raw, &in))
		out = append(out, in)
	}
	return out
}

type createQueue struct {
	QueueName  string
	Attributes map[string]string
}

// bounded is a context that ends in half a minute, so that a ReceiveAll
// that never stops reading fails its test instead of stalling it.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestCreateQueuesMakesThePairTheTemplateMakes: the dead-letter queue
// first (14 days' retention), then the queue with a redrive policy to it,
// the visibility timeout in seconds and 4 days' retention, both with
// herald's MaximumMessageSize; Delete removes both.
func TestCreateQueuesMakesThePairTheTemplateMakes(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	c := s.Client()
	q, err := localenv.CreateQueues(context.Background(), c, "n", 3, 90*time.Second)
	require.NoError(t, err)
	account := s.URL() + "/" + sqstest.AccountID + "/"
	arn := "arn:aws:sqs:us-east-1:" + sqstest.AccountID + ":"
	require.Equal(t, localenv.Queues{
		URL: account + "n", ARN: arn + "n",
		DLQURL: account + "n-dlq", DLQARN: arn + "n-dlq",
	}, q)
	size := fmt.Sprint(notification.SQSMaxMessageBytes)
	made := created(t, s)
	require.Len(t, made, 2)
	require.Equal(t, "n-dlq", made[0].QueueName)
	require.Equal(t, map[string]string{"MessageRetentionPeriod": "1209600", "MaximumMessageSize": size}, made[0].Attributes)
	require.Equal(t, "n", made[1].QueueName)
	attrs := made[1].Attributes
	require.JSONEq(t, `{"deadLetterTargetArn":"`+arn+`n-dlq","maxReceiveCount":"3"}`, attrs["RedrivePolicy"])
	delete(attrs, "RedrivePolicy")
	require.Equal(t, map[string]string{"VisibilityTimeout": "90", "MessageRetentionPeriod": "345600", "MaximumMessageSize": size}, attrs)

	q.Delete(context.Background(), c)
	var deleted []string
	for _, raw := range s.Requests("DeleteQueue") {
		var in struct{ QueueUrl string }
		require.NoError(t, json.Unmarshal(raw, &in))
		deleted = append(deleted, in.QueueUrl)
	}
	require.Equal(t, []string{q.URL, q.DLQURL}, deleted)
	localenv.Queues{}.Delete(context.Background(), c)
	require.Len(t, s.Requests("DeleteQueue"), 2, "no URL, no call")
}

// TestCreateFIFOQueuesMakesAFIFOPair: both names end in .fifo, both
// queues are FIFO without content-based deduplication.
func TestCreateFIFOQueuesMakesAFIFOPair(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	q, err := localenv.CreateFIFOQueues(context.Background(), s.Client(), "f", 5, 30*time.Second)
	require.NoError(t, err)
	arn := "arn:aws:sqs:us-east-1:" + sqstest.AccountID + ":"
	require.Equal(t, s.URL()+"/"+sqstest.AccountID+"/f.fifo", q.URL)
	require.Equal(t, arn+"f-dlq.fifo", q.DLQARN)
	size := fmt.Sprint(notification.SQSMaxMessageBytes)
	made := created(t, s)
	require.Len(t, made, 2)
	require.Equal(t, "f-dlq.fifo", made[0].QueueName)
	require.Equal(t, map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "false", "MessageRetentionPeriod": "1209600", "MaximumMessageSize": size}, made[0].Attributes)
	require.Equal(t, "f.fifo", made[1].QueueName)
	attrs := made[1].Attributes
	require.JSONEq(t, `{"deadLetterTargetArn":"`+arn+`f-dlq.fifo","maxReceiveCount":"5"}`, attrs["RedrivePolicy"])
	delete(attrs, "RedrivePolicy")
	require.Equal(t, map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "false", "VisibilityTimeout": "30", "MessageRetentionPeriod": "345600", "MaximumMessageSize": size}, attrs)
}

// TestCreateQueuesSaysWhichCallFailed: a refused CreateQueue or
// GetQueueAttributes names the queue; the queue is not created after a
// failed dead-letter queue.
func TestCreateQueuesSaysWhichCallFailed(t *testing.T) {
	t.Parallel()
	for _, create := range []func(context.Context, *sqs.Client, string, int, time.Duration) (localenv.Queues, error){localenv.CreateQueues, localenv.CreateFIFOQueues} {
		s := sqstest.New(t)
		c := sqs.NewFromConfig(awstest.Config(s.URL()), func(o *sqs.Options) { o.RetryMaxAttempts = 1 })
		s.FailAction("CreateQueue")
		_, err := create(context.Background(), c, "n", 3, time.Minute)
		require.ErrorContains(t, err, "create queue n-dlq")
		require.ErrorContains(t, err, "InternalError")
		require.Len(t, s.Requests("CreateQueue"), 1, "nothing after the dead-letter queue")

		s = sqstest.New(t)
		c = sqs.NewFromConfig(awstest.Config(s.URL()), func(o *sqs.Options) { o.RetryMaxAttempts = 1 })
		s.FailAction("GetQueueAttributes")
		_, err = create(context.Background(), c, "n", 3, time.Minute)
		require.ErrorContains(t, err, "queue n-dlq")
		require.ErrorContains(t, err, " arn: ")
	}
}

// TestMaxReceiveCountReadsTheRedrivePolicy: a count written as a number or
// a string (as CreateQueues writes it); a policy that is not JSON, a count
// that is not an integer, and an unknown queue are errors naming the queue.
func TestMaxReceiveCountReadsTheRedrivePolicy(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	c := s.Client()
	for policy, want := range map[string]int{
		`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:1:d","maxReceiveCount":4}`:   4,
		`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:1:d","maxReceiveCount":"7"}`: 7,
	} {
		u := s.AddQueue(fmt.Sprintf("%s/1/q%d", s.URL(), want), map[string]string{"RedrivePolicy": policy})
		n, err := localenv.MaxReceiveCount(context.Background(), c, u)
		require.NoError(t, err)
		require.Equal(t, want, n)
	}
	for i, policy := range []string{`not json`, `{"maxReceiveCount":1.5}`, `{}`} {
		u := s.AddQueue(fmt.Sprintf("%s/1/bad%d", s.URL(), i), map[string]string{"RedrivePolicy": policy})
		_, err := localenv.MaxReceiveCount(context.Background(), c, u)
		require.ErrorContains(t, err, "redrive policy of "+u, policy)
	}
	_, err := localenv.MaxReceiveCount(context.Background(), c, s.URL()+"/1/absent")
	require.ErrorContains(t, err, "redrive policy of "+s.URL()+"/1/absent")
}

// TestReceiveAllReadsEachMessageOnce: every message of a queue, with its
// string attributes, each once, in as few receives as it takes; an empty
// queue takes one receive.
func TestReceiveAllReadsEachMessageOnce(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	c := s.Client()
	u := s.AddQueue(s.URL()+"/1/dlq", nil)
	for i := range 23 {
		s.Put(u, fmt.Sprintf("body-%d", i), time.Now(), map[string]sqstest.MessageAttribute{
			"reason": {DataType: "String", StringValue: aws.String(fmt.Sprintf("r%d", i))},
		})
	}
	got, err := localenv.ReceiveAll(bounded(t), c, u, time.Minute)
	require.NoError(t, err)
	require.Len(t, got, 23)
	bodies := map[string]bool{}
	for _, d := range got {
		require.NotEmpty(t, d.MessageID)
		bodies[d.Body] = true
		require.Equal(t, "r"+strings.TrimPrefix(d.Body, "body-"), d.Attributes["reason"])
	}
	require.Len(t, bodies, 23)
	require.Len(t, s.Requests("ReceiveMessage"), 4, "3 full or partial receives, then an empty one")

	empty := s.AddQueue(s.URL()+"/1/empty", nil)
	got, err = localenv.ReceiveAll(bounded(t), c, empty, time.Minute)
	require.NoError(t, err)
	require.Empty(t, got)
	require.Len(t, s.Requests("ReceiveMessage"), 5, "an empty queue: one receive")
}

// TestReceiveAllGivesUpOnMessagesItCannotGet: messages the queue reports
// visible but does not hand out (a FIFO group held by one in flight), or
// hands out again (hidden for less than a second), end the reading after
// MaxEmptyReceives receives that bring nothing new, each message once.
// (Before that rule a queue handing its messages out again kept
// ReceiveAll reading for ever.)
func TestReceiveAllGivesUpOnMessagesItCannotGet(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	c := s.Client()
	fifo := s.AddQueue(s.URL()+"/1/dlq.fifo", nil)
	s.PutInGroup(fifo, "g", "first", time.Now(), nil)
	s.PutInGroup(fifo, "g", "second", time.Now(), nil)
	_, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(fifo), VisibilityTimeout: 60})
	require.NoError(t, err, "the first in flight holds the group")
	got, err := localenv.ReceiveAll(bounded(t), c, fifo, time.Minute)
	require.NoError(t, err)
	require.Empty(t, got)
	require.Len(t, s.Requests("ReceiveMessage"), 1+localenv.MaxEmptyReceives, "ours, then ReceiveAll's empty ones")

	again := s.AddQueue(s.URL()+"/1/again", map[string]string{"VisibilityTimeout": "0"}) // the SDK does not send a hide of 0
	for i := range 3 {
		s.Put(again, fmt.Sprint(i), time.Now(), nil)
	}
	before := len(s.Requests("ReceiveMessage"))
	got, err = localenv.ReceiveAll(bounded(t), c, again, 0)
	require.NoError(t, err)
	require.Len(t, got, 3, "each once")
	require.Len(t, s.Requests("ReceiveMessage"), before+1+localenv.MaxEmptyReceives, "one with the messages, then the same again")
}

// TestReceiveAllSaysWhatFailed: a failed receive or a failed count of the
// visible messages is an error naming the queue, with what was read.
func TestReceiveAllSaysWhatFailed(t *testing.T) {
	t.Parallel()
	s := sqstest.New(t)
	c := s.Client()
	_, err := localenv.ReceiveAll(bounded(t), c, s.URL()+"/1/absent", time.Minute)
	require.ErrorContains(t, err, "receive from "+s.URL()+"/1/absent")

	u := s.AddQueue(s.URL()+"/1/q", nil)
	s.Put(u, "one", time.Now(), nil)
	s.FailAction("GetQueueAttributes")
	got, err := localenv.ReceiveAll(bounded(t), c, u, time.Minute)
	require.ErrorContains(t, err, "attributes of "+u)
	require.Len(t, got, 1, "what was read comes back with the error")
}

// TestReceiverRecordsAndAnswers: each request is recorded with its path,
// headers, body (up to 1 MiB), time and attempt number per path, and
// answered with Respond's status and headers; a client that gave up
// before a delayed answer marks it Late.
func TestReceiverRecordsAndAnswers(t *testing.T) {
	t.Parallel()
	r := localenv.NewReceiver(func(path string, attempt int) int {
		if path == "/a" && attempt == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	t.Cleanup(r.Close)
	require.True(t, strings.HasPrefix(r.URL(), "https://127.0.0.1:"), r.URL())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: r.TLSConfig()}}
	send := func(path, body string) int {
		req, err := http.NewRequest(http.MethodPost, r.URL()+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Webhook-Id", "msg_1")
		resp, err := client.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	before := time.Now()
	require.Equal(t, http.StatusServiceUnavailable, send("/a", "one"))
	require.Equal(t, http.StatusNoContent, send("/a", "two"))
	require.Equal(t, http.StatusNoContent, send("/b", strings.Repeat("x", 1<<20+10)))
	got := r.Requests()
	require.Len(t, got, 3)
	require.Equal(t, []int{1, 2, 1}, []int{got[0].Attempt, got[1].Attempt, got[2].Attempt})
	require.Equal(t, []int{503, 204, 204}, []int{got[0].Status, got[1].Status, got[2].Status})
	require.Equal(t, "/a", got[0].Path)
	require.Equal(t, "two", string(got[1].Body))
	require.Len(t, got[2].Body, 1<<20, "the body up to 1 MiB")
	require.Equal(t, "msg_1", got[0].Header.Get("Webhook-Id"))
	require.False(t, got[0].At.Before(before))
	require.False(t, got[0].Late)

	pool := x509.NewCertPool()
	pool.AddCert(r.Certificate())
	_, err := r.Certificate().Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"})
	require.NoError(t, err, "the certificate is 127.0.0.1's")
}

func TestReceiverWithHeadersAndDelays(t *testing.T) {
	t.Parallel()
	r := localenv.NewReceiverWith(func(path string, attempt int) localenv.Response {
		if path == "/slow" {
			return localenv.Response{Status: http.StatusOK, Delay: 20 * time.Second}
		}
		return localenv.Response{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"7"}}, Delay: 50 * time.Millisecond}
	})
	t.Cleanup(r.Close)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: r.TLSConfig()}}
	t0 := time.Now()
	resp, err := client.Post(r.URL()+"/limited", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.Equal(t, "7", resp.Header.Get("Retry-After"))
	require.GreaterOrEqual(t, time.Since(t0), 50*time.Millisecond, "answered after its delay")

	hasty := &http.Client{Timeout: 200 * time.Millisecond, Transport: &http.Transport{TLSClientConfig: r.TLSConfig()}}
	t0 = time.Now()
	_, err = hasty.Post(r.URL()+"/slow", "application/json", strings.NewReader(`{}`))
	require.Error(t, err)
	require.Eventually(t, func() bool { return len(r.Requests()) == 2 && r.Requests()[1].Late }, 5*time.Second, 10*time.Millisecond,
		"the client had gone when the receiver answered")
	require.Less(t, time.Since(t0), 15*time.Second, "the receiver stops waiting when the client goes")
	require.False(t, r.Requests()[0].Late)
}

// TestSentEmailsReadsTheEmulatorsStore: GET /store's emails, decoded; a
// status other than 200, a body that is not JSON and an endpoint that does
// not answer are errors.
func TestSentEmailsReadsTheEmulatorsStore(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok/store":
			_, _ = io.WriteString(w, `{"emails":[{"messageId":"m1","from":"a@example.com","replyTo":["r@example.com"],
				"destination":{"to":["t@example.com"],"cc":["c@example.com"],"bcc":["b@example.com"]},
				"subject":"s","body":{"text":"hi","html":"<p>hi</p>"},"headers":[{"name":"X-A","value":"1"}],"at":1700000000}]}`)
		case "/bad/store":
			_, _ = io.WriteString(w, `{"emails":`)
		default:
			http.Error(w, "no", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	got, err := localenv.SentEmails(context.Background(), srv.URL+"/ok")
	require.NoError(t, err)
	require.Len(t, got, 1)
	e := got[0]
	require.Equal(t, "m1", e.MessageID)
	require.Equal(t, "a@example.com", e.From)
	require.Equal(t, []string{"r@example.com"}, e.ReplyTo)
	require.Equal(t, []string{"t@example.com"}, e.Destination.To)
	require.Equal(t, []string{"c@example.com"}, e.Destination.Cc)
	require.Equal(t, []string{"b@example.com"}, e.Destination.Bcc)
	require.Equal(t, "s", e.Subject)
	require.Equal(t, "hi", e.Body.Text)
	require.Equal(t, "<p>hi</p>", e.Body.HTML)
	require.Equal(t, "X-A", e.Headers[0].Name)
	require.Equal(t, "1", e.Headers[0].Value)
	require.Equal(t, int64(1700000000), e.At)

	_, err = localenv.SentEmails(context.Background(), srv.URL+"/bad")
	require.ErrorContains(t, err, "read SES emulator store: unexpected EOF")
	_, err = localenv.SentEmails(context.Background(), srv.URL+"/gone")
	require.EqualError(t, err, "read SES emulator store: 500 Internal Server Error")
	_, err = localenv.SentEmails(context.Background(), "http://127.0.0.1:1")
	require.ErrorContains(t, err, "read SES emulator store: ")
	_, err = localenv.SentEmails(context.Background(), "http://127.0.0.1:1/\x7f")
	require.ErrorContains(t, err, "invalid control character")
}

// TestSourceEnvFileExportsTheEnvFile: the shell line exports EnvFile's
// variables to the commands run after it.
func TestSourceEnvFileExportsTheEnvFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(localenv.EnvFile)), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, localenv.EnvFile), []byte("AWS_REGION=eu-west-3\n"), 0o600))
	cmd := exec.Command("sh", "-c", localenv.SourceEnvFile+"; sh -c 'echo $AWS_REGION'")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "eu-west-3\n", string(out))
}
