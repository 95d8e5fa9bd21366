package processor

import (
	"errors"
	"fmt"

	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

// checkQueues reports a queue without a URL or a dead-letter URL, none at
// all, two queues of one channel, and one URL given twice.
func checkQueues(qs []redrive.Queue) error {
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
		case urls[redrive.QueueKey(q.URL)]:
			return fmt.Errorf("processor: queue %s is given twice", q.URL)
		}
		channels[q.Channel], urls[redrive.QueueKey(q.URL)] = true, true
	}
	return nil
}

// queueOfChannel returns the queue of channel c, when the processor has one.
func queueOfChannel(qs []redrive.Queue, c notification.Channel) (redrive.Queue, bool) {
	for _, q := range qs {
		if q.Channel == c {
			return q, true
		}
	}
	return redrive.Queue{}, false
}
