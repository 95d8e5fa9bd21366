package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
)

// The template's outputs that name the queues (template.yaml, Outputs).
const (
	outputQueueURL = "NotificationQueueUrl"
	outputDLQURL   = "DeadLetterQueueUrl"
)

// queues are the resolved queue URLs; either may be empty when not needed.
type queues struct {
	queueURL, dlqURL string
	// source says where they came from, for messages.
	source string
}

// stackOutputs is the part of the CloudFormation API --stack calls.
type stackOutputs interface {
	DescribeStacks(ctx context.Context, in *cloudformation.DescribeStacksInput, optFns ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
}

// resolveQueues finds the queue URLs: flags first, then --stack's outputs,
// then HERALD_QUEUE_URL / HERALD_DLQ_URL. needQueue and needDLQ name the
// ones the command cannot do without; a missing one is a usage error that
// says how to give it.
func resolveQueues(ctx context.Context, g *globals, getenv func(string) string, cfn func() (stackOutputs, error), needQueue, needDLQ bool) (queues, error) {
	q := queues{queueURL: g.queueURL, dlqURL: g.dlqURL}
	if g.stack != "" && (q.queueURL == "" || q.dlqURL == "") {
		api, err := cfn()
		if err != nil {
			return q, err
		}
		out, err := api.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(g.stack)})
		if err != nil {
			return q, fmt.Errorf("stack %s: %w", g.stack, err)
		}
		if len(out.Stacks) == 0 {
			return q, fmt.Errorf("stack %s: not found", g.stack)
		}
		for _, o := range out.Stacks[0].Outputs {
			switch aws.ToString(o.OutputKey) {
			case outputQueueURL:
				if q.queueURL == "" {
					q.queueURL = aws.ToString(o.OutputValue)
				}
			case outputDLQURL:
				if q.dlqURL == "" {
					q.dlqURL = aws.ToString(o.OutputValue)
				}
			}
		}
		if (needQueue && q.queueURL == "") || (needDLQ && q.dlqURL == "") {
			return q, fmt.Errorf("stack %s has no %s / %s outputs: is it a herald stack?", g.stack, outputQueueURL, outputDLQURL)
		}
	}
	if q.queueURL == "" {
		q.queueURL = getenv("HERALD_QUEUE_URL")
	}
	if q.dlqURL == "" {
		q.dlqURL = getenv("HERALD_DLQ_URL")
	}
	switch {
	case g.queueURL != "" || g.dlqURL != "":
		q.source = "flags"
	case g.stack != "":
		q.source = "stack " + g.stack
	default:
		q.source = "HERALD_QUEUE_URL / HERALD_DLQ_URL"
	}
	if needQueue && q.queueURL == "" {
		return q, usagef("no notification queue: give --queue-url, --stack NAME or HERALD_QUEUE_URL (the local stack's .local/herald.env sets it)")
	}
	if needDLQ && q.dlqURL == "" {
		return q, usagef("no dead-letter queue: give --dlq-url, --stack NAME or HERALD_DLQ_URL (the local stack's .local/herald.env sets it)")
	}
	return q, nil
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
