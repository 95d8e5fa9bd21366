package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/processor"
)

func TestCheckQueues(t *testing.T) {
	t.Parallel()
	const (
		mainURL = "https://sqs.us-east-1.amazonaws.com/123456789012/herald"
		dlqURL  = "https://sqs.us-east-1.amazonaws.com/123456789012/herald-dlq"
		dlqARN  = "arn:aws:sqs:us-east-1:123456789012:herald-dlq"
	)
	good := func() (map[string]string, map[string]string) {
		return map[string]string{
				"VisibilityTimeout":      "360",
				"MessageRetentionPeriod": "345600",
				"RedrivePolicy":          `{"deadLetterTargetArn":"` + dlqARN + `","maxReceiveCount":13}`,
				"QueueArn":               "arn:aws:sqs:us-east-1:123456789012:herald",
				"MaximumMessageSize":     "1048576",
			}, map[string]string{
				"VisibilityTimeout":      "30",
				"MessageRetentionPeriod": "1209600",
				"QueueArn":               dlqARN,
				"MaximumMessageSize":     "1048576",
			}
	}
	settings := processor.QueueSettings{
		QueueURL: mainURL, DeadLetterQueueURL: dlqURL, MaxReceiveCount: 13,
		Backoff:         backoff.Policy{Base: time.Minute, Cap: 6 * time.Hour}.WithDefaults(),
		FunctionTimeout: time.Minute,
	}
	for name, tc := range map[string]struct {
		mutate func(m, d map[string]string, s *processor.QueueSettings)
		want   []string // substrings of the error; none: no error
	}{
		"defaults agree": {mutate: func(map[string]string, map[string]string, *processor.QueueSettings) {}},
		"visibility under 6x": {
			mutate: func(m, _ map[string]string, _ *processor.QueueSettings) { m["VisibilityTimeout"] = "300" },
			want:   []string{"VisibilityTimeout 5m0s", "function timeout 1m0s", "= 6m0s"},
		},
		"visibility under 6x plus the batching window": {
			mutate: func(m, _ map[string]string, s *processor.QueueSettings) {
				m["VisibilityTimeout"] = "389"
				s.BatchingWindow = 30 * time.Second
			},
			want: []string{"VisibilityTimeout 6m29s", "batching window 30s", "= 6m30s"},
		},
		"function timeout unknown: no visibility check, whatever the batching window": {
			mutate: func(m, _ map[string]string, s *processor.QueueSettings) {
				m["VisibilityTimeout"] = "10"
				s.FunctionTimeout, s.BatchingWindow = 0, 30*time.Second
			},
		},
		"visibility at 6x plus the batching window": {
			mutate: func(m, _ map[string]string, s *processor.QueueSettings) {
				m["VisibilityTimeout"] = "390"
				s.BatchingWindow = 30 * time.Second
			},
		},
		"visibility at 6x plus the largest batching window": {
			mutate: func(m, _ map[string]string, s *processor.QueueSettings) {
				m["VisibilityTimeout"] = "420" // the template's mapping for 60 s
				s.BatchingWindow = time.Minute
			},
		},
		"dead-letter queue smaller than 1 MiB": {
			mutate: func(_, d map[string]string, _ *processor.QueueSettings) { d["MaximumMessageSize"] = "1048575" },
			want:   []string{"dead-letter queue MaximumMessageSize 1048575 is less than the queue's MaximumMessageSize 1048576"},
		},
		"both queues at the old 256 KiB: equal sizes work": {
			mutate: func(m, d map[string]string, _ *processor.QueueSettings) {
				m["MaximumMessageSize"], d["MaximumMessageSize"] = "262144", "262144"
			},
		},
		"both queues at the smallest size SQS allows": {
			mutate: func(m, d map[string]string, _ *processor.QueueSettings) {
				m["MaximumMessageSize"], d["MaximumMessageSize"] = "1024", "1024"
			},
		},
		"dead-letter queue one byte smaller than the queue": {
			mutate: func(m, d map[string]string, _ *processor.QueueSettings) {
				m["MaximumMessageSize"], d["MaximumMessageSize"] = "262144", "262143"
			},
			want: []string{"dead-letter queue MaximumMessageSize 262143 is less than the queue's MaximumMessageSize 262144"},
		},
		"main queue's size not reported: judged as SQS's largest": {
			mutate: func(m, d map[string]string, _ *processor.QueueSettings) {
				m["MaximumMessageSize"], d["MaximumMessageSize"] = "", "262144"
			},
			want: []string{"dead-letter queue MaximumMessageSize 262144 is less than the queue's MaximumMessageSize 1048576"},
		},
		"main queue's size 0: judged as SQS's largest": {
			mutate: func(m, d map[string]string, _ *processor.QueueSettings) {
				m["MaximumMessageSize"], d["MaximumMessageSize"] = "0", "262144"
			},
			want: []string{"dead-letter queue MaximumMessageSize 262144 is less than the queue's MaximumMessageSize 1048576"},
		},
		"dead-letter queue's size not reported: not judged": {
			mutate: func(m, d map[string]string, _ *processor.QueueSettings) {
				m["MaximumMessageSize"], d["MaximumMessageSize"] = "1048576", ""
			},
		},
		"smaller main queue, 1 MiB dead-letter queue": {
			mutate: func(m, _ map[string]string, _ *processor.QueueSettings) { m["MaximumMessageSize"] = "262144" },
		},
		"visibility unchecked without a function timeout": {
			mutate: func(m, _ map[string]string, s *processor.QueueSettings) {
				m["VisibilityTimeout"] = "30"
				s.FunctionTimeout = 0
			},
		},
		"maxReceiveCount differs": {
			mutate: func(_, _ map[string]string, s *processor.QueueSettings) { s.MaxReceiveCount = 5 },
			want:   []string{"maxReceiveCount 13", "MaxReceiveCount 5"},
		},
		"retry schedule outlives the queue": {
			mutate: func(m, _ map[string]string, _ *processor.QueueSettings) { m["MessageRetentionPeriod"] = "86400" },
			want:   []string{"retry schedule of", "Backoff.Base 1m0s", "MessageRetentionPeriod 24h0m0s"},
		},
		"retry schedule exactly the queue's retention": {
			// Total(13) of 1 min doubling to 6 h is 26 h 31 min: the last
			// attempt would fall on the moment SQS deletes the message.
			mutate: func(m, _ map[string]string, _ *processor.QueueSettings) { m["MessageRetentionPeriod"] = "95460" },
			want:   []string{"retry schedule of 26h31m0s", "MessageRetentionPeriod 26h31m0s"},
		},
		"retry schedule a second inside the queue's retention": {
			mutate: func(m, _ map[string]string, _ *processor.QueueSettings) { m["MessageRetentionPeriod"] = "95461" },
		},
		"dead-letter queue keeps less": {
			mutate: func(_, d map[string]string, _ *processor.QueueSettings) { d["MessageRetentionPeriod"] = "345600" },
			want:   []string{"dead-letter queue MessageRetentionPeriod 96h0m0s", "queue's MessageRetentionPeriod 96h0m0s"},
		},
		"no redrive policy": {
			mutate: func(m, _ map[string]string, _ *processor.QueueSettings) { delete(m, "RedrivePolicy") },
			want:   []string{"no RedrivePolicy"},
		},
		"redrive to another queue": {
			mutate: func(_, d map[string]string, _ *processor.QueueSettings) {
				d["QueueArn"] = "arn:aws:sqs:us-east-1:123456789012:other"
			},
			want: []string{"deadLetterTargetArn " + dlqARN, "DeadLetterQueueURL"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wire, client := newSQSWire(t)
			m, d := good()
			s := settings
			tc.mutate(m, d, &s)
			wire.AddQueue(mainURL, m)
			wire.AddQueue(dlqURL, d)
			err := processor.CheckQueues(context.Background(), client, s)
			if len(tc.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}

	t.Run("FIFO and standard mixed", func(t *testing.T) {
		t.Parallel()
		wire, client := newSQSWire(t)
		m, d := good()
		wire.AddQueue(mainURL+".fifo", m)
		wire.AddQueue(dlqURL, d)
		s := settings
		s.QueueURL = mainURL + ".fifo"
		require.ErrorContains(t, processor.CheckQueues(context.Background(), client, s), "both be FIFO")
	})
	t.Run("missing queue", func(t *testing.T) {
		t.Parallel()
		_, client := newSQSWire(t)
		require.ErrorContains(t, processor.CheckQueues(context.Background(), client, settings), "read attributes of queue "+mainURL)
	})
}
