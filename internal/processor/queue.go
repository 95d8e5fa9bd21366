package processor

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/heraldhq/herald/notification"
)

// Queue is one queue the deliver function's records come from, with its
// dead-letter queue. herald gives each channel a queue of its own (its own
// event source mapping, so that a channel that cannot deliver pauses alone;
// docs/reliability.md); a queue with no Channel serves every channel, as
// the single queue of herald before channel queues did.
type Queue struct {
	// Channel is the channel producers send to this queue; "" for a queue
	// of every channel.
	Channel notification.Channel
	// URL is the queue's URL. Required.
	URL string
	// DeadLetterURL is the URL of its dead-letter queue: where herald
	// moves what it cannot deliver, and the redrive policy's target.
	// Required.
	DeadLetterURL string
}

// checkQueues reports a queue without a URL or a dead-letter URL, none at
// all, two queues of one channel, and one URL given twice.
func checkQueues(qs []Queue) error {
	if len(qs) == 0 {
		return errors.New("processor: no queue: QueueURL or Queues is required")
	}
	channels := map[notification.Channel]bool{}
	urls := map[string]bool{}
	for _, q := range qs {
		switch {
		case q.URL == "":
			return fmt.Errorf("processor: the queue of channel %q has no URL", q.Channel)
		case q.DeadLetterURL == "":
			return fmt.Errorf("processor: queue %s has no dead-letter queue URL", q.URL)
		case channels[q.Channel]:
			return fmt.Errorf("processor: two queues of channel %q", q.Channel)
		case urls[QueueKey(q.URL)]:
			return fmt.Errorf("processor: queue %s is given twice", q.URL)
		}
		channels[q.Channel], urls[QueueKey(q.URL)] = true, true
	}
	return nil
}

// QueueKey is what names a queue within a Region in both its URL
// (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME, or an emulator's
// http://HOST:PORT/ACCOUNT/NAME) and its ARN (arn:PARTITION:sqs:REGION:
// ACCOUNT:NAME): "ACCOUNT/NAME". It returns "" for anything else. The
// deliver function finds a record's queue by its eventSourceARN with it.
func QueueKey(urlOrARN string) string {
	if rest, ok := strings.CutPrefix(urlOrARN, "arn:"); ok {
		parts := strings.Split(rest, ":")
		if len(parts) != 5 || parts[1] != "sqs" || parts[3] == "" || parts[4] == "" {
			return ""
		}
		return parts[3] + "/" + parts[4]
	}
	u, err := url.Parse(urlOrARN)
	if err != nil || u.Host == "" {
		return ""
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return ""
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1]
}

// FindQueue returns the queue of qs whose URL names the same queue as
// sourceARN (a record's eventSourceARN; [QueueKey]). With a single queue
// that queue is returned whatever sourceARN is: its records can come from
// no other. It returns false when no queue matches.
func FindQueue(qs []Queue, sourceARN string) (Queue, bool) {
	if len(qs) == 1 {
		return qs[0], true
	}
	key := QueueKey(sourceARN)
	for _, q := range qs {
		if key != "" && QueueKey(q.URL) == key {
			return q, true
		}
	}
	return Queue{}, false
}

// queueOfChannel returns the queue of channel c, when the processor has one.
func queueOfChannel(qs []Queue, c notification.Channel) (Queue, bool) {
	for _, q := range qs {
		if q.Channel == c {
			return q, true
		}
	}
	return Queue{}, false
}
