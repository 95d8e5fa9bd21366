package sqstest

import (
	"encoding/json"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// AccountID is the account in the URL and ARN of a queue made by
// CreateQueue (and in AddQueue's ARNs).
const AccountID = "123456789012"

// DeletedQueueNameReuse is how long after a DeleteQueue SQS refuses a new
// queue of the same name (API Reference, CreateQueue: "you must wait at
// least 60 seconds before creating a queue with the same name").
const DeletedQueueNameReuse = 60 * time.Second

// queueName is a queue name SQS accepts: 1–80 alphanumeric characters,
// hyphens or underscores, a FIFO queue's ending in ".fifo" besides.
var queueName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// attrRange is the allowed range of CreateQueue's numeric attributes (API
// Reference, CreateQueue).
var attrRange = map[string][2]int{
	"DelaySeconds":                  {0, 900},
	"MaximumMessageSize":            {1024, DefaultMaximumMessageSize},
	"MessageRetentionPeriod":        {60, 1209600},
	"ReceiveMessageWaitTimeSeconds": {0, MaxWaitTimeSeconds},
	"VisibilityTimeout":             {0, MaxVisibilityTimeout},
	"KmsDataKeyReusePeriodSeconds":  {60, 86400},
}

// otherAttrs are CreateQueue's attributes that are not numbers.
var otherAttrs = map[string]bool{
	"Policy": true, "RedrivePolicy": true, "RedriveAllowPolicy": true, "KmsMasterKeyId": true, "SqsManagedSseEnabled": true,
	"FifoQueue": true, "ContentBasedDeduplication": true, "DeduplicationScope": true, "FifoThroughputLimit": true,
}

// createQueue answers CreateQueue: a queue at the server's URL, path
// /AccountID/name; the URL of an existing queue of that name when its
// attributes are the same (QueueAlreadyExists when not), as SQS answers.
func (s *Server) createQueue(body []byte) (any, *apiError) {
	var in struct {
		QueueName  string
		Attributes map[string]string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, invalidParameter("malformed request: %v", err)
	}
	fifo := in.Attributes["FifoQueue"] == "true"
	base, isFIFOName := strings.CutSuffix(in.QueueName, ".fifo")
	if fifo != isFIFOName || !queueName.MatchString(base) || len(in.QueueName) > 80 {
		return nil, invalidParameter("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length; a FIFO queue's name ends in .fifo")
	}
	for name, v := range in.Attributes {
		if r, ok := attrRange[name]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < r[0] || n > r[1] {
				return nil, senderFault("InvalidAttributeValue", "InvalidAttributeValue", "Invalid value for the parameter %s.", name)
			}
		} else if !otherAttrs[name] {
			return nil, senderFault("InvalidAttributeName", "InvalidAttributeName", "Unknown Attribute %s.", name)
		}
	}
	if p, ok := in.Attributes["RedrivePolicy"]; ok {
		if aerr := s.checkRedrive(p); aerr != nil {
			return nil, aerr
		}
	}
	url := s.srv.URL + "/" + AccountID + "/" + in.QueueName
	if q := s.queues[url]; q != nil {
		for k, v := range in.Attributes {
			if q.attrs[k] != v {
				return nil, senderFault("QueueNameExists", "QueueAlreadyExists", "A queue already exists with the same name and a different value for attribute %s", k)
			}
		}
		return map[string]string{"QueueUrl": url}, nil
	}
	if at, ok := s.deleted[in.QueueName]; ok && s.now().Sub(at) < DeletedQueueNameReuse {
		return nil, senderFault("QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently",
			"You must wait 60 seconds after deleting a queue before you can create another with the same name.")
	}
	q := &queue{url: url, attrs: map[string]string{
		"QueueArn":           "arn:aws:sqs:us-east-1:" + AccountID + ":" + in.QueueName,
		"VisibilityTimeout":  strconv.Itoa(defaultVisibilityTimeout),
		"MaximumMessageSize": strconv.Itoa(DefaultMaximumMessageSize),
	}}
	maps.Copy(q.attrs, in.Attributes)
	s.queues[url] = q
	return map[string]string{"QueueUrl": url}, nil
}

// checkRedrive rejects a redrive policy whose dead-letter target is not a
// queue of the server or whose maxReceiveCount is outside 1–1000.
func (s *Server) checkRedrive(policy string) *apiError {
	var p struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     any    `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(policy), &p); err != nil {
		return invalidParameter("Value %s for parameter RedrivePolicy is invalid. Reason: Redrive policy is not a valid JSON map.", policy)
	}
	n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(jsonText(p.MaxReceiveCount)), `"`))
	if err != nil || n < 1 || n > 1000 {
		return invalidParameter("Value %s for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: %v, valid values are from 1 to 1000 both inclusive.", policy, p.MaxReceiveCount)
	}
	for _, q := range s.queues {
		if q.attrs["QueueArn"] == p.DeadLetterTargetArn {
			return nil
		}
	}
	return invalidParameter("Value %s for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.", policy)
}

// jsonText is v, a decoded JSON string or number, as text.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// deleteQueue answers DeleteQueue: the queue and its messages go at once
// (SQS takes up to 60 s; its name stays taken for DeletedQueueNameReuse).
func (s *Server) deleteQueue(q *queue) (any, *apiError) {
	delete(s.queues, q.url)
	s.deleted[q.url[strings.LastIndex(q.url, "/")+1:]] = s.now()
	return struct{}{}, nil
}
