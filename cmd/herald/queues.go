package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// The template's outputs that name the queue of every channel
// (template.yaml, Outputs; kept while SharedQueue is Keep). The channels'
// queues are producer.QueueOutput and producer.DeadLetterQueueOutput.
const (
	outputQueueURL = "NotificationQueueUrl"
	outputDLQURL   = "DeadLetterQueueUrl"
)

// queuePair is one queue and its dead-letter queue; either may be empty
// when not known. channel "" is a queue of every channel.
type queuePair struct {
	channel  notification.Channel
	url, dlq string
}

// name is how messages call the pair's queue.
func (p queuePair) name() string {
	if p.channel == "" {
		return "the queue of every channel"
	}
	return "the " + string(p.channel) + " queue"
}

// queues are the resolved queues: each channel's, in notification.Channels
// order, then the queue of every channel.
type queues struct {
	pairs []queuePair
	// source says where they came from, for messages.
	source string
}

// producer returns the producer's queues: each channel's URL, and the
// queue of every channel's.
func (q queues) producer() (map[notification.Channel]string, string) {
	byChannel := map[notification.Channel]string{}
	shared := ""
	for _, p := range q.pairs {
		switch {
		case p.url == "":
		case p.channel == "":
			shared = p.url
		default:
			byChannel[p.channel] = p.url
		}
	}
	return byChannel, shared
}

// withDLQ returns the pairs that have a dead-letter queue.
func (q queues) withDLQ() []queuePair {
	var out []queuePair
	for _, p := range q.pairs {
		if p.dlq != "" {
			out = append(out, p)
		}
	}
	return out
}

// stackOutputs is the part of the CloudFormation API --stack calls.
type stackOutputs interface {
	DescribeStacks(ctx context.Context, in *cloudformation.DescribeStacksInput, optFns ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
}

// resolveQueues finds the queues: --queue-url / --dlq-url (one queue, of
// every channel) first, else --stack's outputs (each channel's queue and
// dead-letter queue, and the queue of every channel while the stack keeps
// it), else the environment (HERALD_<CHANNEL>_QUEUE_URL,
// HERALD_<CHANNEL>_DLQ_URL, HERALD_QUEUE_URL, HERALD_DLQ_URL, as the
// functions read them). needQueue and needDLQ ask for at least one queue
// and one dead-letter queue; a missing one is a usage error that says how
// to give it.
func resolveQueues(ctx context.Context, g *globals, getenv func(string) string, cfn func() (stackOutputs, error), needQueue, needDLQ bool) (queues, error) {
	var q queues
	switch {
	case g.queueURL != "" || g.dlqURL != "":
		q.source = "flags"
		p := queuePair{url: g.queueURL, dlq: g.dlqURL}
		if p.url == "" {
			p.url = getenv(config.EnvSharedQueueURL)
		}
		if p.dlq == "" {
			p.dlq = getenv(config.EnvDeadLetterQueueURL)
		}
		q.pairs = []queuePair{p}
	case g.stack != "":
		q.source = "stack " + g.stack
		api, err := cfn()
		if err != nil {
			return q, err
		}
		outputs, err := describeOutputs(ctx, api, g.stack)
		if err != nil {
			return q, err
		}
		q.pairs = pairs(func(c notification.Channel) (string, string) {
			return outputs[producer.QueueOutput(c)], outputs[producer.DeadLetterQueueOutput(c)]
		}, outputs[outputQueueURL], outputs[outputDLQURL])
		if len(q.pairs) == 0 {
			return q, fmt.Errorf("stack %s has no %s / %s outputs (nor %s / %s): is it a herald stack?", g.stack,
				producer.QueueOutput(notification.ChannelEmail), producer.DeadLetterQueueOutput(notification.ChannelEmail), outputQueueURL, outputDLQURL)
		}
	default:
		q.source = "HERALD_<CHANNEL>_QUEUE_URL / HERALD_<CHANNEL>_DLQ_URL / HERALD_QUEUE_URL / HERALD_DLQ_URL"
		q.pairs = pairs(func(c notification.Channel) (string, string) {
			return getenv(producer.QueueURLEnv(c)), getenv(producer.DeadLetterQueueURLEnv(c))
		}, getenv(config.EnvSharedQueueURL), getenv(config.EnvDeadLetterQueueURL))
	}
	hasQueue, hasDLQ := false, false
	for _, p := range q.pairs {
		hasQueue = hasQueue || p.url != ""
		hasDLQ = hasDLQ || p.dlq != ""
	}
	if needQueue && !hasQueue {
		return q, usagef("no notification queue: give --stack NAME, HERALD_<CHANNEL>_QUEUE_URL (such as HERALD_EMAIL_QUEUE_URL), HERALD_QUEUE_URL or --queue-url (the local stack's %s sets them)", localenv.EnvFile)
	}
	if needDLQ && !hasDLQ {
		return q, usagef("no dead-letter queue: give --stack NAME, HERALD_<CHANNEL>_DLQ_URL (such as HERALD_EMAIL_DLQ_URL), HERALD_DLQ_URL or --dlq-url (the local stack's %s sets them)", localenv.EnvFile)
	}
	return q, nil
}

// pairs lists each channel's pair that of gives, then the queue of every
// channel's, leaving out pairs with neither URL.
func pairs(of func(notification.Channel) (string, string), sharedURL, sharedDLQ string) []queuePair {
	var out []queuePair
	for _, c := range notification.Channels {
		if url, dlq := of(c); url != "" || dlq != "" {
			out = append(out, queuePair{channel: c, url: url, dlq: dlq})
		}
	}
	if sharedURL != "" || sharedDLQ != "" {
		out = append(out, queuePair{url: sharedURL, dlq: sharedDLQ})
	}
	return out
}

// describeOutputs returns the outputs of stack by key (CloudFormation
// DescribeStacks). It fails when the stack does not exist.
func describeOutputs(ctx context.Context, api stackOutputs, stack string) (map[string]string, error) {
	out, err := api.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
	if err != nil {
		return nil, fmt.Errorf("stack %s: %w", stack, err)
	}
	if len(out.Stacks) == 0 {
		return nil, fmt.Errorf("stack %s: not found", stack)
	}
	outputs := make(map[string]string, len(out.Stacks[0].Outputs))
	for _, o := range out.Stacks[0].Outputs {
		outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return outputs, nil
}

// stackOutputs reads --stack's outputs with the real CloudFormation client.
func (g *globals) stackOutputs(ctx context.Context) (map[string]string, error) {
	cfg, err := g.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	return describeOutputs(ctx, cloudformation.NewFromConfig(cfg), g.stack)
}

// resolve is resolveQueues with the real CloudFormation client.
func (g *globals) resolve(ctx context.Context, e *env, needQueue, needDLQ bool) (queues, error) {
	return resolveQueues(ctx, g, e.getenv, func() (stackOutputs, error) {
		cfg, err := g.awsConfig(ctx)
		if err != nil {
			return nil, err
		}
		return cloudformation.NewFromConfig(cfg), nil
	}, needQueue, needDLQ)
}

// sameQueue reports whether two queue URLs name one queue.
func sameQueue(a, b string) bool { return strings.TrimRight(a, "/") == strings.TrimRight(b, "/") }
