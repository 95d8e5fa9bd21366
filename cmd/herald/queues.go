package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/heraldhq/herald/internal/localenv"
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
		outputs, err := describeOutputs(ctx, api, g.stack)
		if err != nil {
			return q, err
		}
		if q.queueURL == "" {
			q.queueURL = outputs[outputQueueURL]
		}
		if q.dlqURL == "" {
			q.dlqURL = outputs[outputDLQURL]
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
		return q, usagef("no notification queue: give --queue-url, --stack NAME or HERALD_QUEUE_URL (the local stack's %s sets it)", localenv.EnvFile)
	}
	if needDLQ && q.dlqURL == "" {
		return q, usagef("no dead-letter queue: give --dlq-url, --stack NAME or HERALD_DLQ_URL (the local stack's %s sets it)", localenv.EnvFile)
	}
	return q, nil
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
